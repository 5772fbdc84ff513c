// The code report's fast path over fleet-wide class records: items encoded from the records' bytes equal
// the items of the general path (decoded records, codeFinalize), whatever the names hold.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { codeFinalize, codePartition, encodeCode, encodesRecords } from '../../src/engine/reports/kernels/code.ts';
import { CodeItemEncoder } from '../../src/engine/reports/kernels/code-items.ts';
import type { ReportRequest } from '../../src/engine/reports/report-types.ts';
import { parseReportRequest } from '../../src/engine/reports/report-request.ts';
import { validateEvents } from '../../src/ingest/events.ts';
import { SlotTimes } from '../../src/storage/code-times.ts';
import { Dictionary } from '../../src/storage/dictionary.ts';
import { FleetColumns } from '../../src/storage/fleet-columns.ts';
import { Ingestor } from '../../src/storage/ingest.ts';
import { openStore } from '../../src/storage/store.ts';
import type { Store } from '../../src/storage/store.ts';
import { tempDir } from '../helpers/service.ts';
import { RowOrder } from '../../src/engine/reports/kernels/row-order.ts';
import { ChunkedItems } from '../../src/engine/reports/encoded-items.ts';
import type { EncodedItems } from '../../src/engine/reports/encoded-items.ts';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 25, 12, 0, 0);
// A quote or backslash (one name escaped, the rest of its class copied), control characters, and names
// beyond ASCII (the class decoded instead).
const NAMES = ['run()', 'say"hi"()', 'back\\slash()', 'tab\there()', '\u0001ctl()', 'Zürich()', '東京()', '😀(int)', 'x'.repeat(300)];

let store: Store;
let dict: Dictionary;

before(async () => {
  store = openStore(tempDir());
  dict = new Dictionary(store);
  const events: unknown[] = [];
  for (let v = 0; v < 12; v++) {
    const vmId = `vm-${v}`;
    const time = NOW - (v + 1) * 3 * DAY;
    events.push({ type: 'vm.start', vmId, time, agentVersion: '1', agentRevision: 'r', inventory: { hostName: vmId }, tags: { AppEnv: `env-${v % 3}` } });
    // Classes with only ASCII names and classes with others, each seen by several VMs and AppEnvs at different times.
    const items = [0, 1, 2, 3].flatMap((c) => NAMES.filter((_, n) => (n + v) % 3 !== 0 && (c % 2 === 0 ? n < 5 : true)).map((methodName) => ({ sourceName: c < 2 ? 'a.jar' : 'ü.jar', className: `com/acme/C${c}`, methodName })));
    events.push({ type: 'code', vmId, time, items });
  }
  await new Ingestor(store, dict).ingest(() => validateEvents(events, NOW));
});
after(() => store.close());

function request(filter: string[], from: number, to: number): ReportRequest {
  return parseReportRequest('codeInventory', { filter, from: new Date(from).toISOString(), to: new Date(to).toISOString() }, NOW, 300_000).request;
}

for (const [name, filter, from, to] of [
  ['every method', [], NOW - 60 * DAY, NOW],
  ['a window that cuts classes', [], NOW - 20 * DAY, NOW - 10 * DAY],
  ['a sourceName filter', ['sourceName:ü'], NOW - 60 * DAY, NOW],
] as const) {
  test(`encoded from the records' bytes, ${name}: the general path's items`, () => {
    const report = request([...filter], from, to);
    assert.ok(encodesRecords(report));
    const fleet = new FleetColumns(store);
    fleet.reload();
    const context = { store, dict, fleet: fleet.view(), rowOrder: new RowOrder() };
    const times = new SlotTimes(store);
    const whole = new ChunkedItems();
    encodeCode(context.store, report, times, null, null, new CodeItemEncoder(false, whole));
    const encoded = items(whole.finish());
    const general = codeFinalize(report, [codePartition(context, report, times, null, null)]);
    assert.ok(general.length > 10, `${general.length} items`);
    assert.deepEqual(encoded, general);
    // Chunk by chunk, as a report's only partition streams its pages: each call resumes after the last record.
    const small = new ChunkedItems(300);
    const encoder = new CodeItemEncoder(false, small);
    const chunks: EncodedItems[] = [];
    let calls = 0;
    for (let after: string[] | null = null, done = false; !done; calls++) {
      after = encodeCode(context.store, report, times, null, null, encoder, { after });
      done = after === null;
      chunks.push(...(done ? small.finish() : small.takeChunks()));
    }
    assert.ok(calls >= 3, `${calls} calls`);
    assert.deepEqual(items(chunks), general);
  });
}

function items(chunks: readonly EncodedItems[]): unknown[] {
  return chunks.flatMap((chunk) => JSON.parse(`[${Buffer.from(chunk.json).toString('utf8').replace(/,$/, '')}]`) as unknown[]);
}

test('a record whose times were written after the time table was read is encoded from a copy', { timeout: 60_000 }, async () => {
  const report = request([], NOW - 60 * DAY, NOW);
  const stale = new SlotTimes(store);
  // 600 methods new to the fleet: their slots fill blocks the table read above does not hold.
  const methods = Array.from({ length: 600 }, (_, m) => ({ sourceName: 'late.jar', className: 'com/acme/Late', methodName: `m${m}()` }));
  const events = [{ type: 'vm.start', vmId: 'vm-late', time: NOW - DAY, agentVersion: '1', agentRevision: 'r', inventory: {}, tags: {} }, { type: 'code', vmId: 'vm-late', time: NOW - DAY, items: methods }];
  await new Ingestor(store, dict).ingest(() => validateEvents(events, NOW));
  store.env.resetReadTxn();
  const fleet = new FleetColumns(store);
  fleet.reload();
  const context = { store, dict, fleet: fleet.view(), rowOrder: new RowOrder() };
  const chunks = new ChunkedItems();
  encodeCode(context.store, report, stale, null, null, new CodeItemEncoder(false, chunks));
  const general = codeFinalize(report, [codePartition(context, report, new SlotTimes(store), null, null)]);
  assert.ok(general.some((item) => item.className === 'com/acme/Late'));
  assert.deepEqual(items(chunks.finish()), general);
});

test('a streamed scan stops after a few hundred records even when no page fills, and resumes where it stopped', async () => {
  const bulk = openStore(tempDir());
  try {
    const bulkDict = new Dictionary(bulk);
    // 1,300 classes of two methods: a few hundred kB of items, under one chunk.
    const code = Array.from({ length: 1300 }, (_, c) => ['run()', 'stop()'].map((methodName) => ({ sourceName: 'bulk.jar', className: `com/acme/bulk/C${String(c).padStart(4, '0')}`, methodName }))).flat();
    const events = [{ type: 'vm.start', vmId: 'bulk-vm', time: NOW - DAY, agentVersion: '1', agentRevision: 'r', inventory: { hostName: 'bulk' }, tags: {} }, { type: 'code', vmId: 'bulk-vm', time: NOW - DAY, items: code }];
    await new Ingestor(bulk, bulkDict).ingest(() => validateEvents(events, NOW));
    const report = request([], NOW - 60 * DAY, NOW);
    const fleet = new FleetColumns(bulk);
    fleet.reload();
    const context = { store: bulk, dict: bulkDict, fleet: fleet.view(), rowOrder: new RowOrder() };
    const times = new SlotTimes(bulk);
    const sink = new ChunkedItems();
    const encoder = new CodeItemEncoder(false, sink);
    const stops: string[][] = [];
    for (let after: string[] | null = null; ; ) {
      after = encodeCode(context.store, report, times, null, null, encoder, { after });
      if (after === null) break;
      assert.equal(sink.ready, false, 'no chunk is full');
      stops.push(after);
    }
    assert.deepEqual(stops.map((key) => key[1]), ['com/acme/bulk/C0499', 'com/acme/bulk/C0999'], 'after every 500 records');
    const streamed = items(sink.finish());
    assert.equal(streamed.length, 2600);
    assert.deepEqual(streamed, codeFinalize(report, [codePartition(context, report, times, null, null)]));
  } finally {
    await bulk.close();
  }
});
