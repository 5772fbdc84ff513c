// The hash of the log's commands as a cluster node applied them, a window at a time, kept in its store
// (src/cluster/applied-windows.ts), in real stores. What a user relies on: nodes that applied the same
// commands hash each window alike and nodes that applied others do not, so the window checks find a node
// that lacks writes; a window a node did not apply whole has no hash; and the hashes survive the node's
// process, so a node killed before it recorded them records them at its next start.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { appliedCommands, appliedTail, appliedWindow, appliedWindows, foldApplied, WINDOWS_KEPT } from '../../src/cluster/applied-windows.ts';
import type { WindowHash } from '../../src/cluster/applied-windows.ts';
import { openStore } from '../../src/storage/store.ts';
import type { Store } from '../../src/storage/store.ts';
import { tempDir } from '../helpers/service.ts';

const EVERY = 4;
const stores: Store[] = [];
after(() => Promise.all(stores.map((store) => store.close())));

const command = (seq: number, text = `command ${seq}`) => new TextEncoder().encode(text);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, k) => from + k);

/** A new store that applied `seqs`, each in its own transaction as a replica does, with the bytes `data` gives. */
function applied(seqs: number[], data: (seq: number) => Uint8Array = command, dataDir = tempDir()): Store {
  const store = openStore(dataDir);
  stores.push(store);
  for (const seq of seqs) store.env.transactionSync(() => foldApplied(store, seq, data(seq), EVERY));
  return store;
}

const windowsOf = (seqs: number[], data?: (seq: number) => Uint8Array): WindowHash[] => appliedWindows(applied(seqs, data));

test('stores that applied the same commands keep the same hash of each whole window; one byte apart, only its window differs', () => {
  const first = windowsOf(range(1, 12));
  assert.deepEqual(first.map((window) => window.to), [4, 8, 12]);
  assert.deepEqual(windowsOf(range(1, 12)), first);
  const other = windowsOf(range(1, 12), (seq) => command(seq, seq === 6 ? 'command 7' : `command ${seq}`));
  assert.equal(other[0].crc, first[0].crc);
  assert.notEqual(other[1].crc, first[1].crc, 'the window holding the other bytes');
  assert.equal(other[2].crc, first[2].crc);
});

test('a window not applied whole and in order (a store that started inside it, or after a gap) has no hash', () => {
  assert.deepEqual(windowsOf(range(3, 12)).map((window) => window.to), [8, 12], 'started at 3: from the next window on');
  assert.deepEqual(windowsOf([...range(1, 5), ...range(7, 12)]).map((window) => window.to), [4, 12], 'a gap at 6: its window is left out');
  assert.deepEqual(windowsOf([...range(1, 5), ...range(7, 12)]), windowsOf(range(1, 12)).filter((window) => window.to !== 8));
});

test('the tail, the window applied so far, hashes alike for stores that applied the same commands, and is there only inside a window applied from its start', () => {
  const tailOf = (seqs: number[], data?: (seq: number) => Uint8Array) => appliedTail(applied(seqs, data), EVERY);
  const tail = tailOf(range(1, 6));
  assert.equal(tail?.to, 6);
  assert.deepEqual(tailOf(range(1, 6)), tail);
  assert.notDeepEqual(tailOf(range(1, 6), (seq) => command(seq, seq === 6 ? 'command 7' : `command ${seq}`)), tail);
  assert.deepEqual(tailOf(range(3, 6)), tail, 'a store that started in the window before has the tail from its window\'s start');
  assert.equal(tailOf(range(1, 8)), null, 'a whole window is kept already');
  assert.equal(tailOf(range(6, 7)), null, 'not applied from its window\'s start');
});

test('the hashes are in the store: opened again (the node\'s process was killed), it has every window and the tail, and goes on with the window', async () => {
  const dataDir = tempDir();
  const store = applied(range(1, 6), command, dataDir);
  await store.close();
  stores.splice(stores.indexOf(store), 1);
  const reopened = applied(range(7, 8), command, dataDir);
  assert.deepEqual(appliedWindows(reopened), windowsOf(range(1, 8)));
  assert.deepEqual(appliedWindow(reopened, 8), windowsOf(range(1, 8))[1]);
});

test('only the latest windows are kept', () => {
  const many = windowsOf(range(1, (WINDOWS_KEPT + 3) * EVERY));
  assert.equal(many.length, WINDOWS_KEPT);
  assert.equal(many[0].to, 4 * EVERY);
  assert.deepEqual(many, windowsOf(range(1, (WINDOWS_KEPT + 3) * EVERY)));
});

test('each command\'s own hash is kept with the windows: alike where the bytes are, 0 where it was not applied here or is no longer kept', () => {
  const hashes = appliedCommands(applied(range(1, 8)), 1, 8);
  assert.equal(hashes.length, 8);
  assert.ok(hashes.every((crc) => crc !== 0));
  assert.equal(new Set(hashes).size, 8, 'other bytes, other hashes');
  assert.deepEqual(appliedCommands(applied(range(1, 8)), 1, 8), hashes);
  const other = appliedCommands(applied(range(1, 8), (seq) => command(seq, seq === 6 ? 'command 7' : `command ${seq}`)), 1, 8);
  assert.deepEqual([...other].map((crc, index) => crc === hashes[index]), [true, true, true, true, true, false, true, true]);
  assert.equal(other[5], hashes[6], 'command 6 read as command 7\'s bytes');
  assert.deepEqual([...appliedCommands(applied(range(3, 8)), 1, 4)].map((crc) => crc !== 0), [false, false, true, true], 'applied from 3 on');
  const last = (WINDOWS_KEPT + 2) * EVERY;
  const kept = appliedCommands(applied(range(1, last)), 1, last);
  assert.equal(kept.findIndex((crc) => crc !== 0), 2 * EVERY, 'as many as the windows kept');
});
