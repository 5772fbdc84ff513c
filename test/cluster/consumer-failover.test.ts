// A node follows the cluster's log through a JetStream consumer that lives on one nats-server. When that
// server dies, the node must follow the log again on another, or its reads (which wait until it applied
// every acknowledged write) fail: what a user relies on is that reads on every node go on answering, with
// the writes acknowledged meanwhile in them.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { STREAM } from '../../src/cluster/commands.ts';
import { ClusterLog } from '../../src/cluster/log.ts';
import { startNatsServers } from '../../src/cluster/nats-servers.ts';
import type { NatsServer } from '../../src/cluster/nats-servers.ts';
import { ingest, vmStart } from '../helpers/events.ts';
import { request, startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

const missing = spawnSync('nats-server', ['--version']).error !== undefined;
if (missing && process.env.CI === 'true') throw new Error('nats-server is not installed (apt-get install nats-server)');
const KEY = 'consumer_failover_key_0123456789';

let dir: string;
let nats: NatsServer[] = [];
const nodes: RunningService[] = [];
let urls: string;

/** The log's consumers as JetStream holds them: name → the server it lives on. */
async function consumers(): Promise<Map<string, string>> {
  const log = await ClusterLog.open(urls.split(','), 'consumer-failover-test', 'once');
  try {
    const hosts = new Map<string, string>();
    for await (const info of log.jsm.consumers.list(STREAM)) hosts.set(info.name, info.cluster?.leader ?? '');
    return hosts;
  } finally {
    await log.close();
  }
}

function startNode(nodeId: string): Promise<RunningService> {
  return startService({ noStaticKey: true, dataDir: `${dir}/${nodeId}`, args: ['--api-key', KEY, '--cluster', urls, '--node-id', nodeId] });
}

before(async () => {
  if (missing) return;
  dir = tempDir('jvmlens-consumer-failover-');
  nats = await startNatsServers(3, dir);
  urls = nats.map((server) => server.url).join(',');
  nodes.push(await startNode('n1'));
});

after(async () => {
  await Promise.all(nodes.map((node) => node.stop()));
  await Promise.all(nats.map((server) => server.stop()));
});

test('when the nats-server holding a node\'s log consumer dies, the node answers reads again with every acknowledged write', { skip: missing && 'nats-server is not installed' }, async (t) => {
  const existing = await consumers();
  nodes.push(await startNode('n2'));
  const reader = nodes[1];
  const own = [...(await consumers())].find(([name]) => !existing.has(name));
  assert.ok(own !== undefined, 'the reader\'s consumer is listed');
  const victim = nats.find((server) => server.name === own[1]);
  assert.ok(victim !== undefined, `a server named ${own[1]} holds the reader's consumer`);

  const vmId = (index: number) => `c0a5e000-0000-4000-8000-${String(index).padStart(12, '0')}`;
  const write = async (index: number): Promise<void> => {
    // Writes pause (503) while JetStream elects a new leader if the victim led the log.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const result = await ingest(nodes[0].gatewayUrl, KEY, [vmStart(vmId(index), Date.now())]);
      if (result.status === 200) return;
      assert.equal(result.status, 503, JSON.stringify(result.body));
      assert.ok(Date.now() < deadline, 'a write is acknowledged again within 30 s');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };
  await write(0);
  assert.equal((await request(`${reader.apiUrl}/public/instance/${vmId(0)}`, { key: KEY })).status, 200);

  await victim.stop('SIGKILL');
  const waits: number[] = [];
  for (let index = 1; index <= 5; index++) {
    let started = Date.now();
    await write(index);
    waits.push(Date.now() - started);
    started = Date.now();
    // The reader's own connection may have been to the victim: a moment of NOT_READY while it reconnects.
    let read = await request(`${reader.apiUrl}/public/instance/${vmId(index)}`, { key: KEY });
    for (let retries = 0; read.status === 503 && read.body.error === 'NOT_READY' && retries < 20; retries++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      read = await request(`${reader.apiUrl}/public/instance/${vmId(index)}`, { key: KEY });
    }
    assert.equal(read.status, 200, `VM ${index}, written after the kill, read through the reader: ${read.text}\n${reader.stderr()}`);
    waits.push(Date.now() - started);
  }
  t.diagnostic(`after the kill of ${victim.name}, ms per write and read: ${waits.join(', ')}`);
  assert.match(reader.stderr(), /the cluster log consumer stalled; starting a new one/);
  await victim.start();
});
