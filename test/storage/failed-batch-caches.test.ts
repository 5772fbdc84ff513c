// Agent batches that arrive together share one LMDB write transaction (lmdb-js batches them), each in its
// own child transaction. What a user relies on: a batch that fails while it applies (a bug, a value the
// code did not expect) is rolled back alone, and the batches after it in the same transaction store correct
// strings, not ids the failed batch interned and cached before it was rolled back. Real LMDB on disk; the
// failure is an event that validation never lets through, given to the Ingestor as a bug would be.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { AgentEvent } from '../../src/ingest/events.ts';
import { validateEvents } from '../../src/ingest/events.ts';
import { Dictionary } from '../../src/storage/dictionary.ts';
import { Ingestor } from '../../src/storage/ingest.ts';
import { openStore } from '../../src/storage/store.ts';
import { findVm } from '../../src/storage/vms.ts';
import { tempDir } from '../helpers/service.ts';

const NOW = Date.UTC(2026, 10, 27, 12, 0, 0);
const store = openStore(tempDir());
const dict = new Dictionary(store);
const ingestor = new Ingestor(store, dict);
after(() => store.close());

function vmStart(vmId: string, hostName: string): unknown {
  return { type: 'vm.start', vmId, time: NOW - 1_000, agentVersion: '1.5.0', agentRevision: 'r', inventory: { hostName } };
}

test('a batch that fails while it applies leaves the batches after it in its transaction with their own strings', async () => {
  const failing = [
    ...validateEvents([vmStart('vm-failing', 'host-first-seen')], NOW),
    // What validation rejects, as a bug in applying would fail: its items are not a list.
    { type: 'components', vmId: 'vm-failing', time: NOW, items: null } as unknown as AgentEvent,
  ];
  // Not awaited one by one: queued together, the two batches share a transaction.
  const results = await Promise.allSettled([
    ingestor.ingest(() => failing, NOW),
    ingestor.ingest(() => validateEvents([vmStart('vm-after', 'host-first-seen')], NOW), NOW),
  ]);
  assert.equal(results[0].status, 'rejected');
  assert.equal(results[1].status, 'fulfilled', String((results[1] as PromiseRejectedResult).reason));

  assert.equal(store.vmRows.get('vm-failing'), undefined, 'the failed batch stored nothing');
  const record = findVm(store, 'vm-after')!;
  // Read through a dictionary without caches: what any other reader of the store sees.
  assert.equal(new Dictionary(store).lookup(record.hostName), 'host-first-seen');
  // And the next string gets an id of its own.
  await ingestor.ingest(() => validateEvents([vmStart('vm-next', 'host-next')], NOW), NOW);
  const next = findVm(store, 'vm-next')!;
  assert.equal(new Dictionary(store).lookup(next.hostName), 'host-next');
});
