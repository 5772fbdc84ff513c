// A write JetStream acknowledged at a sequence where the log then holds another write (nats-server 2.9.10
// did so with a server paused: bench/nats-divergence.ts) is not lost: the node that appended it does not find
// its message id in the log as it reads it, and appends its write again. Real processes: one nats-server
// and two nodes, `a` appending stand-ins for its first agent batches (`--test-faults lose-writes`) while
// JetStream acknowledges them at the stand-ins' sequences. Without the check, those batches are missing
// on both nodes. A node killed before it read its write back finds it in its journal when it starts again
// (src/cluster/write-journal.ts). A command line (`jvmlens keys create --cluster`) reads its write back itself.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { startNatsServers } from '../../src/cluster/nats-servers.ts';
import type { NatsServer } from '../../src/cluster/nats-servers.ts';
import { READING_BACK_JOURNALED } from '../../src/cluster/write-journal.ts';
import { ingest, vmStart } from '../helpers/events.ts';
import { request, runCli, startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

const missing = spawnSync('nats-server', ['--version']).error !== undefined;
if (missing && process.env.CI === 'true') throw new Error('nats-server is not installed (apt-get install nats-server)');
const KEY = 'lost_writes_test_key_0123456789';
/** How many agent batches `--test-faults lose-writes` loses (LOST_WRITES in src/cluster/node.ts). */
const LOST = 4;

let nats: NatsServer[] = [];
const nodes: RunningService[] = [];
let dir = '';

before(async () => {
  if (missing) return;
  dir = tempDir('jvmlens-lost-writes-');
  nats = await startNatsServers(1, dir);
  for (const nodeId of ['a', 'b']) {
    const faults = nodeId === 'a' ? ['--test-faults', 'lose-writes'] : [];
    nodes.push(await startService({ noStaticKey: true, dataDir: `${dir}/${nodeId}`, args: ['--api-key', KEY, '--cluster', nats[0].url, '--node-id', nodeId, ...faults] }));
  }
});

after(async () => {
  await Promise.all(nodes.map((node) => node.stop()));
  await Promise.all(nats.map((server) => server.stop()));
});

const vmId = (index: number) => `10570000-0000-4000-8000-${String(index).padStart(12, '0')}`;

async function stateOn(node: RunningService, id: string): Promise<string | null> {
  const found = await request<{ state: string }>(`${node.apiUrl}/public/instance/${id}`, { key: KEY });
  return found.status === 200 ? found.body.state : null;
}

async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, what);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('a node appends again each of its writes whose acknowledged sequence the log gives another write, and every node applies it', { skip: missing && 'nats-server is not installed' }, async () => {
  const [a, b] = nodes;
  const now = Date.now();
  // Lost at their sequences: two VM starts, the first VM's stop, a third start. Then one the log keeps.
  const batches = [[vmStart(vmId(1), now)], [vmStart(vmId(2), now)], [{ type: 'vm.stop', vmId: vmId(1), time: now + 1 }], [vmStart(vmId(3), now)], [vmStart(vmId(4), now)]];
  for (const [index, events] of batches.entries()) {
    const written = await ingest(a.gatewayUrl, KEY, events);
    assert.equal(written.status, 200, JSON.stringify(written.body));
    // A batch that starts a VM is answered once `a` applied it where the log holds it: its VM is there at once.
    if (events[0].type === 'vm.start') assert.equal(await stateOn(a, String(events[0].vmId)), 'RUNNING', `batch ${index + 1} on a`);
  }
  for (const node of [a, b]) {
    // The stop, answered at its acknowledgement, once `a` appended it again.
    await eventually(`VM 1 TERMINATED on ${node === a ? 'a' : 'b'}`, async () => (await stateOn(node, vmId(1))) === 'TERMINATED');
    for (const index of [2, 3, 4]) assert.equal(await stateOn(node, vmId(index)), 'RUNNING', `VM ${index} on ${node === a ? 'a' : 'b'}`);
  }
  const log = a.stderr();
  assert.equal(log.match(/a write JetStream acknowledged is missing from the cluster log as this node reads it; appending it again/g)?.length, LOST, log);
  assert.equal(log.match(/a lost write is appended again/g)?.length, LOST, log);
  // The node whose writes were whole had nothing to append again.
  assert.doesNotMatch(b.stderr(), /appending it again/);
});

test('a node killed right after the 200 for a write the log lost appends it again when it starts again, from its journal', { skip: missing && 'nats-server is not installed' }, async () => {
  const b = nodes[1];
  const started = await ingest(b.gatewayUrl, KEY, [vmStart(vmId(10), Date.now())]);
  assert.equal(started.status, 200, JSON.stringify(started.body));
  const dataDir = `${dir}/c`;
  const args = ['--api-key', KEY, '--cluster', nats[0].url, '--node-id', 'c'];
  let c = await startService({ noStaticKey: true, dataDir, args: [...args, '--test-faults', 'lose-writes'] });
  // Answered at its acknowledgement (a batch that starts no VM); the log holds a stand-in at its sequence.
  const stopped = await ingest(c.gatewayUrl, KEY, [{ type: 'vm.stop', vmId: vmId(10), time: Date.now() }]);
  assert.equal(stopped.status, 200, JSON.stringify(stopped.body));
  // Well within the 2 s it waits, at the log's end, before it counts the write as lost.
  await c.stop({ keepData: true, signal: 'SIGKILL' });
  assert.doesNotMatch(c.stderr(), /appending it again/);
  c = await startService({ noStaticKey: true, dataDir, args });
  nodes.push(c);
  for (const node of [b, c]) await eventually(`VM 10 TERMINATED on ${node === b ? 'b' : 'c'}`, async () => (await stateOn(node, vmId(10))) === 'TERMINATED');
  const log = c.stderr();
  assert.ok(log.includes(READING_BACK_JOURNALED), log);
  assert.match(log, /appending it again/);
  assert.match(log, /the writes journaled by this node's last process are in the cluster log/);
});

test('a key created on the cluster whose sequence the log gives another write is appended again by the command, and every node accepts it', { skip: missing && 'nats-server is not installed' }, async () => {
  const created = await runCli(['keys', 'create', '--cluster', nats[0].url, '--user', 'ops', '--scopes', 'read', '--test-faults', 'lose-writes']);
  assert.equal(created.code, 0, created.stderr);
  assert.match(created.stderr, /appending it again/);
  const key = /key: +(\S+)/.exec(created.stdout)![1];
  for (const node of nodes) await eventually('the key accepted by every node', async () => (await request(`${node.apiUrl}/public/me`, { key })).status === 200);
});
