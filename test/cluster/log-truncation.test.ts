// The cluster's log is truncated once every node has applied a command and the retention has passed, on
// real processes: one nats-server (JetStream) and jvmlens nodes with a one-second retention. What a user
// relies on: the log stops growing, keys stay listable, a stopped node keeps its place, and a node the log
// was truncated past says so; a new node starts on a copy of a running node's data (`jvmlens backup`).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { STREAM } from '../../src/cluster/commands.ts';
import { ClusterLog } from '../../src/cluster/log.ts';
import { startNatsServers } from '../../src/cluster/nats-servers.ts';
import type { NatsServer } from '../../src/cluster/nats-servers.ts';
import { codeEvent, startEvent } from '../helpers/cve.ts';
import { ingest } from '../helpers/events.ts';
import { request, runCli, startService, tempDir, waitForHealth } from '../helpers/service.ts';
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

test('the log drops what every node applied once the retention passed; keys stay listable; a stopped node keeps its place', { skip: missing && 'nats-server is not installed' }, async () => {
  for (let index = 0; index < 6; index++) await ingestVm(nodes.n1, index);
  const created = await runCli(['keys', 'create', '--cluster', nats[0].url, '--user', 'ops', '--scopes', 'read']);
  assert.equal(created.code, 0, created.stderr);
  const keyId = /key id: +(\S+)/.exec(created.stdout)![1];
  const last = (await streamState()).last_seq;
  // Six batches, then the key: only the key command is left.
  await eventually(async () => (await streamState()).messages === 1, () => `the log is truncated to its key command (${last} commands written)`);
  assert.equal((await streamState()).first_seq, last, 'the key command stays');
  assert.match((await runCli(['keys', 'list', '--cluster', nats[0].url])).stdout, new RegExp(`${keyId} +ops`));
  for (let index = 0; index < 6; index++) assert.ok(await seesVm(nodes.n2, index), `VM ${index} through n2`);

  // A stopped node keeps its place: what it has not applied stays in the log until it is back.
  await nodes.n2.stop({ keepData: true });
  for (let index = 6; index < 9; index++) await ingestVm(nodes.n1, index);
  await new Promise((resolve) => setTimeout(resolve, 3 * RETENTION_MS));
  assert.equal((await streamState()).messages, 4, 'the three batches n2 missed are still in the log');
  nodes.n2 = await startNode('n2');
  for (let index = 6; index < 9; index++) assert.ok(await seesVm(nodes.n2, index), `VM ${index} through n2 after its restart`);
  await eventually(async () => (await streamState()).messages === 1, () => 'truncated again once n2 applied them');
});

test('a node the log was truncated past stays DOWN and says why; one started on a copy of a running node\'s data catches up', { skip: missing && 'nats-server is not installed' }, async () => {
  await ingestVm(nodes.n1, 20);
  await eventually(async () => (await streamState()).messages === 1, () => 'truncated');

  const empty = await startNode('n3', tempDir('jvmlens-truncated-'), false);
  try {
    await eventually(async () => {
      const health = await request(`${empty.gatewayUrl}/opthub-health`);
      return health.status === 503 && /truncated/.test(health.body.note ?? '');
    }, () => 'health answers 503 and names the truncation');
    const health = await request(`${empty.gatewayUrl}/opthub-health`);
    assert.match(health.body.note, /this node applied the cluster log up to 0, but the log now goes on at \d+: .*start this node on a copy of another node's data directory \(jvmlens backup/);
  } finally {
    await empty.stop();
  }

  // The copy is taken while n2 runs (README): `jvmlens backup`.
  const copied = await runCli(['backup', '--data-dir', `${dir}/n2`, `${dir}/n3`]);
  assert.equal(copied.code, 0, copied.stderr);
  nodes.n3 = await startNode('n3');
  await waitForHealth(nodes.n3, 200);
  await ingestVm(nodes.n1, 21);
  for (const index of [0, 8, 20, 21]) assert.ok(await seesVm(nodes.n3, index), `VM ${index} through the restored node`);
});
