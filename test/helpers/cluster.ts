// What the cluster tests share: whether nats-server is here, a nats-server a test configures itself, and
// the cluster of the tests whose nodes compare their reading of the log (test/cluster/log-*.test.ts,
// hand-over-killed.test.ts): one nats-server and three nodes, a, b and c, each with its test faults.
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { startNatsServers } from '../../src/cluster/nats-servers.ts';
import type { NatsServer } from '../../src/cluster/nats-servers.ts';
import { startService, tempDir } from './service.ts';
import type { RunningService } from './service.ts';

/** Without nats-server, cluster tests are skipped; CI installs it, so there its absence is an error. */
export const natsMissing = spawnSync('nats-server', ['--version']).error !== undefined;
if (natsMissing && process.env.CI === 'true') throw new Error('nats-server is not installed (apt-get install nats-server)');

/** A nats-server a test configures itself (`args`), once it listens on `port` of 127.0.0.1. */
export async function startNatsServer(args: readonly string[], port: number): Promise<ChildProcess> {
  const server = spawn('nats-server', args, { stdio: 'ignore' });
  await untilListening(port);
  return server;
}

async function untilListening(port: number): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1').once('error', () => resolve(false)).once('connect', () => {
        socket.destroy();
        resolve(true);
      });
    });
    if (open) return;
    if (attempt > 200) throw new Error(`nothing listened on port ${port}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export class CheckingCluster {
  readonly key: string;
  /** a, b and c once started; a test replaces or adds the nodes it restarts or starts. */
  readonly nodes: RunningService[] = [];
  /** The data directories' parent. */
  dir = '';
  #nats: NatsServer[] = [];

  constructor(key: string) {
    this.key = key;
  }

  get natsUrl(): string {
    return this.#nats[0].url;
  }

  /** A node's flags: comparing its reading every 4 commands (the log's first windows fill with a test's first writes), with `faults`. */
  args(nodeId: string, ...faults: string[]): string[] {
    return ['--api-key', this.key, '--cluster', this.natsUrl, '--node-id', nodeId, '--test-log-check-every', '4', ...(faults.length > 0 ? ['--test-faults', faults.join(',')] : [])];
  }

  async start(prefix: string, faults: Record<'a' | 'b' | 'c', string[]>): Promise<void> {
    this.dir = tempDir(prefix);
    this.#nats = await startNatsServers(1, this.dir);
    for (const nodeId of ['a', 'b', 'c'] as const) this.nodes.push(await startService({ noStaticKey: true, dataDir: `${this.dir}/${nodeId}`, args: this.args(nodeId, ...faults[nodeId]) }));
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.stop()));
    await Promise.all(this.#nats.map((server) => server.stop()));
  }
}
