// Local `nats-server` processes with JetStream, clustered on loopback: for `npm run cluster:local`, the
// cluster tests and the cluster benches. Production servers are configured from deploy/cluster/.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { freePort } from '../free-port.ts';

export interface NatsServer {
  name: string;
  url: string;
  /** Its configuration: `nats-server -c FILE` starts it again by hand. */
  configFile: string;
  /** Stops the process (SIGKILL to simulate a crash); its store directory stays. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same ports and store. */
  start(): Promise<void>;
  readonly running: boolean;
  /** The process id while running (the benches read its CPU time). */
  readonly pid: number | undefined;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** The largest message of the servers started here (a report page fits whole); tests try smaller ones. */
const MAX_PAYLOAD = 8 * 1024 * 1024;

/** The configuration of one server: JetStream on, `maxPayload`-byte messages, routes to the others. */
export function natsConfig(name: string, port: number, clusterPort: number, routes: readonly number[], storeDir: string, maxPayload = MAX_PAYLOAD): string {
  const cluster = routes.length === 0 ? '' : `
cluster {
  name: "jvmlens"
  listen: "127.0.0.1:${clusterPort}"
  routes: [${routes.map((route) => `"nats://127.0.0.1:${route}"`).join(', ')}]
}`;
  return `server_name: "${name}"
listen: "127.0.0.1:${port}"
max_payload: ${maxPayload}
jetstream {
  store_dir: "${storeDir}"
}${cluster}
`;
}

export interface NatsServersOptions {
  maxPayload?: number;
  /** Called when a server's process ends without `stop()`: killed from outside, or crashed. */
  onExit?: (server: NatsServer, how: string) => void;
}

/** How long the servers have to name each other (their routes connect within a second or two). */
const CLUSTER_FORM_MS = 20_000;
/** Attempts, each on new ports, to start servers that form their cluster. */
const ATTEMPTS = 3;

/**
 * Starts `count` servers under `dir` (one is a stand-alone JetStream server) and waits until each accepts
 * connections and, clustered, names all of them. Ports are chosen free, then bound by the servers: another
 * process (a test beside this one) can take one in between, and a server that cannot listen exits while
 * that process answers on its port (likely what left a CI run's first server naming two of three). Such an
 * attempt is stopped and made again on new ports.
 */
export async function startNatsServers(count: number, dir: string, options: NatsServersOptions = {}): Promise<NatsServer[]> {
  // Stores kept from an earlier start (`cluster:local` started again on its directory) hold the cluster's log.
  const kept = new Set(Array.from({ length: count }, (_, index) => serverName(index)).filter((name) => existsSync(join(dir, name))));
  for (let attempt = 1; ; attempt++) {
    const servers = await natsServers(count, dir, options);
    try {
      await Promise.all(servers.map((server) => server.start()));
      if (count > 1) await clusterFormed(servers);
      return servers;
    } catch (error) {
      await Promise.all(servers.map((server) => server.stop('SIGKILL')));
      // A failed attempt's own stores go; kept ones stay, however the attempt failed.
      for (const server of servers) if (!kept.has(server.name)) rmSync(join(dir, server.name), { recursive: true, force: true });
      if (attempt === ATTEMPTS) throw error;
    }
  }
}

function serverName(index: number): string {
  return `s${index + 1}`;
}

/** Until every server names all of them as its cluster's (`connect_urls`, its own included). */
async function clusterFormed(servers: readonly NatsServer[]): Promise<void> {
  const deadline = Date.now() + CLUSTER_FORM_MS;
  for (const server of servers) {
    const nc = await connect({ servers: server.url, reconnect: false, timeout: 3_000 });
    try {
      while ((nc.info?.connect_urls?.length ?? 0) < servers.length) {
        if (Date.now() > deadline) throw new Error(`nats-server ${server.name} names ${JSON.stringify(nc.info?.connect_urls)} of its cluster of ${servers.length} after ${CLUSTER_FORM_MS / 1000} s`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      await nc.close();
    }
  }
}

async function natsServers(count: number, dir: string, options: NatsServersOptions): Promise<NatsServer[]> {
  const ports = await Promise.all(Array.from({ length: count }, () => freePort()));
  const clusterPorts = await Promise.all(Array.from({ length: count }, () => freePort()));
  return ports.map((port, index) => {
    const name = serverName(index);
    const configFile = join(dir, `${name}.conf`);
    const storeDir = join(dir, name);
    mkdirSync(storeDir, { recursive: true });
    const routes = count === 1 ? [] : clusterPorts.filter((_, other) => other !== index);
    writeFileSync(configFile, natsConfig(name, port, clusterPorts[index], routes, storeDir, options.maxPayload));
    let child: ChildProcess | null = null;
    /** True while stop() waits for the exit it asked for. */
    let stopping = false;
    let exited: Promise<void> = Promise.resolve();
    const server: NatsServer = {
      name,
      url: `nats://127.0.0.1:${port}`,
      configFile,
      get running() {
        return child !== null;
      },
      get pid() {
        return child?.pid;
      },
      async start() {
        const process = spawn('nats-server', ['-c', configFile], { stdio: ['ignore', 'ignore', 'pipe'] });
        let log = '';
        process.stderr!.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4000)));
        child = process;
        exited = new Promise((resolve) => process.once('exit', (code, signal) => {
          if (!stopping) options.onExit?.(server, signal ?? `exit code ${code}`);
          resolve();
        }));
        const deadline = Date.now() + 20_000;
        const exitedEarly = () => process.exitCode !== null || process.signalCode !== null;
        while (!(await accepts(port))) {
          if (exitedEarly()) throw new Error(`nats-server ${name} exited: ${log}`);
          if (Date.now() > deadline) throw new Error(`nats-server ${name} did not listen on ${port}: ${log}`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        // Another process may answer on the port this one could not listen on.
        if (exitedEarly()) throw new Error(`nats-server ${name} exited: ${log}`);
      },
      async stop(signal: NodeJS.Signals = 'SIGTERM') {
        if (child === null) return;
        stopping = true;
        child.kill(signal);
        await exited;
        child = null;
        stopping = false;
      },
    };
    return server;
  });
}
