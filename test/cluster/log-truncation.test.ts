// The cluster's log is truncated once every node has applied a command and the retention has passed, on
// real processes: one nats-server (JetStream) and jvmlens nodes with a one-second retention. What a user
// relies on: the log stops growing, keys stay listable, a stopped node keeps its place until seven days pass
// or `cluster forget` drops it, and a node the log was truncated past (a new one, or one stopped too long)
// starts from a copy of a live node's data, or, with none to copy from, says why it cannot serve.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { Kvm } from '@nats-io/kv';
import { after, before, test } from 'node:test';
import { LOG_FORMAT, STREAM } from '../../src/cluster/commands.ts';
import { ClusterLog } from '../../src/cluster/log.ts';
import type { ClusterStatus } from '../../src/cluster/status.ts';
import { appliedSeq } from '../../src/cluster/replica.ts';
import { fetchSnapshot } from '../../src/cluster/snapshot.ts';
import { openStore } from '../../src/storage/store.ts';
import { startNatsServers } from '../../src/cluster/nats-servers.ts';
import type { NatsServer } from '../../src/cluster/nats-servers.ts';
import { codeEvent, startEvent } from '../helpers/cve.ts';
import { ingest } from '../helpers/events.ts';
import { request, runCli, startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

const missing = spawnSync('nats-server', ['--version']).error !== undefined;
if (missing && process.env.CI === 'true') throw new Error('nats-server is not installed (apt-get install nats-server)');
const KEY = 'truncation_test_key_0123456789';
const RETENTION_MS = 1_000;

let dir: string;
let nats: NatsServer[] = [];
let log: ClusterLog;
const nodes: Record<string, RunningService> = {};

function startNode(nodeId: string, dataDir = `${dir}/${nodeId}`, waitReady = true): Promise<RunningService> {
  return startService({ noStaticKey: true, dataDir, waitReady, args: ['--api-key', KEY, '--cluster', nats[0].url, '--node-id', nodeId, '--log-retention-ms', String(RETENTION_MS)] });
}

function vmId(index: number): string {
  return `7a1c0000-0000-4000-8000-${String(index).padStart(12, '0')}`;
}

async function ingestVm(node: RunningService, index: number): Promise<void> {
  const time = Date.now() - 60_000;
  const result = await ingest(node.gatewayUrl, KEY, [startEvent(vmId(index), time, 'host-1', { env: 'prod' }), codeEvent(vmId(index), time + 1, ['app.jar'])]);
  assert.equal(result.status, 200, JSON.stringify(result.body));
}

async function seesVm(node: RunningService, index: number): Promise<boolean> {
  return (await request(`${node.apiUrl}/public/instance/${vmId(index)}`, { key: KEY })).status === 200;
}

/** Polls until `check` holds, failing with `message` after `ms`. */
async function eventually(check: () => Promise<boolean>, message: () => string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, message());
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const streamState = async () => (await log.jsm.streams.info(STREAM)).state;

before(async () => {
  if (missing) return;
  dir = tempDir('jvmlens-truncation-');
  nats = await startNatsServers(1, dir);
  nodes.n1 = await startNode('n1');
  nodes.n2 = await startNode('n2');
  log = await ClusterLog.open([nats[0].url], 'truncation-test', 'once');
});

after(async () => {
  await log?.close();
  await Promise.all(Object.values(nodes).map((node) => node.stop()));
  await Promise.all(nats.map((server) => server.stop()));
});

test('the log drops what every node applied once the retention passed; keys stay listable; a stopped node keeps its place, and cluster status shows where', { skip: missing && 'nats-server is not installed' }, async () => {
  for (let index = 0; index < 6; index++) await ingestVm(nodes.n1, index);
  const created = await runCli(['keys', 'create', '--cluster', nats[0].url, '--user', 'ops', '--scopes', 'read']);
  assert.equal(created.code, 0, created.stderr);
  const keyId = /key id: +(\S+)/.exec(created.stdout)![1];
  const last = (await streamState()).last_seq;
  // Six batches, then the key: all of them go, and the key is still listed (the truncating node saved it).
  await eventually(async () => (await streamState()).messages === 0, () => `the log is truncated (${last} commands written)`);
  assert.equal((await streamState()).first_seq, last + 1);
  assert.match((await runCli(['keys', 'list', '--cluster', nats[0].url])).stdout, new RegExp(`${keyId} +ops`));
  for (let index = 0; index < 6; index++) assert.ok(await seesVm(nodes.n2, index), `VM ${index} through n2`);

  // A stopped node keeps its place: what it has not applied stays in the log until it is back.
  await nodes.n2.stop({ keepData: true });
  // The operator sees it: not live, where it stopped, and how long its place is kept.
  const status = await runCli(['cluster', 'status', '--cluster', nats[0].url, '--format', 'json']);
  assert.equal(status.code, 0, status.stderr);
  const shown = JSON.parse(status.stdout) as ClusterStatus;
  assert.equal(shown.log.lastSeq, (await streamState()).last_seq);
  assert.equal(shown.vmShards, 64);
  assert.equal(shown.codeGroups, 1);
  const [n1, n2] = ['n1', 'n2'].map((nodeId) => shown.nodes.find((node) => node.nodeId === nodeId)!);
  assert.equal(n1.live, true);
  assert.ok(n1.health !== null && 'up' in n1.health && n1.health.up && n1.health.applied === shown.log.lastSeq, `n1 answers for itself: ${JSON.stringify(n1.health)}`);
  assert.equal(n1.logFormat, LOG_FORMAT);
  assert.equal(n2.live, false);
  assert.equal(n2.health, null);
  assert.equal(n2.logFormat, null, 'not live: no heartbeat says');
  assert.ok(n2.applied !== null && n2.applied <= shown.log.lastSeq, JSON.stringify(n2));
  assert.ok(Math.abs(n2.placeKeptUntil! - Date.now() - 7 * 24 * 3_600_000) < 60_000, 'its place is kept seven days from its last record');
  const table = await runCli(['cluster', 'status', '--cluster', nats[0].url]);
  // Nothing was written since the truncation: the log is empty, and says how far it went.
  assert.match(table.stdout, new RegExp(`^log +JVMLENS_LOG: 0 commands, 0\\.0 MB, all truncated, through ${last}; leader s1`, 'm'), 'a server outside any NATS cluster leads the log alone, never electing');
  assert.match(table.stdout, /^shards +64 VM shards, 1 code group$/m);
  assert.match(table.stdout, /^NODE +STATE +CODE GROUP +LOG FORMAT +GATEWAY/m);
  assert.match(table.stdout, new RegExp(`^n1 +UP +0 +${LOG_FORMAT} +\\d+ +\\d+ +\\S+ +\\d+ +current +-$`, 'm'));
  assert.match(table.stdout, /^n2 +not live +- +- +- +- +- +\d+ +(current|\d+ behind) +\d{4}-/m);
  for (let index = 6; index < 9; index++) await ingestVm(nodes.n1, index);
  await new Promise((resolve) => setTimeout(resolve, 3 * RETENTION_MS));
  assert.equal((await streamState()).messages, 3, 'the three batches n2 missed are still in the log');
  nodes.n2 = await startNode('n2');
  for (let index = 6; index < 9; index++) assert.ok(await seesVm(nodes.n2, index), `VM ${index} through n2 after its restart`);
  await eventually(async () => (await streamState()).messages === 0, () => 'truncated again once n2 applied them');
});

test('a new node started once the log was truncated copies a live node\'s data, then follows the log', { skip: missing && 'nats-server is not installed' }, async () => {
  await ingestVm(nodes.n1, 20);
  await eventually(async () => (await streamState()).messages === 0, () => 'truncated');

  // Writes go on while the new node copies and starts: the log keeps what came after the copy for it.
  let writing = true;
  const written: number[] = [];
  const writer = (async () => {
    for (let index = 100; writing; index++) {
      await ingestVm(nodes.n1, index);
      written.push(index);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  try {
    nodes.n3 = await startNode('n3', tempDir('jvmlens-new-node-'));
  } finally {
    writing = false;
    await writer;
  }
  assert.match(nodes.n3.stderr(), /this node starts from a copy of a live node's data/);
  await ingestVm(nodes.n1, 21);
  for (const index of [0, 8, 20, 21, ...written]) assert.ok(await seesVm(nodes.n3, index), `VM ${index} through the new node`);
  // The node that gave the copy removed it once it was read.
  for (const nodeId of ['n1', 'n2']) {
    const copies = `${dir}/${nodeId}/snapshots`;
    assert.deepEqual(existsSync(copies) ? readdirSync(copies) : [], [], `${nodeId} keeps no copy`);
  }
});

test('a second process with a live node\'s id copies nothing and refuses to start', { skip: missing && 'nats-server is not installed' }, async () => {
  const twin = await startNode('n3', tempDir('jvmlens-twin-'), false);
  let code: unknown;
  try {
    // Bounded: when the test before left no live n3, the twin starts as n3 and would run until stopped.
    code = await Promise.race([
      new Promise((resolve) => (twin.child.exitCode !== null ? resolve(twin.child.exitCode) : twin.child.once('exit', resolve))),
      new Promise((resolve) => setTimeout(() => resolve('still running after 60 s'), 60_000).unref()),
    ]);
  } finally {
    await twin.stop();
  }
  assert.equal(code, 1, twin.stderr());
  assert.match(twin.stderr(), /cannot start: the node id 'n3' is in use by a live node/);
  assert.doesNotMatch(twin.stderr(), /copying a live node's data/);
});

test('a copy taken over NATS is a complete store, and the log is held for the node that takes it until that node records its own place', { skip: missing && 'nats-server is not installed' }, async () => {
  const into = tempDir('jvmlens-copy-');
  const positions = await new Kvm(log.nc).open('jvmlens_positions');
  try {
    const copy = await fetchSnapshot(log.nc, 'n2', 'probe', into, { info: () => undefined, warn: () => undefined, error: () => undefined });
    assert.ok(copy.applied > 0 && copy.bytes > 0, JSON.stringify(copy));
    assert.equal((await positions.get('probe'))?.string(), String(copy.applied), 'the log is held at the copy\'s position');
    const store = openStore(into, { readOnly: true });
    try {
      assert.ok(appliedSeq(store) >= copy.applied, 'the copy holds at least what was held for it');
      for (const index of [0, 8, 20]) assert.notEqual(store.vmRows.get(vmId(index)), undefined, `VM ${index} in the copy`);
    } finally {
      await store.close();
    }
  } finally {
    await positions.delete('probe');
    rmSync(into, { recursive: true, force: true });
  }
});

test('a node whose place was forgotten restarts from a copy (from the next node when the first hangs): what it held is replaced by the cluster\'s data', { skip: missing && 'nats-server is not installed' }, async () => {
  // A live node's place is not dropped; nor is that of a node the log does not know.
  const live = await runCli(['cluster', 'forget', 'n3', '--cluster', nats[0].url]);
  assert.equal(live.code, 2, live.stdout);
  assert.match(live.stderr, /^jvmlens: node n3 is live: stop it first \(SIGTERM/);
  const unknown = await runCli(['cluster', 'forget', 'n9', '--cluster', nats[0].url]);
  assert.equal(unknown.code, 2, unknown.stdout);
  assert.match(unknown.stderr, /^jvmlens: node n9 holds no place in the cluster log/);
  const n3 = nodes.n3;
  await n3.stop({ keepData: true });
  delete nodes.n3;
  // The operator drops its place (as seven days without a recorded position would): the log is truncated past it.
  const forgot = await runCli(['cluster', 'forget', 'n3', '--cluster', nats[0].url]);
  assert.equal(forgot.code, 0, forgot.stderr);
  assert.match(forgot.stdout, /^forgot n3's place in the cluster log \(it had applied up to \d+\)/);
  await ingestVm(nodes.n2, 22);
  await eventually(async () => (await streamState()).messages === 0, () => 'truncated past n3');

  // n1, the first node it asks, hangs: it is asked for 5 s, then n2 gives the copy.
  process.kill(nodes.n1.child.pid!, 'SIGSTOP');
  try {
    nodes.n3 = await startNode('n3', n3.dataDir);
  } finally {
    process.kill(nodes.n1.child.pid!, 'SIGCONT');
  }
  assert.match(nodes.n3.stderr(), /the cluster log was truncated past this node: copying a live node's data first/);
  assert.match(nodes.n3.stderr(), /a live node did not give a copy of its data","from":"n1"/);
  assert.match(nodes.n3.stderr(), /this node starts from a copy of a live node's data","from":"n2"/);
  for (const index of [0, 21, 22]) assert.ok(await seesVm(nodes.n3, index), `VM ${index} through the restarted node`);
  const health = await request(`${nodes.n3.gatewayUrl}/opthub-health`);
  assert.equal(health.status, 200, JSON.stringify(health.body));
});

test('with no live node to copy from, a node the log was truncated past stays DOWN and says why', { skip: missing && 'nats-server is not installed' }, async () => {
  for (const nodeId of Object.keys(nodes)) {
    await nodes[nodeId].stop({ keepData: true });
    delete nodes[nodeId];
  }
  const lonely = await startNode('n4', tempDir('jvmlens-truncated-'), false);
  try {
    await eventually(async () => {
      const health = await request(`${lonely.gatewayUrl}/opthub-health`);
      return health.status === 503 && /truncated/.test(health.body.note ?? '');
    }, () => `health answers 503 and names the truncation; log:\n${lonely.stderr()}`);
    const health = await request(`${lonely.gatewayUrl}/opthub-health`);
    assert.match(health.body.note, /this node applied the cluster log up to 0, but the log now goes on at \d+: .*restart this node while another node of its code group is UP/);
    assert.match(lonely.stderr(), /no live node of this node's code group gave a copy of its data/);
  } finally {
    await lonely.stop();
  }
});
