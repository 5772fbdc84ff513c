// The message ids a cluster node records as it applies the log (src/cluster/applied-ids.ts), in a real store.
// What a user relies on: a write appended again (`<id>.again`) is applied once on a node whose history held
// its first copy, whichever copy comes first, and the same id twice is not taken for a copy; the record
// stays bounded.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { APPLIED_IDS_KEPT, firstIdOf, isCopyOfApplied, recordApplied } from '../../src/cluster/applied-ids.ts';
import { openStore } from '../../src/storage/store.ts';
import { tempDir } from '../helpers/service.ts';

const store = openStore(tempDir());
after(() => store.close());

/** Applies commands with these ids at sequences from `from` on, as a replica does: each copy found is skipped. Gives the ids skipped. */
async function apply(from: number, msgIds: (string | null)[]): Promise<(string | null)[]> {
  const skipped: (string | null)[] = [];
  await store.env.transaction(() => {
    msgIds.forEach((msgId, index) => {
      const copy = isCopyOfApplied(store, msgId);
      if (copy) skipped.push(msgId);
      recordApplied(store, from + index, msgId, !copy);
    });
  });
  return skipped;
}

test('a write\'s copies share its first id', () => {
  assert.equal(firstIdOf('a1b2'), 'a1b2');
  assert.equal(firstIdOf('a1b2.again'), 'a1b2');
  assert.equal(firstIdOf('a1b2.again.again'), 'a1b2');
  assert.equal(firstIdOf('report-7.3.again'), 'report-7.3');
  // Another attempt at publishing a write, under an id of its own (log.ts), and an attempt at appending a copy again.
  assert.equal(firstIdOf('a1b2.retry12'), 'a1b2');
  assert.equal(firstIdOf('a1b2.again.retry3'), 'a1b2');
  assert.equal(firstIdOf('a1b2.retry2.again'), 'a1b2');
  assert.equal(firstIdOf('a1b2.retryx'), 'a1b2.retryx', 'not a retry\'s id');
});

test('a copy is skipped whichever comes first, and a copy of a write never applied is applied', async () => {
  assert.deepEqual(await apply(1, ['w1', 'w2', 'w1.again', 'w3.again', 'w3', 'w3.again.again', null, null]), ['w1.again', 'w3', 'w3.again.again']);
});

test('a write retried under ids of its own that landed twice is applied once, and its copies after it skipped', async () => {
  assert.deepEqual(await apply(200, ['r1', 'r1.retry4', 'r2.retry5', 'r2.retry6', 'r2.retry6.again', 'r3', 'r3.again.retry7']), ['r1.retry4', 'r2.retry6', 'r2.retry6.again', 'r3.again.retry7']);
});

test('the same id twice is not a copy (a report\'s page or claim appended again by the coordinator taking over)', async () => {
  assert.deepEqual(await apply(100, ['page-1.0', 'page-1.0', 'claim-9', 'claim-9']), []);
});

test('ids applied more than APPLIED_IDS_KEPT commands back are forgotten, with what recorded them', async () => {
  const from = 1_000;
  await apply(from, ['old', 'old-copied', 'old-copied.again']);
  // A command without an id at every sequence after them, up to where the first two are forgotten.
  await apply(from + 3, Array.from({ length: APPLIED_IDS_KEPT - 1 }, () => null));
  assert.equal(isCopyOfApplied(store, 'old.again'), false, 'forgotten');
  assert.equal(isCopyOfApplied(store, 'old-copied.again.again'), false, 'forgotten');
  const left = [...store.meta.getKeys()].filter((key) => String(key).startsWith('appliedWrite'));
  assert.deepEqual(left, [], 'nothing of them left in the store');
});
