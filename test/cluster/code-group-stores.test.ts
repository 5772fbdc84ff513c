// Code groups (src/storage/code-groups.ts), without NATS: a class's group is a fixed function of its names;
// the log's events command gives a node of a group that group's code items and every VM-side fact, so its
// store keeps that group's classes only; the groups' classes, scanned in chunks and merged, give the items
// one store of every class gives.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { classesInKeyOrder, codeFinalize, codeItemsInKeyOrder, codePartition, scanCode, timedCode } from '../../src/engine/reports/kernels/code.ts';
import { CodeItemEncoder } from '../../src/engine/reports/kernels/code-items.ts';
import { classMethodsOf, timedClassList } from '../../src/engine/reports/kernels/timed-classes.ts';
import type { TimedClasses } from '../../src/engine/reports/kernels/timed-classes.ts';
import { ChunkedItems } from '../../src/engine/reports/encoded-items.ts';
import type { ClassMethods } from '../../src/engine/reports/kernels/class-methods.ts';
import { RowOrder } from '../../src/engine/reports/kernels/row-order.ts';
import { parseReportRequest } from '../../src/engine/reports/report-request.ts';
import type { ReportRequest } from '../../src/engine/reports/report-types.ts';
import { decodeCommand, encodeCommand, eventsCommand, loggedEvents } from '../../src/cluster/commands.ts';
import type { Command } from '../../src/cluster/commands.ts';
import { validateEvents } from '../../src/ingest/events.ts';
import type { AgentEvent, CodeEvent, CodeItem } from '../../src/ingest/events.ts';
import { packRecords, unpackRecords } from '../../src/msgpack-records.ts';
import { codeGroupOf } from '../../src/storage/code-groups.ts';
import { readClassTimes, SlotTimes } from '../../src/storage/code-times.ts';
import { Dictionary } from '../../src/storage/dictionary.ts';
import { FleetColumns } from '../../src/storage/fleet-columns.ts';
import { Ingestor } from '../../src/storage/ingest.ts';
import { openStore } from '../../src/storage/store.ts';
import type { Store } from '../../src/storage/store.ts';
import { tempDir } from '../helpers/service.ts';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 25, 12, 0, 0);

interface Opened {
  store: Store;
  dict: Dictionary;
}

/**
 * The store a single node makes of the events; then, applying them from the log, those of a cluster without
 * groups and of groups 0 and 1 of 2; then the stores of groups 0 and 1 of 2 fed the same events as logs of
 * earlier versions hold them (the code items of each group as records).
 */
const stores: Opened[] = [];

function openEmpty(): Opened {
  const store = openStore(tempDir());
  return { store, dict: new Dictionary(store) };
}

/** The events command of jvmlens versions before the code items went into columns (up to b99d48b). */
function legacyCommand(events: readonly AgentEvent[], codeGroups: number): Command {
  const code: [number, CodeItem[]][][] = Array.from({ length: codeGroups }, () => []);
  const withoutCode = events.map((event, index): AgentEvent | (Omit<CodeEvent, 'sources'> & { sourceNames: string[] }) => {
    if (event.type !== 'code') return event;
    const parts: CodeItem[][] = Array.from({ length: codeGroups }, () => []);
    for (const item of event.items) parts[codeGroupOf(item.className, codeGroups)].push(item);
    parts.forEach((items, group) => {
      if (items.length > 0) code[group].push([index, items]);
    });
    return { ...event, items: [], sourceNames: [...new Set(event.items.map((item) => item.sourceName))] };
  });
  return { kind: 'events', events: packRecords(withoutCode), code: code.map((items) => packRecords(items)), receivedAt: NOW };
}

/** Method m of class c: some names are not ASCII, some need escapes in JSON. */
function methodName(c: number, m: number): string {
  if (m === 1 && c % 7 === 0) return 'größe()';
  if (m === 1 && c % 7 === 3) return 'say"hi\\()';
  return `m${m}()`;
}

before(async () => {
  const events: unknown[] = [];
  for (let v = 0; v < 6; v++) {
    const vmId = `vm-${v}`;
    const time = NOW - (v + 1) * DAY;
    events.push({ type: 'vm.start', vmId, time, agentVersion: '1', agentRevision: 'r', inventory: { hostName: vmId }, tags: { AppEnv: `env-${v % 2}` } });
    const items = [];
    // Runs of one JAR that recur within an event: its sourceNames are each given once.
    for (let c = v * 40; c < v * 40 + 120; c++) for (let m = 0; m < 1 + (c % 5); m++) items.push({ sourceName: `lib-${c % 9}.jar`, className: `com/acme/C${c}`, methodName: methodName(c, m) });
    events.push({ type: 'code', vmId, time: time + 1, items });
  }
  const validated = validateEvents(events, NOW);
  const single = openEmpty();
  await new Ingestor(single.store, single.dict).ingest(() => validated, NOW);
  stores.push(single);
  // As a node applies them from the log: the command encoded, decoded, and its events for the node's group.
  const logged = (command: Command) => decodeCommand(encodeCommand(command)) as Extract<Command, { kind: 'events' }>;
  for (const [command, of] of [
    [eventsCommand(validated, NOW, 1), 0], [eventsCommand(validated, NOW, 2), 0], [eventsCommand(validated, NOW, 2), 1],
    [legacyCommand(validated, 2), 0], [legacyCommand(validated, 2), 1],
    [{ kind: 'events', events: packRecords(validated), receivedAt: NOW }, 0],
  ] as const) {
    const opened = openEmpty();
    const { decode, receivedAt } = loggedEvents(logged(command), of);
    await new Ingestor(opened.store, opened.dict).ingest(decode, receivedAt);
    stores.push(opened);
  }
});
after(async () => {
  for (const { store } of stores) await store.close();
});

const classKeys = (store: Store): string[] => [...store.fleetCode.getKeys()].map((key) => (key as string[]).join(' '));

test('a class\'s group is a fixed function of its names (the cluster\'s format), and groups share the classes about evenly', () => {
  // FNV-1a 32-bit over the className's last 32 code units: changing it would move classes between groups across versions.
  assert.equal(codeGroupOf('com/acme/A', 1_000_003), 442_387);
  assert.equal(codeGroupOf('org/springframework/context/support/AbstractApplicationContext', 1_000_003), 811_473);
  assert.equal(codeGroupOf('', 7), 0x811c9dc5 % 7);
  // Classes of one package, and the inner classes of one class, spread over the groups.
  for (const name of [(c: number) => `org/acme/very/long/package/name/for/the/test/Service${c}`, (c: number) => `com/acme/Outer$${c}`]) {
    const counts = [0, 0, 0];
    for (let c = 0; c < 3000; c++) counts[codeGroupOf(name(c), 3)]++;
    for (const count of counts) assert.ok(count > 850 && count < 1150, counts.join(', '));
  }
});

/** Each class's methods and times, each VM's sourceNames. */
function contents({ store, dict }: Opened): { classes: Record<string, unknown>; sources: string[][] } {
  const classes: Record<string, unknown> = {};
  for (const key of classKeys(store)) classes[key] = readClassTimes(store, key.split(' '));
  const sources: string[][] = [];
  for (let row = 0; row < 6; row++) sources.push([...new Uint32Array(Uint8Array.from(store.usedSources.getBinary(row)!).buffer)].map((id) => dict.lookup(id)!).sort());
  return { classes, sources };
}

test('a cluster without groups stores from the log what a single node stores', () => {
  const [single, oneGroup] = stores;
  assert.deepEqual(contents(oneGroup), contents(single));
  assert.equal(Object.keys(contents(single).classes).length, 320);
});

test('commands of logs written by earlier versions (code items as records, or events whole) give a node the same store', () => {
  const [single, , group0, group1, legacy0, legacy1, legacyWhole] = stores;
  assert.deepEqual(contents(legacy0), contents(group0));
  assert.deepEqual(contents(legacy1), contents(group1));
  assert.deepEqual(contents(legacyWhole), contents(single), 'a cluster without groups logged the events whole');
});

test('a node of one group is given that group\'s code items and every VM-side fact: its store keeps the group\'s classes, with the same times', () => {
  const [all, , group0, group1] = stores;
  const keys = [classKeys(group0.store), classKeys(group1.store)];
  keys.forEach((held, of) => {
    assert.ok(held.length > 50, `group ${of}: ${held.length} classes`);
    for (const key of held) assert.equal(codeGroupOf(key.split(' ')[1], 2), of);
  });
  assert.deepEqual([...keys[0], ...keys[1]].sort(), classKeys(all.store).sort());
  for (const [of, { store }] of [group0, group1].entries()) {
    for (const key of keys[of].slice(0, 40)) assert.deepEqual(readClassTimes(store, key.split(' ')), readClassTimes(all.store, key.split(' ')), key);
  }
  // The VMs, and the sourceNames each loaded code from, are every store's.
  for (const { store, dict } of [group0, group1]) {
    assert.equal(store.vmScan.getKeysCount(), all.store.vmScan.getKeysCount());
    for (let row = 0; row < 6; row++) {
      const sources = (opened: Opened) => [...new Uint32Array(Uint8Array.from(opened.store.usedSources.getBinary(row)!).buffer)].map((id) => opened.dict.lookup(id)).sort();
      assert.deepEqual(sources({ store, dict }), sources(all));
    }
  }
});

function request(body: Record<string, unknown>): ReportRequest {
  return parseReportRequest('codeInventory', { from: new Date(NOW - 60 * DAY).toISOString(), ...body }, NOW, 300_000).request;
}

function context({ store, dict }: Opened) {
  const fleet = new FleetColumns(store);
  fleet.reload();
  return { store, dict, fleet: fleet.view(), rowOrder: new RowOrder() };
}

/** A store's classes, scanned in chunks of about `methods` methods, each resuming after the last class of the one before. */
function inChunks({ store }: Opened, report: ReportRequest, methods: number): { classes: ClassMethods[]; chunks: number } {
  const times = new SlotTimes(store);
  const classes: ClassMethods[] = [];
  let after: string[] | null = null;
  let chunks = 0;
  do {
    chunks++;
    after = scanCode(store, report, times, null, null, (cls) => classes.push(cls), { after, methods });
  } while (after !== null);
  return { classes, chunks };
}

/** A store's classes as a code group's node gives them (timedCode), in chunks of about `methods` methods, each through msgpack as between nodes. */
function timedInChunks({ store }: Opened, report: ReportRequest, methods: number): TimedClasses[] {
  const times = new SlotTimes(store);
  const chunks: TimedClasses[] = [];
  let after: string[] | null = null;
  do {
    const chunk = timedCode(store, report, times, null, null, { after, methods });
    chunks.push(unpackRecords(packRecords(chunk.classes)) as TimedClasses);
    after = chunk.last;
  } while (after !== null);
  return chunks;
}

/** The report's items as JSON, encoded from classes by `encode`. */
function encodedJson(report: ReportRequest, encode: (encoder: CodeItemEncoder) => void): string {
  const items = new ChunkedItems();
  encode(new CodeItemEncoder(report.groupBy.length === 3, items));
  return items.finish().map((chunk) => Buffer.from(chunk.json).toString('utf8')).join('');
}

for (const body of [{}, { from: new Date(NOW - 3.5 * DAY).toISOString() }, { groupBy: ['sourceName', 'className', 'methodName'] }, { groupBy: ['sourceName'] }, { filter: ["AppEnv = 'env-1'"] }, { filter: ["methodName = 'größe()'"] }, { groupBy: ['sourceName', 'className'], sortBy: ['count=DESC'] }]) {
  test(`the groups' classes in chunks, merged, give one store's items: ${JSON.stringify(body)}`, () => {
    const report = request(body);
    const [all, , group0, group1] = stores;
    const whole = codePartition(context(all), report, new SlotTimes(all.store), null, null);
    assert.ok(whole.some((cls) => cls.methods.includes('say"hi\\()')) || body.filter !== undefined, 'names that need escapes are in the report');
    // About 20 chunks, however many methods pass the filter.
    const perChunk = Math.max(1, Math.floor(whole.reduce((sum, cls) => sum + cls.methods.length, 0) / 20));
    const chunked = inChunks(all, report, perChunk);
    assert.ok(chunked.chunks > 10, `${chunked.chunks} chunks`);
    assert.deepEqual(chunked.classes, whole, 'chunks resume where the last stopped, without a class twice or missed');
    const timed = timedInChunks(all, report, perChunk);
    assert.ok(timed.length > 10, `${timed.length} chunks`);
    assert.deepEqual(timed.flatMap(classMethodsOf), whole, 'as bytes, resumed chunk after chunk, the same classes, methods and times');
    const groups = [timedInChunks(group0, report, Math.ceil(perChunk / 2)), timedInChunks(group1, report, 1_000_000)];
    const expected = codeFinalize(report, [whole]);
    assert.deepEqual(codeFinalize(report, groups.map((chunks) => chunks.flatMap(classMethodsOf))), expected);
    assert.deepEqual(codeFinalize(report, [groups[1], groups[0]].map((chunks) => chunks.flatMap(classMethodsOf))), expected, 'whatever the order of the groups');
    if (!codeItemsInKeyOrder(report)) return;
    // The pages of a report in key order: each method's name copied from the groups' bytes, as one store encodes its own classes.
    const merged = encodedJson(report, (encoder) => {
      for (const cls of classesInKeyOrder([groups[1], groups[0]].map(timedClassList))) encoder.addTimed(cls);
    });
    assert.equal(merged, encodedJson(report, (encoder) => whole.forEach((cls) => encoder.add(cls))));
    assert.deepEqual(JSON.parse(`[${merged.slice(0, -1)}]`), expected);
  });
}

test('a group\'s classes larger than the first buffer they are written to read back whole', async () => {
  const opened = openEmpty();
  const vmId = 'vm-big';
  const items = Array.from({ length: 4_000 }, (_, m) => ({ sourceName: 'big.jar', className: `com/acme/Big${m % 3}`, methodName: `a_method_with_a_rather_long_name_${m}()` }));
  const events = validateEvents([{ type: 'vm.start', vmId, time: NOW - DAY, agentVersion: '1', agentRevision: 'r', inventory: {} }, { type: 'code', vmId, time: NOW - DAY, items }], NOW);
  await new Ingestor(opened.store, opened.dict).ingest(() => events, NOW);
  const report = request({});
  const { classes, last } = timedCode(opened.store, report, new SlotTimes(opened.store), null, null);
  assert.equal(last, null);
  assert.ok(classes.methods.length > 1 << 17, `${classes.methods.length} bytes`);
  assert.deepEqual(classMethodsOf(classes), codePartition(context(opened), report, new SlotTimes(opened.store), null, null));
  await opened.store.close();
});
