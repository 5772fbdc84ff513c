// Reads of a store whose close has begun (src/storage/closing-reads.ts). What a service relies on: a reader
// that outlives its shutdown gets an error it can handle, at its call, and the process goes on. lmdb-js alone
// renewed its read transaction for such a read (which then failed or not), then threw from a timer ("Attempt to
// reset an invalid read txn"), which ended the process: a cluster node restarting in process died so. Writes
// queued before the close still commit.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { WriteJournal } from '../../src/cluster/write-journal.ts';
import { StoreClosedError } from '../../src/storage/closing-reads.ts';
import { openStore } from '../../src/storage/store.ts';
import { tempDir } from '../helpers/service.ts';

/** Long enough for lmdb-js's timer that resets a renewed read transaction (setTimeout 0) to have run. */
const TIMERS_MS = 50;

test('a read of a store whose close began throws StoreClosedError at its call, and nothing throws later', async () => {
  const store = openStore(tempDir());
  await store.meta.put('answer', 42);
  await store.usedSources.put(1, Buffer.from([1, 0, 0, 0]));
  const closing = store.close();
  assert.throws(() => store.meta.get('answer'), StoreClosedError);
  assert.throws(() => store.usedSources.getBinary(1), StoreClosedError);
  assert.throws(() => [...store.vmRows.getRange()], StoreClosedError);
  assert.throws(() => store.keys.doesExist('k'), StoreClosedError);
  await closing;
  assert.throws(() => store.meta.get('answer'), StoreClosedError);
  // An exception from a timer would fail this test: node:test reports it against the test running.
  await sleep(TIMERS_MS);
});

test('a write transaction queued before the close still reads and commits', async () => {
  const dir = tempDir();
  const store = openStore(dir);
  await store.meta.put('base', 1);
  const queued = store.env.transaction(() => store.meta.put('queued', (store.meta.get('base') as number) + 1));
  const child = store.env.childTransaction(() => store.meta.put('child', (store.meta.get('base') as number) + 2));
  await store.close();
  assert.equal(await queued, true);
  assert.equal(await child, true);
  const reopened = openStore(dir);
  try {
    assert.equal(reopened.meta.get('queued'), 2);
    assert.equal(reopened.meta.get('child'), 3);
  } finally {
    await reopened.close();
  }
});

test('a cluster node\'s write journal refuses reads once its close began', async () => {
  const journal = WriteJournal.open(tempDir());
  await journal.keepToHandOver([{ msgId: 'w1', seq: 7, subject: 'jvmlens.log.events', bytes: new Uint8Array([1]) }]);
  const closing = journal.close();
  assert.throws(() => journal.toHandOver(), StoreClosedError);
  assert.throws(() => journal.unconfirmed(), StoreClosedError);
  await closing;
  await sleep(TIMERS_MS);
});
