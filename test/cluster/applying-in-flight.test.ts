// A node with agent batches waiting in the log (after a restart, or faster writes than it applies) starts
// the next ones before the one ahead is on disk, so several share a transaction (src/cluster/replica.ts).
// What a user relies on: such a node ends with every batch as it would apply them one by one (a batch naming
// an unknown VM skipped, the ones after it applied), and a batch that fails to apply leaves none of those
// behind it stored, so the node starts over from it rather than losing it. Real processes: a nats-server and
// a jvmlens node; the test writes the log before the node starts, so the node finds a backlog.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, test } from 'node:test';
import { eventsCommand } from '../../src/cluster/commands.ts';
import type { Command } from '../../src/cluster/commands.ts';
import { ClusterLog } from '../../src/cluster/log.ts';
import { startNatsServers } from '../../src/cluster/nats-servers.ts';
import type { NatsServer } from '../../src/cluster/nats-servers.ts';
import { appliedSeq, COPY_SKIPPED, TAG_EDIT_WITHOUT_VM } from '../../src/cluster/replica.ts';
import { validateEvents } from '../../src/ingest/events.ts';
import { newKey } from '../../src/storage/keys.ts';
import { openStore } from '../../src/storage/store.ts';
import { vmStart } from '../helpers/events.ts';
import { runReport } from '../helpers/reports.ts';
import { request, startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

const missing = spawnSync('nats-server', ['--version']).error !== undefined;
if (missing && process.env.CI === 'true') throw new Error('nats-server is not installed (apt-get install nats-server)');
const skip = missing && 'nats-server is not installed';

const KEY = 'in_flight_test_key_0123456789';
const VMS = 30;
const ITEMS = 50;
const running: { nats: NatsServer[]; nodes: RunningService[] } = { nats: [], nodes: [] };

after(async () => {
  await Promise.all(running.nodes.map((node) => node.stop()));
  await Promise.all(running.nats.map((server) => server.stop()));
});

function vmId(prefix: string, index: number): string {
  return `${prefix}000000-0000-4000-8000-${String(index).padStart(12, '0')}`;
}

/** The command a gateway logs for these raw events. */
function command(raw: unknown[]): Command {
  const now = Date.now();
  return eventsCommand(validateEvents(raw, now), now, 1);
}

function codeEvent(vm: string, time: number, index: number): Record<string, unknown> {
  const items = Array.from({ length: ITEMS }, (_, k) => ({ sourceName: `lib-${index % 3}.jar`, className: `com.acme.V${index}`, methodName: `m${k}()` }));
  return { type: 'code', vmId: vm, time, items };
}

/** A nats-server of its own, and the log with `commands` appended (with the message ids `msgIds` gives): each test's log is its own. */
async function logWith(commands: Command[], msgIds: (string | undefined)[] = []): Promise<{ url: string; seqs: number[] }> {
  const [server] = await startNatsServers(1, tempDir('jvmlens-in-flight-'));
  running.nats.push(server);
  const log = await ClusterLog.open([server.url], 'in-flight-test', 'once');
  try {
    const seqs: number[] = [];
    for (const [index, logged] of commands.entries()) seqs.push(await log.append(logged, msgIds[index]));
    return { url: server.url, seqs };
  } finally {
    await log.close();
  }
}

test('a node that finds batches waiting in the log applies them all, in order, a batch of an unknown VM skipped', { skip }, async () => {
  const time = Date.now() - 60_000;
  const commands = [command(Array.from({ length: VMS }, (_, index) => vmStart(vmId('a1', index), time)))];
  for (let index = 0; index < VMS; index++) {
    commands.push(command([codeEvent(vmId('a1', index), time + 1, index)]));
    // Skipped by every node alike: no vm.start came before it.
    if (index === VMS / 2) commands.push(command([codeEvent(vmId('a2', 0), time + 1, 999)]));
  }
  // The last one restarts a VM: a later command must see what the ones before it stored.
  commands.push(command([vmStart(vmId('a1', 0), time + 2, { tags: { stage: 'last' } })]));
  const { url } = await logWith(commands);

  const node = await startService({ noStaticKey: true, args: ['--api-key', KEY, '--cluster', url, '--node-id', 'n1'] });
  running.nodes.push(node);
  for (let index = 0; index < VMS; index++) {
    assert.equal((await request(`${node.apiUrl}/public/instance/${vmId('a1', index)}`, { key: KEY })).status, 200, vmId('a1', index));
  }
  assert.equal((await request(`${node.apiUrl}/public/instance/${vmId('a2', 0)}`, { key: KEY })).status, 404);
  const restarted = await request(`${node.apiUrl}/public/instance/${vmId('a1', 0)}`, { key: KEY });
  assert.deepEqual(restarted.body.tags, { stage: 'last' });
  const report = await runReport({ ...node, apiKey: KEY }, 'codeInventory', { from: '1d' });
  assert.equal(report.items.length, VMS * ITEMS);
  assert.equal(node.stderr().match(/a logged command does not apply and is skipped/g)?.length, 1, node.stderr());
});

test('a tag edit of a VM the node does not hold is skipped and logged as a sign that it read another history', { skip }, async () => {
  const time = Date.now() - 60_000;
  const edit = (vm: string, value: string): Command => ({ kind: 'tags', edit: { vmId: vm, op: 'replace', records: [{ key: 'stage', value }] } });
  // The gateway that logged an edit held its VM: a node reading no start before it read another history.
  const { url } = await logWith([command([vmStart(vmId('c1', 0), time)]), edit(vmId('c2', 0), 'lost'), edit(vmId('c1', 0), 'kept')]);
  const node = await startService({ noStaticKey: true, args: ['--api-key', KEY, '--cluster', url, '--node-id', 'n1'] });
  running.nodes.push(node);
  assert.deepEqual((await request(`${node.apiUrl}/public/instance/${vmId('c1', 0)}`, { key: KEY })).body.tags, { stage: 'kept' });
  assert.equal((await request(`${node.apiUrl}/public/instance/${vmId('c2', 0)}`, { key: KEY })).status, 404);
  const logged = node.stderr().split('\n').filter((line) => line.includes(TAG_EDIT_WITHOUT_VM));
  assert.equal(logged.length, 1, node.stderr());
  assert.match(logged[0], new RegExp(`"seq":2,"vmId":"${vmId('c2', 0)}"`));
});

test('a write appended again is applied once: a copy of a batch or an edit the node applied is skipped, one it never read is applied', { skip }, async () => {
  const time = Date.now() - 60_000;
  const vm = vmId('d1', 0);
  const edit = (records: { key: string; value: string }[]): Command => ({ kind: 'tags', edit: { vmId: vm, op: 'merge', records } });
  const start = command([vmStart(vm, time, { tags: { stage: 'start' } })]);
  // What a node whose history lacked its own writes appends again (src/cluster/acknowledged-writes.ts), in a history that held them.
  const { url } = await logWith(
    [start, edit([{ key: 'stage', value: 'first' }]), edit([{ key: 'stage', value: 'second' }]), edit([{ key: 'stage', value: 'first' }]), start, edit([{ key: 'owner', value: 'ops' }])],
    ['start-1', 'edit-1', 'edit-2', 'edit-1.again', 'start-1.again', 'edit-3.again'],
  );
  const dataDir = tempDir('jvmlens-in-flight-copies-');
  const node = await startService({ noStaticKey: true, dataDir, args: ['--api-key', KEY, '--cluster', url, '--node-id', 'n1'] });
  running.nodes.push(node);
  assert.deepEqual((await request(`${node.apiUrl}/public/instance/${vm}`, { key: KEY })).body.tags, { owner: 'ops', stage: 'second' });
  const skipped = node.stderr().split('\n').filter((line) => line.includes(COPY_SKIPPED));
  assert.equal(skipped.length, 2, node.stderr());
  assert.match(skipped[0], /"seq":4,"msgId":"edit-1.again"/);
  assert.match(skipped[1], /"seq":5,"msgId":"start-1.again"/);
});

test('a key revoked in the log stays revoked on a node whose history puts it again after the revocation, or only after it', { skip }, async () => {
  const appendedAgain = newKey('again', ['read'], Date.now());
  const revokedFirst = newKey('first', ['read'], Date.now());
  const working = newKey('working', ['read'], Date.now());
  const { url } = await logWith([
    { kind: 'key.put', record: appendedAgain.record },
    { kind: 'key.revoke', keyId: appendedAgain.record.keyId, at: Date.now() },
    { kind: 'key.put', record: appendedAgain.record },
    { kind: 'key.revoke', keyId: revokedFirst.record.keyId, at: Date.now() },
    { kind: 'key.put', record: revokedFirst.record },
    { kind: 'key.put', record: working.record },
  ]);
  const node = await startService({ noStaticKey: true, args: ['--api-key', KEY, '--cluster', url, '--node-id', 'n1'] });
  running.nodes.push(node);
  assert.equal((await request(`${node.apiUrl}/public/me`, { key: working.key })).status, 200, 'the node applied the log');
  assert.equal((await request(`${node.apiUrl}/public/me`, { key: appendedAgain.key })).status, 401);
  assert.equal((await request(`${node.apiUrl}/public/me`, { key: revokedFirst.key })).status, 401);
});

test('a batch that fails to apply leaves none of the batches in flight behind it stored: the node starts over from it', { skip }, async () => {
  const time = Date.now() - 60_000;
  const before = command([vmStart(vmId('b1', 0), time)]);
  // What no node can apply (a log written wrong, a bug): its events are not msgpack records.
  const broken: Command = { kind: 'events', events: Buffer.from('not msgpack records'), receivedAt: Date.now(), sources: [], groups: [Buffer.alloc(0)] };
  const behind = Array.from({ length: 10 }, (_, index) => command([vmStart(vmId('b2', index), time)]));
  const { url, seqs } = await logWith([before, broken, ...behind]);

  const dataDir = tempDir('jvmlens-in-flight-node-');
  const node = await startService({ noStaticKey: true, dataDir, waitReady: false, args: ['--api-key', KEY, '--cluster', url, '--node-id', 'n1'] });
  running.nodes.push(node);
  // It retries from the failed batch every second, failing alike each time.
  const deadline = Date.now() + 30_000;
  while ((node.stderr().match(/applying the cluster log failed/g)?.length ?? 0) < 2) {
    assert.ok(Date.now() < deadline, `the node did not fail twice on the broken batch:\n${node.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  assert.equal((await request(`${node.gatewayUrl}/opthub-health`)).status, 503);
  await node.stop({ keepData: true });

  const store = openStore(dataDir, { readOnly: true });
  try {
    assert.equal(appliedSeq(store), seqs[0]);
    assert.notEqual(store.vmRows.get(vmId('b1', 0)), undefined);
    for (let index = 0; index < behind.length; index++) assert.equal(store.vmRows.get(vmId('b2', index)), undefined, vmId('b2', index));
  } finally {
    await store.close();
  }
});
