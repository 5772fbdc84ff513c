// The fleet's id arenas: two bytes an id while every id fits, four from the first that does not, with every
// list kept and the views handed out before left as they were.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { FleetColumns, spanOf } from '../../src/storage/fleet-columns.ts';
import { bufferOf, openStore } from '../../src/storage/store.ts';
import type { Store } from '../../src/storage/store.ts';
import { tempDir } from '../helpers/service.ts';

let store: Store;

before(() => {
  store = openStore(tempDir());
});
after(() => store.close());

/** Stores row's components as the ingestion does: (component id, source id) pairs. */
async function putComponents(row: number, ids: readonly number[]): Promise<void> {
  await store.vmComponents.put(row, bufferOf(Uint32Array.from(ids.flatMap((id) => [id, 0]))));
}

function componentsOf(columns: FleetColumns, row: number): number[] {
  const view = columns.view();
  return [...spanOf(view.componentSpans, view.componentArena, row)];
}

test('component ids take two bytes until one does not fit, then four, and no list is lost', async () => {
  const columns = new FleetColumns(store);
  const small = Array.from({ length: 100 }, (_, row) => [row, row + 1, 65_535 - row]);
  for (const [row, ids] of small.entries()) await putComponents(row, ids);
  columns.refresh([], small.keys());
  const before = columns.view();
  assert.ok(before.componentArena instanceof Uint16Array);
  for (const [row, ids] of small.entries()) assert.deepEqual(componentsOf(columns, row), ids);

  await putComponents(100, [7, 65_536, 4_000_000_000]);
  columns.refresh([], [100]);
  assert.ok(columns.view().componentArena instanceof Uint32Array);
  assert.deepEqual(componentsOf(columns, 100), [7, 65_536, 4_000_000_000]);
  for (const [row, ids] of small.entries()) assert.deepEqual(componentsOf(columns, row), ids);
  // A task that took the view before keeps reading the two-byte lists it was given.
  assert.ok(before.componentArena instanceof Uint16Array);
  assert.deepEqual([...spanOf(before.componentSpans, before.componentArena, 99)], small[99]);

  // Once wide, it stays wide, and a reload of a store with large ids starts wide.
  await putComponents(0, [1, 2]);
  columns.refresh([], [0]);
  assert.ok(columns.view().componentArena instanceof Uint32Array);
  await store.meta.put('rowNext', 101);
  const reloaded = new FleetColumns(store);
  reloaded.reload();
  assert.ok(reloaded.view().componentArena instanceof Uint32Array);
  assert.deepEqual(componentsOf(reloaded, 100), [7, 65_536, 4_000_000_000]);
  assert.deepEqual(componentsOf(reloaded, 0), [1, 2]);
});
