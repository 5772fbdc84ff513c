// A code report's read of a fleet-wide class record in place: each method's name and the widest span of its
// slots' times, whatever order its slots lie in the times table.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeFleetClassCode } from '../../src/storage/class-code.ts';
import { RecordMethods, SLOTS_PER_BLOCK, SlotTimes, writeBlock } from '../../src/storage/code-times.ts';
import { openStore } from '../../src/storage/store.ts';
import type { Store } from '../../src/storage/store.ts';
import { tempDir } from '../helpers/service.ts';

const BLOCKS = 40;
/** Slot s was first seen at 1000 + s and last seen at 5000 + 3 s, so any two slots differ in both. */
const firstOf = (slot: number): number => 1_000 + slot;
const lastOf = (slot: number): number => 5_000 + 3 * slot;

function storeWithTimes(): Store {
  const store = openStore(tempDir());
  for (let block = 0; block < BLOCKS; block++) {
    const times = new Float64Array(2 * SLOTS_PER_BLOCK);
    for (let i = 0; i < SLOTS_PER_BLOCK; i++) {
      times[2 * i] = firstOf(block * SLOTS_PER_BLOCK + i);
      times[2 * i + 1] = lastOf(block * SLOTS_PER_BLOCK + i);
    }
    store.env.transactionSync(() => writeBlock(store, block, times));
  }
  return store;
}

/** What RecordMethods gives for a record, as [name, firstSeen, lastSeen]. */
function readAll(record: Uint8Array, times: SlotTimes, window: { from: number; to: number }): [string, number, number][] | null {
  const methods = new RecordMethods();
  if (!methods.read(record, times, window)) return null;
  const out: [string, number, number][] = [];
  while (methods.next()) out.push([Buffer.from(record.subarray(methods.start, methods.end)).toString('latin1'), methods.firstSeen, methods.lastSeen]);
  return out;
}

/** Seeded: the same records on every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

test('each method gets the earliest first and the latest last sighting of its slots, its slots in any order', () => {
  const store = storeWithTimes();
  const times = new SlotTimes(store);
  // Names in code-point order, as records keep them; slots first seen in another order, in several blocks.
  const record = encodeFleetClassCode({ methods: ['a()', 'b(int)', 'c(long)'], slots: [[9_000, 3], [700], [2, 5_000, 40]] });
  assert.deepEqual(readAll(record, times, { from: 0, to: 1e9 }), [
    ['a()', firstOf(3), lastOf(9_000)],
    ['b(int)', firstOf(700), lastOf(700)],
    ['c(long)', firstOf(2), lastOf(5_000)],
  ]);
  // A window that ends before b's and c's last sightings but after their first: all three overlap it.
  assert.deepEqual(readAll(record, times, { from: lastOf(800), to: 1e9 })?.map(([name]) => name), ['a()', 'c(long)'], 'b was last seen before the window');
  assert.deepEqual(readAll(record, times, { from: 0, to: firstOf(2) })?.map(([name]) => name), ['c(long)'], 'only c was seen by the window\'s end');
  store.close();
});

test('records of random slot tables agree with the times of each method taken one by one', () => {
  const store = storeWithTimes();
  const times = new SlotTimes(store);
  const next = random(42);
  const methods = new RecordMethods();
  for (let r = 0; r < 300; r++) {
    // Up to 200 methods of up to 6 AppEnvs: beyond the few entries a small class has.
    const count = 1 + Math.floor(next() * (r % 10 === 0 ? 200 : 12));
    const names = Array.from({ length: count }, (_, m) => `m${String(m).padStart(3, '0')}()`);
    const slots = names.map(() => Array.from({ length: 1 + Math.floor(next() * 6) }, () => Math.floor(next() * BLOCKS * SLOTS_PER_BLOCK)));
    const window = { from: lastOf(Math.floor(next() * 3_000)), to: firstOf(Math.floor(3_000 + next() * 7_000)) };
    const expected = names
      .map((name, m): [string, number, number] => [name, Math.min(...slots[m].map(firstOf)), Math.max(...slots[m].map(lastOf))])
      .filter(([, first, last]) => last >= window.from && first <= window.to);
    // One reader for every record, as a report's scan reuses it: nothing of one record carries into the next.
    const record = encodeFleetClassCode({ methods: names, slots });
    assert.ok(methods.read(record, times, window));
    const got: [string, number, number][] = [];
    while (methods.next()) got.push([record.subarray(methods.start, methods.end).toString('latin1'), methods.firstSeen, methods.lastSeen]);
    assert.deepEqual(got, expected, `record ${r}`);
  }
  store.close();
});

test('a record with a name that is not ASCII is left to the caller', () => {
  const store = storeWithTimes();
  assert.equal(readAll(encodeFleetClassCode({ methods: ['a()', 'Zürich()'], slots: [[1], [2]] }), new SlotTimes(store), { from: 0, to: 1e9 }), null);
  store.close();
});
