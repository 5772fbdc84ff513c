// A node with agent batches waiting in the log (after a restart, or faster writes than it applies) starts
// the next ones before the one ahead is on disk, so several share a transaction (src/cluster/replica.ts).
// What a user relies on: such a node ends with every batch as it would apply them one by one (a batch naming
// an unknown VM kept until its start, the ones after it applied), and a batch that fails to apply leaves none of those
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
import { APPLIED_AFTER_START, KEPT_UNTIL_START } from '../../src/cluster/awaiting-start.ts';
import { appliedSeq, COPY_SKIPPED } from '../../src/cluster/replica.ts';
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

test('a node that finds batches waiting in the log applies them all, in order, a batch of an unknown VM kept', { skip }, async () => {
  const time = Date.now() - 60_000;
  const commands = [command(Array.from({ length: VMS }, (_, index) => vmStart(vmId('a1', index), time)))];
  for (let index = 0; index < VMS; index++) {
    commands.push(command([codeEvent(vmId('a1', index), time + 1, index)]));
    // Kept by every node alike until its VM starts: no vm.start came before it.
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
  assert.equal(node.stderr().split('\n').filter((line) => line.includes(KEPT_UNTIL_START)).length, 1, node.stderr());
});

/** The writes a node keeps until their VM's start, as its /metrics gives them. */
async function keptWrites(node: RunningService): Promise<number> {
  const text = await (await fetch(`${node.gatewayUrl}/metrics`)).text();
  return Number(/^jvmlens_cluster_writes_awaiting_start (\S+)$/m.exec(text)?.[1] ?? NaN);
}

/** The lines of a node's log that carry `message`. */
function logLines(node: RunningService, message: string): string[] {
  return node.stderr().split('\n').filter((line) => line.includes(message));
}

test('writes a node reads before their VM\'s start wait for it in its store, and apply with the batch that starts it, in log order', { skip }, async () => {
  const time = Date.now() - 60_000;
  // A gateway logs a write only for a VM its node holds: a node reading these before the start read the log
  // otherwise than that node (a start the log lost and its node appended again, acknowledged-writes.ts).
  const early = vmId('c1', 0);
  const chained = vmId('c2', 0);
  const never = vmId('c3', 0);
  const edit = (vm: string, change: { op: 'merge' | 'replace'; records: { key: string; value: string }[] } | { op: 'remove'; key: string }): Command => ({ kind: 'tags', edit: { vmId: vm, ...change } });
  const { url } = await logWith([
    command([codeEvent(early, time + 1, 1)]),
    edit(early, { op: 'replace', records: [{ key: 'stage', value: 'edited' }] }),
    edit(early, { op: 'remove', key: 'absent' }),
    // Starts `chained`, and waits for `early`: the batch after it waits for this one.
    command([vmStart(chained, time), codeEvent(early, time + 2, 2)]),
    command([codeEvent(chained, time + 3, 3)]),
    edit(never, { op: 'merge', records: [{ key: 'team', value: 'none' }] }),
  ]);
  const dataDir = tempDir('jvmlens-in-flight-awaiting-');
  const args = ['--api-key', KEY, '--cluster', url, '--node-id', 'n1'];
  const first = await startService({ noStaticKey: true, dataDir, args });
  running.nodes.push(first);
  // Reads wait until the node applied what the log held: then each of the six was kept.
  for (const vm of [early, chained]) assert.equal((await request(`${first.apiUrl}/public/instance/${vm}`, { key: KEY })).status, 404, vm);
  assert.deepEqual(logLines(first, KEPT_UNTIL_START).map((line) => Number(/"seq":(\d+)/.exec(line)?.[1])), [1, 2, 3, 4, 5, 6], first.stderr());
  assert.equal(await keptWrites(first), 6);
  // Kept in the store: they outlive the process.
  await first.stop();

  const log = await ClusterLog.open([url], 'in-flight-test', 'once');
  await log.append(command([vmStart(early, time, { tags: { stage: 'start', team: 'core' } })]));
  await log.append(edit(early, { op: 'merge', records: [{ key: 'owner', value: 'ops' }] }));
  await log.close();
  const second = await startService({ noStaticKey: true, dataDir, args });
  running.nodes.push(second);
  // The start's tags, then the kept edits in log order (the remove of a tag it lacks skipped), then the edit after the start.
  assert.deepEqual((await request(`${second.apiUrl}/public/instance/${early}`, { key: KEY })).body.tags, { owner: 'ops', stage: 'edited' });
  assert.equal((await request(`${second.apiUrl}/public/instance/${chained}`, { key: KEY })).status, 200);
  assert.equal((await request(`${second.apiUrl}/public/instance/${never}`, { key: KEY })).status, 404);
  const report = await runReport({ ...second, apiKey: KEY }, 'codeInventory', { from: '1d' });
  assert.deepEqual([...new Set(report.items.map((item) => String(item.className)))].sort(), ['com.acme.V1', 'com.acme.V2', 'com.acme.V3']);
  assert.equal(report.items.length, 3 * ITEMS);
  const applied = logLines(second, APPLIED_AFTER_START);
  assert.equal(applied.length, 5, second.stderr());
  assert.deepEqual(applied.map((line) => Number(/"kept":(\d+)/.exec(line)?.[1])), [1, 2, 3, 4, 5], 'in log order, each after the start it waited for');
  assert.match(applied[2], /"skipped":"VM '[^']+' has no tag 'absent'"/);
  assert.equal(await keptWrites(second), 1, 'the edit of the VM never started');
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
  // The log sends a named write under its name with `.retry<n>` appended (src/cluster/log.ts).
  assert.match(skipped[0], /"seq":4,"msgId":"edit-1\.again\.retry\d+"/);
  assert.match(skipped[1], /"seq":5,"msgId":"start-1\.again\.retry\d+"/);
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
