// The code report's fast path: items encoded by the partitions and cut into pages by byte counts, or
// encoded straight into pages by a report's only partition, give exactly the pages of the general path (PageWriter over codeFinalize's items), in JSON and msgpack; a page's
// msgpack is made from its JSON when first read.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { unpack } from 'msgpackr';
import { codeFinalize } from '../../src/engine/reports/kernels/code.ts';
import { CodeItemEncoder } from '../../src/engine/reports/kernels/code-items.ts';
import { codeTime } from '../../src/engine/reports/time-bytes.ts';
import type { ClassMethods } from '../../src/engine/reports/kernels/class-methods.ts';
import { ChunkedItems } from '../../src/engine/reports/encoded-items.ts';
import type { EncodedItems } from '../../src/engine/reports/encoded-items.ts';
import { deletePages, msgpackPage, PagedItems, PageWriter, putPage, writeEncodedPages } from '../../src/engine/reports/pages.ts';
import type { PageTotals } from '../../src/engine/reports/pages.ts';
import type { ReportRequest } from '../../src/engine/reports/report-types.ts';
import { openStore } from '../../src/storage/store.ts';
import type { Store } from '../../src/storage/store.ts';
import { seeded } from '../../src/seed/random.ts';
import { tempDir } from '../helpers/service.ts';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 22, 3, 0, 0);

function encodeCodeItems(classes: readonly ClassMethods[], withCount: boolean): EncodedItems[] {
  const chunks = new ChunkedItems();
  const encoder = new CodeItemEncoder(withCount, chunks);
  for (const cls of classes) encoder.add(cls);
  return chunks.finish();
}

/** The pages of a report's only partition: items encoded straight into pages, written class by class. */
async function pagedCodeItems(reportId: string, classes: readonly ClassMethods[], withCount: boolean, pageBytes: number, reserve: number): Promise<PageTotals> {
  const pages = new PagedItems(store, reportId, pageBytes, reserve);
  const encoder = new CodeItemEncoder(withCount, pages);
  for (const cls of classes) {
    encoder.add(cls);
    await pages.write();
  }
  return pages.finish();
}

function request(groupBy: string[]): ReportRequest {
  return { family: 'codeInventory', conditions: [], groupBy, sortBy: [], from: 0, to: NOW, detail: false, now: NOW, offlineAfterMs: 1_800_000 };
}

// Names that need JSON escapes, multi-byte UTF-8, and lengths past each msgpack string header (31, 255, 65,535 bytes).
const NAMES = ['run()', 'say"hi"(\\)', 'tab\there', 'Zürich()', '東京()', '😀(int)', 'x'.repeat(31), 'y'.repeat(32), 'z'.repeat(255), 'w'.repeat(256), 'v'.repeat(70_000), '\u0001ctl'];

/** Partitions of classes in key order (sourceName, then className), with random methods and times (some on day edges). */
function partitions(rnd: () => number, count: number, names: readonly string[]): ClassMethods[][] {
  const result: ClassMethods[][] = [];
  let cls = 0;
  for (let p = 0; p < count; p++) {
    const classes: ClassMethods[] = [];
    for (let c = Math.floor(rnd() * 6); c > 0; c--, cls++) {
      const methods = [...new Set(Array.from({ length: 1 + Math.floor(rnd() * 8) }, () => `${names[Math.floor(rnd() * names.length)]}${Math.floor(rnd() * 5)}`))].sort();
      const firstSeen = methods.map(() => NOW - Math.floor(rnd() * 40) * DAY - (rnd() < 0.3 ? 0 : Math.floor(rnd() * DAY)));
      classes.push({ sourceName: `lib-${String(Math.floor(cls / 4)).padStart(3, '0')}.jar`, className: `com/acme/C${String(cls).padStart(4, '0')}`, methods, firstSeen, lastSeen: firstSeen.map((t) => t + Math.floor(rnd() * 3 * DAY)) });
    }
    result.push(classes);
  }
  return result;
}

interface Pages {
  json: unknown[][];
  msgpack: unknown[][];
  bytes: number[];
}

async function readPages(store: Store, reportId: string, totalPages: number): Promise<Pages> {
  const pages: Pages = { json: [], msgpack: [], bytes: [] };
  for (let page = 0; page < totalPages; page++) {
    const json = (await store.pageFiles.json(reportId, page))!;
    pages.json.push(JSON.parse(json.toString('utf8')) as unknown[]);
    pages.bytes.push(json.length);
    pages.msgpack.push(unpack((await msgpackPage(store, reportId, page))!) as unknown[]);
  }
  return pages;
}

let store: Store;
before(() => {
  store = openStore(tempDir());
});
after(() => store.close());

describe('encoded code items', () => {
  it('codeTime writes what toISOString writes, without the zone', () => {
    const rnd = seeded(5);
    const utc = (iso: string) => new Date(iso).getTime();
    const times = [0, 1, 999, 1000, -1, -DAY, DAY - 1, DAY, NOW, Date.UTC(2024, 1, 29, 23, 59, 59, 999), Date.UTC(9999, 11, 31, 23, 59, 59, 999)];
    // Around leap days (1900 and 2100 have none, 1600 and 2000 have one) and the ends of the years 0–9999.
    for (const iso of ['1600-02-29', '1900-02-28', '1900-03-01', '2000-02-29', '2000-03-01', '2100-02-28', '2100-03-01', '0000-01-01', '0000-02-29', '0000-03-01', '10000-01-01']) {
      times.push(utc(`${iso.length > 10 ? `+0${iso}` : iso}T00:00:00.000Z`) - 1, utc(`${iso.length > 10 ? `+0${iso}` : iso}T00:00:00.000Z`));
    }
    for (let k = 0; k < 20_000; k++) times.push(Math.floor(rnd() * 4e12));
    // Any time in the years 0–9999, and beyond them.
    for (let k = 0; k < 20_000; k++) times.push(Math.floor(utc('0000-01-01T00:00:00.000Z') + rnd() * 3.2e14));
    for (const time of times) assert.equal(codeTime(time), new Date(time).toISOString().slice(0, 23), String(time));
  });

  for (const groupBy of [[], ['sourceName', 'className', 'methodName']]) {
    it(`pages equal the general path's, cut at the same items (groupBy ${JSON.stringify(groupBy)})`, async () => {
      const rnd = seeded(groupBy.length + 1);
      for (const [round, pageBytes] of [100_000, 1_000, 700, 300_000].entries()) {
        // The longest names only where a page holds them.
        const parts = partitions(rnd, 1 + Math.floor(rnd() * 6), NAMES.filter((name) => name.length * 2 < pageBytes));
        const items = codeFinalize(request(groupBy), parts);
        const general = new PageWriter(store, `general-${groupBy.length}-${round}`, pageBytes, 120);
        for (const item of items) general.add(item);
        const expected = await general.finish();
        const chunks = parts.flatMap((classes) => encodeCodeItems(classes, groupBy.length === 3));
        const totals = await writeEncodedPages(store, `encoded-${groupBy.length}-${round}`, pageBytes, 120, chunks);
        assert.deepEqual(totals, expected, `page bytes ${pageBytes}`);
        const want = await readPages(store, `general-${groupBy.length}-${round}`, expected.totalPages);
        const got = await readPages(store, `encoded-${groupBy.length}-${round}`, totals.totalPages);
        assert.deepEqual(got, want, `page bytes ${pageBytes}`);
        assert.deepEqual(got.json.flat(), items);
        assert.ok(got.bytes.every((bytes) => bytes <= pageBytes - 120));
        const paged = await pagedCodeItems(`paged-${groupBy.length}-${round}`, parts.flat(), groupBy.length === 3, pageBytes, 120);
        assert.deepEqual(paged, expected, `page bytes ${pageBytes}, straight into pages`);
        assert.deepEqual(await readPages(store, `paged-${groupBy.length}-${round}`, paged.totalPages), want, `page bytes ${pageBytes}, straight into pages`);
      }
    });
  }

  it('a partition of many megabytes comes in several chunks that give the same pages', async () => {
    const methods = Array.from({ length: 40_000 }, (_, m) => `method${String(m).padStart(6, '0')}(java.lang.String, int)`);
    const classes: ClassMethods[] = [0, 1].map((c) => ({ sourceName: 'big.jar', className: `com/acme/Big${c}`, methods, firstSeen: methods.map((_, m) => NOW - m * 1000), lastSeen: methods.map(() => NOW) }));
    const chunks = encodeCodeItems(classes, false);
    assert.ok(chunks.length > 1, `${chunks.length} chunk(s)`);
    const items = codeFinalize(request([]), [classes]);
    const general = new PageWriter(store, 'chunks-general', 5_500_000, 120);
    for (const item of items) general.add(item);
    const expected = await general.finish();
    const totals = await writeEncodedPages(store, 'chunks-encoded', 5_500_000, 120, chunks);
    assert.deepEqual(totals, expected);
    assert.deepEqual((await readPages(store, 'chunks-encoded', totals.totalPages)).json, (await readPages(store, 'chunks-general', expected.totalPages)).json);
  });

  it('no items give one empty page; an item larger than a page is refused', async () => {
    assert.deepEqual(await writeEncodedPages(store, 'empty', 1000, 100, encodeCodeItems([], false)), { totalCount: 0, totalPages: 1 });
    assert.deepEqual(await readPages(store, 'empty', 1), { json: [[]], msgpack: [[]], bytes: [2] });
    const large: ClassMethods[] = [{ sourceName: 'a.jar', className: 'A', methods: ['m'.repeat(2000)], firstSeen: [NOW], lastSeen: [NOW] }];
    await assert.rejects(writeEncodedPages(store, 'large', 1000, 100, encodeCodeItems(large, false)), /more than a page holds/);
    assert.deepEqual(await pagedCodeItems('paged-empty', [], false, 1000, 100), { totalCount: 0, totalPages: 1 });
    assert.deepEqual(await readPages(store, 'paged-empty', 1), { json: [[]], msgpack: [[]], bytes: [2] });
    await assert.rejects(pagedCodeItems('paged-large', large, false, 1000, 100), /more than a page holds/);
  });
});

describe("a page's msgpack", () => {
  it('is made from its JSON at the first msgpack read and kept beside it, until the page is deleted', async () => {
    const data = [{ sourceName: 'ü.jar', className: 'p/A', methodName: 'run()', firstSeen: '2026-01-01T00:00:00.000', lastSeen: '2026-01-02T00:00:00.000' }];
    await putPage(store, 'lazy', 0, Buffer.from(JSON.stringify(data)));
    assert.equal(await store.pageFiles.msgpack('lazy', 0), undefined, 'no msgpack is written with the page');
    assert.deepEqual(unpack((await msgpackPage(store, 'lazy', 0))!), data);
    for (let wait = 0; wait < 100 && (await store.pageFiles.msgpack('lazy', 0)) === undefined; wait++) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(unpack((await store.pageFiles.msgpack('lazy', 0))!), data, 'kept for the next msgpack read');
    await deletePages(store, 'lazy');
    assert.equal(await msgpackPage(store, 'lazy', 0), undefined, 'a deleted page has no msgpack either');
    assert.equal(await store.pageFiles.msgpack('lazy', 0), undefined);
    assert.equal(await store.pageFiles.json('lazy', 0), undefined);
  });
});
