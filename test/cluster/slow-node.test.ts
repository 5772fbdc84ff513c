// A node that applies the log slower than the others (a slow disk) falls behind the writes taken through
// them, and its reads, which wait until it applied every acknowledged write, would wait 10 s and fail. What a
// user relies on: its health turns DOWN and says it is catching up, so the load balancer sends reads
// elsewhere; once caught up it is UP with every write. Real processes: one nats-server, a node whose applies
// are 100 ms slower (`--test-faults slow-apply`), and a normal node that takes the writes. And a node that
// cannot apply at all (`--test-faults failing-apply`) is DOWN with the reason, not UP with reads that time out;
// so is one whose apply does not end (`--test-faults hanging-apply`), which also logs the command.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startNatsServers } from '../../src/cluster/nats-servers.ts';
import type { NatsServer } from '../../src/cluster/nats-servers.ts';
import { FAIL_APPLY_FILE, HANG_APPLY_FILE } from '../../src/cluster/node.ts';
import { APPLYING_SLOWLY } from '../../src/cluster/replica.ts';
import type { ClusterStatus } from '../../src/cluster/status.ts';
import { ingest, vmStart } from '../helpers/events.ts';
import { request, runCli, startService, tempDir } from '../helpers/service.ts';
import type { JsonResponse, RunningService } from '../helpers/service.ts';

const missing = spawnSync('nats-server', ['--version']).error !== undefined;
if (missing && process.env.CI === 'true') throw new Error('nats-server is not installed (apt-get install nats-server)');
const KEY = 'slow_node_test_key_0123456789';
/** At 100 ms more per command, about 20 s of work for the slow node. */
const WRITES = 200;

let nats: NatsServer[] = [];
let slow: RunningService;
let fast: RunningService;

before(async () => {
  if (missing) return;
  const dir = tempDir('jvmlens-slow-node-');
  nats = await startNatsServers(1, dir);
  const args = (nodeId: string) => ['--api-key', KEY, '--cluster', nats[0].url, '--node-id', nodeId];
  slow = await startService({ noStaticKey: true, dataDir: `${dir}/slow`, args: [...args('slow'), '--test-faults', 'slow-apply'] });
  fast = await startService({ noStaticKey: true, dataDir: `${dir}/fast`, args: args('fast') });
});

after(async () => {
  await Promise.all([slow?.stop(), fast?.stop()]);
  await Promise.all(nats.map((server) => server.stop()));
});

function vmId(index: number): string {
  return `5104e000-0000-4000-8000-${String(index).padStart(12, '0')}`;
}

/** The node's health once it is no longer UP, or its last answer after `ms`. */
async function healthOnceDown(node: RunningService, ms: number): Promise<JsonResponse<any>> {
  const deadline = Date.now() + ms;
  let health = await request(`${node.gatewayUrl}/opthub-health`);
  while (health.status === 200 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    health = await request(`${node.gatewayUrl}/opthub-health`);
  }
  return health;
}

test('a node far behind the log is DOWN (catching up) instead of keeping reads waiting, and UP with every write once caught up', { skip: missing && 'nats-server is not installed' }, async () => {
  for (let index = 0; index < WRITES; index++) {
    const result = await ingest(fast.gatewayUrl, KEY, [vmStart(vmId(index), Date.now() - 1_000)]);
    assert.equal(result.status, 200, JSON.stringify(result.body));
  }
  // It learns how far the log goes with the commands it is given (a few seconds late at most: it reads ahead).
  const health = await healthOnceDown(slow, 10_000);
  assert.equal(health.status, 503, health.text);
  assert.match(health.body.note, /^catching up: this node needs about \d+ s to apply what the cluster log holds$/);
  // The operator sees it in the cluster's status, as the node itself says it.
  const status = await runCli(['cluster', 'status', '--cluster', nats[0].url, '--format', 'json']);
  assert.equal(status.code, 0, status.stderr);
  const shown = (JSON.parse(status.stdout) as ClusterStatus).nodes.find((node) => node.nodeId === 'slow')!;
  // Still DOWN: once DOWN for catching up it stays so until it needs less than 1 s, though its estimate moves.
  assert.ok(shown.health !== null && 'up' in shown.health && !shown.health.up && /^catching up/.test(shown.health.note ?? '') && shown.health.behindMs > 1_000, JSON.stringify(shown));
  // Its data routes say so at once too (503 NOT_READY with Retry-After), rather than wait 10 s and give up.
  const started = Date.now();
  const read = await request(`${slow.apiUrl}/public/instance/${vmId(0)}`, { key: KEY });
  assert.equal(read.status, 503, read.text);
  assert.equal(read.body.error, 'NOT_READY', read.text);
  assert.ok(Date.now() - started < 2_000, 'answered at once');

  const deadline = Date.now() + 60_000;
  while ((await request(`${slow.gatewayUrl}/opthub-health`)).status !== 200) {
    assert.ok(Date.now() < deadline, 'UP again once caught up');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  // UP for good: no flapping in and out of the load balancer while the last commands apply.
  for (let probe = 0; probe < 20; probe++) {
    const again = await request(`${slow.gatewayUrl}/opthub-health`);
    assert.equal(again.status, 200, again.text);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  for (const index of [0, WRITES - 1]) assert.equal((await request(`${slow.apiUrl}/public/instance/${vmId(index)}`, { key: KEY })).status, 200, vmId(index));
});

test('a node that cannot apply the log (a full disk, say) is DOWN and says why, and UP with every write once it can', { skip: missing && 'nats-server is not installed' }, async () => {
  const dataDir = tempDir('jvmlens-stuck-node-');
  const stuck = await startService({ noStaticKey: true, dataDir, args: ['--api-key', KEY, '--cluster', nats[0].url, '--node-id', 'stuck', '--test-faults', 'failing-apply'] });
  try {
    writeFileSync(join(dataDir, FAIL_APPLY_FILE), '');
    const written = await ingest(fast.gatewayUrl, KEY, [vmStart(vmId(WRITES), Date.now() - 1000)]);
    assert.equal(written.status, 200, JSON.stringify(written.body));
    // Not UP with reads that would wait 10 s for a command it cannot apply, nor "catching up".
    const health = await healthOnceDown(stuck, 20_000);
    assert.equal(health.status, 503, health.text);
    assert.match(health.body.note, /^applying the cluster log fails at command \d+ \(test fault: applying fails\); retrying every 1 s$/);

    unlinkSync(join(dataDir, FAIL_APPLY_FILE));
    const healthy = Date.now() + 20_000;
    while ((await request(`${stuck.gatewayUrl}/opthub-health`)).status !== 200) {
      assert.ok(Date.now() < healthy, 'UP again once applying works');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal((await request(`${stuck.apiUrl}/public/instance/${vmId(WRITES)}`, { key: KEY })).status, 200);
  } finally {
    await stuck.stop();
  }
});

test('a node whose apply of a command does not end is DOWN naming the command, logs it, and is UP with every write once the apply ends', { skip: missing && 'nats-server is not installed' }, async () => {
  const dataDir = tempDir('jvmlens-hung-node-');
  const hung = await startService({ noStaticKey: true, dataDir, args: ['--api-key', KEY, '--cluster', nats[0].url, '--node-id', 'hung', '--test-faults', 'hanging-apply'] });
  try {
    writeFileSync(join(dataDir, HANG_APPLY_FILE), '');
    const written = await ingest(fast.gatewayUrl, KEY, [vmStart(vmId(WRITES + 2), Date.now() - 1000)]);
    assert.equal(written.status, 200, JSON.stringify(written.body));
    // The test fault makes an apply slow after 2 s (30 s otherwise).
    const health = await healthOnceDown(hung, 20_000);
    assert.equal(health.status, 503, health.text);
    assert.match(health.body.note, /^applying command \d+ of the cluster log \(events\) has taken \d+ s so far; reads wait for it$/);
    const logged = () => hung.stderr().split('\n').filter((line) => line.includes(APPLYING_SLOWLY));
    const loggedBy = Date.now() + 5_000;
    while (logged().length === 0) {
      assert.ok(Date.now() < loggedBy, `the slow apply is logged: ${hung.stderr()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.match(logged()[0], /"kind":"events","step":"applying"/);

    unlinkSync(join(dataDir, HANG_APPLY_FILE));
    const healthy = Date.now() + 20_000;
    while ((await request(`${hung.gatewayUrl}/opthub-health`)).status !== 200) {
      assert.ok(Date.now() < healthy, 'UP again once the apply ends');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal((await request(`${hung.apiUrl}/public/instance/${vmId(WRITES + 2)}`, { key: KEY })).status, 200);
  } finally {
    await hung.stop();
  }
});

test('a batch through a node that has not applied its VM\'s start yet (taken through another node a moment ago) waits for it, rather than 400 UNKNOWN_VM', { skip: missing && 'nats-server is not installed' }, async () => {
  const id = vmId(WRITES + 1);
  const started = await ingest(fast.gatewayUrl, KEY, [vmStart(id, Date.now() - 1_000)]);
  assert.equal(started.status, 200, JSON.stringify(started.body));
  // The slow node applies each command 100 ms late: the start is not applied there yet.
  const stopped = await ingest(slow.gatewayUrl, KEY, [{ type: 'vm.stop', vmId: id, time: Date.now() }]);
  assert.equal(stopped.status, 200, JSON.stringify(stopped.body));
  const state = await request<{ state: string }>(`${fast.apiUrl}/public/instance/${id}`, { key: KEY });
  assert.equal(state.body.state, 'TERMINATED', state.text);
});
