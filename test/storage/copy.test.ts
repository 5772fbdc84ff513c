// A copy of a data directory made by the process that writes it (storage/copy.ts, as `jvmlens backup` and a
// cluster node's snapshot make it): while transactions commit beside it, the copy opens as a store and holds
// whole transactions only, at least every one committed before the copy began, and the report pages; a copy
// that fails leaves nothing that looks like a store.
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { copyStore } from '../../src/storage/copy.ts';
import { openStore, PAGES_DIR } from '../../src/storage/store.ts';
import type { Store } from '../../src/storage/store.ts';
import { tempDir } from '../helpers/service.ts';

/** Keys per transaction: a copy that cut one in two would hold some of its keys and not the others. */
const KEYS_PER_BATCH = 40;
/** Values large enough that each transaction grows the file: copies race commits that add pages. */
const VALUE = 'x'.repeat(2_000);
const COPIES = 4;
/** Transactions before the copies start: a file of some megabytes, which takes a while to copy. */
const FIRST_BATCHES = 200;
const REPORT = '3c1f5a9e-8b2d-4c6e-9f0a-1b2c3d4e5f60';

const key = (batch: number, index: number): string => `copy-test:${batch}:${index}`;

/** Batch number → how many of its keys the store holds. */
function batchesIn(store: Store): Map<number, number> {
  const held = new Map<number, number>();
  for (const { key: stored } of store.meta.getRange({ start: 'copy-test:', end: 'copy-test;' })) {
    const batch = Number(String(stored).split(':')[1]);
    held.set(batch, (held.get(batch) ?? 0) + 1);
  }
  return held;
}

test('a copy taken while transactions commit holds whole transactions, all those committed before it began, and the report pages', async () => {
  const source = openStore(tempDir());
  await source.pageFiles.putJson(REPORT, 0, Buffer.from('[{"page":0}]'));
  await source.pageFiles.sync(REPORT);
  let committed = 0;
  const commit = async (batch: number): Promise<void> => {
    await source.env.transaction(() => {
      for (let index = 0; index < KEYS_PER_BATCH; index++) source.meta.put(key(batch, index), VALUE);
    });
    committed = batch + 1;
  };
  for (let batch = 0; batch < FIRST_BATCHES; batch++) await commit(batch);
  let writing = true;
  const writer = (async () => {
    for (let batch = FIRST_BATCHES; writing; batch++) await commit(batch);
  })();
  try {
    for (let copy = 0; copy < COPIES; copy++) {
      const before = committed;
      const target = join(tempDir(), `copy-${copy}`);
      const bytes = await copyStore(source, target);
      assert.ok(bytes > 0);
      const copied = openStore(target, { readOnly: true });
      try {
        const held = batchesIn(copied);
        const cut = [...held].filter(([, keys]) => keys !== KEYS_PER_BATCH);
        assert.deepEqual(cut, [], 'no transaction is held in part');
        for (let batch = 0; batch < before; batch++) assert.ok(held.has(batch), `batch ${batch}, committed before the copy began, is in copy ${copy}`);
        const last = Math.max(...held.keys());
        assert.equal(held.size, last + 1, 'the copy holds a prefix of the transactions');
        assert.equal((await copied.pageFiles.json(REPORT, 0))?.toString(), '[{"page":0}]');
      } finally {
        await copied.close();
      }
    }
  } finally {
    writing = false;
    await writer;
  }
  assert.ok(committed > FIRST_BATCHES + COPIES, `transactions committed while the copies were made: ${committed - FIRST_BATCHES}`);
  await source.close();
});

test('a copy that fails leaves no store file behind, whole or partial', async () => {
  const source = openStore(tempDir());
  await source.pageFiles.putJson(REPORT, 0, Buffer.from('[]'));
  await source.pageFiles.sync(REPORT);
  const target = tempDir();
  // A file where the pages folder goes: copying the pages fails after the LMDB file was copied.
  writeFileSync(join(target, PAGES_DIR), 'not a folder');
  try {
    await assert.rejects(copyStore(source, target));
    assert.deepEqual(readdirSync(target), [], 'neither the LMDB file nor a part of it is left');
  } finally {
    await source.close();
  }
});
