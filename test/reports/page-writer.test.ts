// PageWriter cuts nested items (component reports grouped by fields) into pages: each page is the JSON that
// JSON.stringify gives for its items nested one level per field (interface §2.4), within the budget, and the pages hold every item in order,
// with pages' buffers filled again once written.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { PageWriter } from '../../src/engine/reports/pages.ts';
import { seeded } from '../../src/seed/random.ts';
import { openStore } from '../../src/storage/store.ts';
import type { Store } from '../../src/storage/store.ts';
import { tempDir } from '../helpers/service.ts';
import { nest } from './expected.ts';

const RESERVE = 120;
let store: Store;
before(() => (store = openStore(tempDir())));
after(() => store.close());

/** Items sorted by host then team (groups contiguous), with nulls, escapes and names beyond ASCII. */
function items(count: number): Record<string, unknown>[] {
  const rnd = seeded(7);
  const hosts = ['a-host', 'b "quoted"', 'c\\slash', 'Zürich', '東京', null];
  const out: Record<string, unknown>[] = [];
  for (const hostName of hosts) {
    for (const team of ['ops', 'pay', null]) {
      for (let k = 0; k < 1 + Math.floor(rnd() * (count / 10)); k++) out.push({ hostName, 'tags.team': team, componentName: `lib-${k}`, componentVersion: '1.0', count: k + 1 });
    }
  }
  return out;
}

for (const nesting of [[], ['hostName'], ['hostName', 'tags.team']]) {
  test(`pages are nest() as JSON, within the budget, every item in order (nesting ${JSON.stringify(nesting)})`, async () => {
    const all = items(200);
    for (const pageBytes of [400, 1_000, 5_000, 1_000_000]) {
      const reportId = `0b9e7c3a-1d2f-4e5a-8b6c-${String(pageBytes).padStart(6, '0')}${nesting.length}00000`;
      const writer = new PageWriter(store, reportId, pageBytes, RESERVE, nesting);
      // As a kernel does: a few pages in flight, the buffers of written ones filled again.
      let settled = 0;
      for (const item of all) {
        writer.add(item);
        if (writer.mustSettle) {
          await writer.settle();
          settled++;
        }
      }
      const totals = await writer.finish();
      if (pageBytes === 400) assert.ok(settled > 0, 'the writer had more pages in flight than it keeps');
      assert.equal(totals.totalCount, all.length);
      const read: Record<string, unknown>[] = [];
      for (let page = 0; page < totals.totalPages; page++) {
        const json = (await store.pageFiles.json(reportId, page))!.toString();
        assert.ok(Buffer.byteLength(json) <= pageBytes - RESERVE, `page ${page} of ${totals.totalPages} is ${Buffer.byteLength(json)} bytes (${pageBytes})`);
        const flat = flatten(JSON.parse(json), nesting);
        assert.equal(json, JSON.stringify(nest(flat, nesting)), `page ${page} (${pageBytes})`);
        read.push(...flat);
      }
      assert.deepEqual(read, all, `every item in order (${pageBytes})`);
      if (pageBytes === 400) assert.ok(totals.totalPages > 10, `${totals.totalPages} pages`);
    }
  });
}

function flatten(data: unknown[], nesting: readonly string[]): Record<string, unknown>[] {
  if (nesting.length === 0) return data as Record<string, unknown>[];
  return (data as { data: unknown[] }[]).flatMap((level) => flatten(level.data, nesting.slice(1)));
}
