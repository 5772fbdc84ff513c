// A NATS server whose machine stops without closing its connections (a power loss, a network cut): no TCP
// reset tells its clients, unlike a killed process. What a user relies on: a node that was connected to it
// moves to another server within seconds, as the other servers elect new leaders, and takes writes again;
// it is not DOWN for minutes. Real processes: three nats-servers, one node that is given only the first
// server's URL (it learns the others from it, and gives the log a replica on each), and that server paused
// with SIGSTOP. And a log and buckets left with one replica by an earlier version get three.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { STREAM } from '../../src/cluster/commands.ts';
import { ClusterLog } from '../../src/cluster/log.ts';
import { startNatsServers } from '../../src/cluster/nats-servers.ts';
import type { NatsServer } from '../../src/cluster/nats-servers.ts';
import type { ClusterStatus } from '../../src/cluster/status.ts';
import { ingest, vmStart } from '../helpers/events.ts';
import { request, runCli, startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

const missing = spawnSync('nats-server', ['--version']).error !== undefined;
if (missing && process.env.CI === 'true') throw new Error('nats-server is not installed (apt-get install nats-server)');
const KEY = 'hung_server_test_key_0123456789';

let nats: NatsServer[] = [];
let node: RunningService;
let dir: string;

/** The node, given the first server's URL only (as one DNS name in front of the three). */
function startNode(): Promise<RunningService> {
  return startService({ noStaticKey: true, dataDir: `${dir}/n1`, args: ['--api-key', KEY, '--cluster', nats[0].url, '--node-id', 'n1'] });
}

before(async () => {
  if (missing) return;
  dir = tempDir('jvmlens-hung-server-');
  nats = await startNatsServers(3, dir);
  node = await startNode();
});

after(async () => {
  if (nats[0]?.pid !== undefined) process.kill(nats[0].pid, 'SIGCONT');
  await node?.stop();
  await Promise.all(nats.map((server) => server.stop()));
});

function vmId(index: number): string {
  return `4a0e0e00-0000-4000-8000-${String(index).padStart(12, '0')}`;
}

test('given one server\'s URL, a node gives the log a replica on each of the three servers', { skip: missing && 'nats-server is not installed' }, async () => {
  // As behind one DNS name: the servers name the others, and the log must survive losing one of them. A node
  // that connected while the servers' cluster formed was told of two servers (in CI): within seconds, three.
  const deadline = Date.now() + 10_000;
  for (;;) {
    const status = await runCli(['cluster', 'status', '--cluster', nats[1].url, '--format', 'json']);
    assert.equal(status.code, 0, status.stderr);
    const { log } = JSON.parse(status.stdout) as ClusterStatus;
    // The leader's replica and the others'.
    const servers = [log.leader, ...log.replicas.map((replica) => replica.server)].sort();
    if (servers.length === 3 || Date.now() > deadline) {
      assert.deepEqual(servers, ['s1', 's2', 's3'], JSON.stringify(log));
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
});

test('a log and buckets that an earlier version made with one replica get three at a node\'s start', { skip: missing && 'nats-server is not installed' }, async () => {
  // As a node given one URL made them before 18ac58c: the stream and the membership bucket scaled down to
  // one; and the log without direct reads, as versions before them made it.
  const log = await ClusterLog.open([nats[1].url], 'replicas-test', 'once');
  try {
    for (const stream of [STREAM, 'KV_jvmlens_nodes']) {
      const { config } = await log.jsm.streams.info(stream);
      await log.jsm.streams.update(stream, { ...config, num_replicas: 1, ...(stream === STREAM ? { allow_direct: false } : {}) });
      assert.equal((await log.jsm.streams.info(stream)).config.num_replicas, 1);
    }
    assert.equal((await log.jsm.streams.info(STREAM)).config.allow_direct, false);
    await node.stop({ keepData: true });
    node = await startNode();
    for (const stream of [STREAM, 'KV_jvmlens_nodes']) assert.equal((await log.jsm.streams.info(stream)).config.num_replicas, 3, stream);
    assert.equal((await log.jsm.streams.info(STREAM)).config.allow_direct, true, 'the log takes direct reads again');
  } finally {
    await log.close();
  }
});

test('a log and buckets that lost replicas while a node runs get three again within seconds', { skip: missing && 'nats-server is not installed' }, async () => {
  // As a log made while the servers' cluster formed, when they named two of the three: the node's look at
  // the log (every 2 s) finds fewer replicas than the servers name now.
  const log = await ClusterLog.open([nats[1].url], 'replicas-test', 'once');
  // A scale-down took over the log's 1.5 s per request on a loaded machine (npm test runs two files at once).
  const jsm = await jetstreamManager(log.nc, { timeout: 10_000 });
  try {
    for (const stream of [STREAM, 'KV_jvmlens_nodes']) {
      const { config } = await jsm.streams.info(stream);
      await jsm.streams.update(stream, { ...config, num_replicas: 1 });
    }
    const deadline = Date.now() + 10_000;
    const replicasOf = async () => Promise.all([STREAM, 'KV_jvmlens_nodes'].map(async (stream) => (await jsm.streams.info(stream)).config.num_replicas));
    while ((await replicasOf()).some((replicas) => replicas < 3)) {
      assert.ok(Date.now() < deadline, `replicas still ${JSON.stringify(await replicasOf())}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.match(node.stderr(), /the NATS servers name more of their cluster than the cluster log had replicas on/);
  } finally {
    await log.close();
  }
});

test('a node on a NATS server that hangs moves to another server and takes writes again within seconds', { skip: missing && 'nats-server is not installed' }, async (t) => {
  assert.equal((await ingest(node.gatewayUrl, KEY, [vmStart(vmId(0), Date.now())])).status, 200);
  process.kill(nats[0].pid!, 'SIGSTOP');
  const hungAt = Date.now();
  // Writes meanwhile are refused with 503 (the agent keeps them and retries), until one is acknowledged.
  let index = 1;
  for (;;) {
    const result = await ingest(node.gatewayUrl, KEY, [vmStart(vmId(index), Date.now())]);
    if (result.status === 200) break;
    assert.equal(result.status, 503, JSON.stringify(result.body));
    // The client's default pings (2 min apart, 2 unanswered) kept it on the hung server for minutes.
    assert.ok(Date.now() - hungAt < 25_000, `writes through the node still refused ${Date.now() - hungAt} ms after its server hung: ${JSON.stringify(result.body)}`);
    index++;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  t.diagnostic(`a write acknowledged again ${Date.now() - hungAt} ms after the node's server hung`);
  const health = await request(`${node.gatewayUrl}/opthub-health`);
  assert.equal(health.body.healthState, 'UP', health.text);
  // The write before the hang and the one acknowledged after it.
  for (const written of [0, index]) assert.equal((await request(`${node.apiUrl}/public/instance/${vmId(written)}`, { key: KEY })).status, 200, `VM ${written}`);
});
