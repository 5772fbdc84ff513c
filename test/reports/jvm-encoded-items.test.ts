// The ungrouped JVM report's fast path: items encoded by the partitions, merged by (hostName, vmId), give
// exactly the pages of the general path (objects sorted by jvmFinalize, cut by PageWriter), JSON and msgpack;
// the order a worker keeps between reports follows new VMs and changed hosts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { unpack } from 'msgpackr';
import { jvmFinalize, jvmItemRuns, jvmPartition } from '../../src/engine/reports/kernels/jvm.ts';
import type { JvmPartial } from '../../src/engine/reports/kernels/jvm.ts';
import { mergeJvmItems } from '../../src/engine/reports/kernels/jvm-items.ts';
import { RowOrder } from '../../src/engine/reports/kernels/row-order.ts';
import type { EncodedJvmItems } from '../../src/engine/reports/kernels/jvm-items.ts';
import { msgpackPage, PageWriter, writeEncodedPages } from '../../src/engine/reports/pages.ts';
import type { ReportRequest } from '../../src/engine/reports/report-types.ts';
import { validateEvents } from '../../src/ingest/events.ts';
import { Dictionary } from '../../src/storage/dictionary.ts';
import { FleetColumns } from '../../src/storage/fleet-columns.ts';
import { Ingestor } from '../../src/storage/ingest.ts';
import { openStore } from '../../src/storage/store.ts';
import type { Store } from '../../src/storage/store.ts';
import { seeded } from '../../src/seed/random.ts';
import { tempDir } from '../helpers/service.ts';

const DAY = 86_400_000;
const now = Date.now();
// Host names and other VM fields that need JSON escapes and multi-byte UTF-8, tag values with every
// character tags allow, more tags than a msgpack fixmap holds, hosts shared by several VMs (then vmId decides;
// 'web-1' by 30) and VMs without a host name (sorted last).
const HOSTS = ['web-1', 'web-1', 'Zürich-3', '東京-2', 'say"hi"', 'back\\slash', 'x'.repeat(40), 'a', null];
const TAGS: Record<string, string>[] = [{}, { env: 'prod', team: 'pay' }, Object.fromEntries(Array.from({ length: 17 }, (_, k) => [`k${k}`, `v${k}`])), { env: 'a b:c/d@e_f.g-h', team: 'x' }, { AppEnv: 'shop' }];

let store: Store;
let columns: FleetColumns;
let dict: Dictionary;

before(async () => {
  store = openStore(tempDir());
  dict = new Dictionary(store);
  const rnd = seeded(7);
  const events: unknown[] = [];
  for (let v = 0; v < 120; v++) {
    const vmId = `vm-${String(Math.floor(rnd() * 1e6)).padStart(6, '0')}-${v}`;
    const time = now - Math.floor(rnd() * 10 * DAY);
    events.push({
      type: 'vm.start', vmId, time, agentVersion: v % 3 === 0 ? '1.0' : 'ünï', agentRevision: 'r',
      inventory: { ...(HOSTS[v % HOSTS.length] === null ? {} : { hostName: HOSTS[v % HOSTS.length] }), systemProperties: { 'java.version': '21', ...(v % 4 === 0 ? {} : { 'java.vm.vendor': 'Ven"dor' }) } },
      tags: TAGS[v % TAGS.length],
    });
    if (v % 5 === 0) events.push({ type: 'vm.stop', vmId, time: time + 1000 });
  }
  await new Ingestor(store, dict).ingest(() => validateEvents(events, now));
  columns = new FleetColumns(store);
  columns.reload();
});
after(() => store.close());

function request(sortBy: ReportRequest['sortBy']): ReportRequest {
  return { family: 'jvmInventory', conditions: [], groupBy: [], sortBy, from: now - 30 * DAY, to: now, detail: false, now, offlineAfterMs: 300_000 };
}

async function pages(reportId: string, totalPages: number): Promise<{ json: unknown[]; msgpack: unknown[] }> {
  const json: unknown[] = [];
  const msgpack: unknown[] = [];
  for (let page = 0; page < totalPages; page++) {
    json.push(JSON.parse((await store.pageFiles.json(reportId, page))!.toString('utf8')));
    msgpack.push(unpack((await msgpackPage(store, reportId, page))!));
  }
  return { json, msgpack };
}

describe('encoded JVM items', () => {
  for (const partitionCount of [1, 3, 7]) {
    it(`equal the general path's pages over ${partitionCount} partition(s)`, async () => {
      const context = { store, dict, fleet: columns.view(), rowOrder: new RowOrder() };
      const size = Math.ceil(columns.view().rows / partitionCount);
      const ranges = Array.from({ length: partitionCount }, (_, k) => [k * size, (k + 1) * size] as const);
      // The general path: explicit sortBy equal to the default order makes the kernels build objects.
      const byDefault = request([{ field: 'hostName', direction: 'ASC' }, { field: 'vmId', direction: 'ASC' }]);
      const items = jvmFinalize(byDefault, ranges.map(([start, end]) => jvmPartition(context, byDefault, start, end)));
      assert.ok(items.length > 100, 'the fleet is in the report');
      const encoded = ranges.map(([start, end]) => jvmPartition(context, request([]), start, end));
      assert.ok(encoded.every((partial: JvmPartial) => partial.kind === 'encoded'));
      for (const pageBytes of [1_000_000, 2_000, 900]) {
        const general = new PageWriter(store, `general-${partitionCount}-${pageBytes}`, pageBytes, 100);
        for (const item of items) general.add(item);
        const expected = await general.finish();
        const merged = mergeJvmItems(encoded as EncodedJvmItems[]);
        const totals = await writeEncodedPages(store, `encoded-${partitionCount}-${pageBytes}`, pageBytes, 100, [merged]);
        assert.deepEqual(totals, expected);
        const got = await pages(`encoded-${partitionCount}-${pageBytes}`, totals.totalPages);
        assert.deepEqual(got, await pages(`general-${partitionCount}-${pageBytes}`, expected.totalPages));
        assert.deepEqual(got.json.flat(), items);
      }
    });
  }
});

/** The ungrouped report's items through the encoded path with this kept order, and through the general path. */
function bothWays(rowOrder: RowOrder): { encoded: unknown[]; general: unknown[] } {
  const context = { store, dict, fleet: columns.view(), rowOrder };
  const rows = columns.view().rows;
  const byDefault = request([{ field: 'hostName', direction: 'ASC' }, { field: 'vmId', direction: 'ASC' }]);
  const general = jvmFinalize(byDefault, [jvmPartition(context, byDefault, 0, rows)]);
  const partial = jvmPartition(context, request([]), 0, rows) as EncodedJvmItems;
  const json = Buffer.from(partial.items.json).toString('utf8');
  return { encoded: JSON.parse(`[${json.slice(0, -1)}]`) as unknown[], general };
}

describe('encoded JVM items run by run', () => {
  it('are the bytes of all items at once, whatever the runs', () => {
    const context = { store, dict, fleet: columns.view(), rowOrder: new RowOrder() };
    const whole = jvmItemRuns(context, request([]), 0, columns.view().rows);
    const all = whole.all().items;
    for (const cuts of [[1], [7, 8, 50], [whole.count - 1]]) {
      const items = jvmItemRuns(context, request([]), 0, columns.view().rows);
      const bounds = [0, ...cuts, items.count];
      const runs = bounds.slice(1).map((to, k) => items.encode(bounds[k], to));
      assert.deepEqual(Buffer.concat(runs.map((run) => run.json)), Buffer.from(all.json));
      assert.deepEqual(runs.map((run) => run.count), bounds.slice(1).map((to, k) => to - bounds[k]));
    }
  });
});

describe('the row order a worker keeps between reports', () => {
  it('takes in new VMs and re-sorts after a host changes', async () => {
    const rowOrder = new RowOrder();
    const before = bothWays(rowOrder);
    assert.deepEqual(before.encoded, before.general);
    // New VMs whose hosts sort first, last, between the others, and none: merged into the kept order.
    const time = now - DAY;
    const added = ['0-first', 'web-1', 'zzz-last', 'Zürich-3', null].map((host, k) => ({
      type: 'vm.start', vmId: `added-${k}`, time, agentVersion: '1', agentRevision: 'r',
      inventory: host === null ? {} : { hostName: host }, tags: {},
    }));
    await new Ingestor(store, dict).ingest(() => validateEvents(added, now));
    columns.reload();
    const merged = bothWays(rowOrder);
    assert.equal(merged.encoded.length, before.encoded.length + added.length);
    assert.deepEqual(merged.encoded, merged.general);
    // A later start of a known VM on another host moves it: the kept order is made afresh.
    const moved = { ...added[1], time: time + 1000, inventory: { hostName: '0-0-moved' } };
    await new Ingestor(store, dict).ingest(() => validateEvents([moved], now));
    columns.reload();
    const resorted = bothWays(rowOrder);
    assert.equal((resorted.encoded[0] as { vmId: string }).vmId, 'added-1');
    assert.deepEqual(resorted.encoded, resorted.general);
  });
});
