// A batch naming VMs that nothing started: a single node rejects it (the agent's 400), a cluster node skips it
// (every replica alike), storing none of its events while what the caller and its hook wrote in the same
// transaction (the log's sequence, the batch kept until its VMs start) commits; and the VMs it does know are
// read from the rows the check looked up.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { validateEvents } from '../../src/ingest/events.ts';
import { Dictionary } from '../../src/storage/dictionary.ts';
import { Ingestor, UnknownVmsError } from '../../src/storage/ingest.ts';
import { openStore } from '../../src/storage/store.ts';
import { findVm } from '../../src/storage/vms.ts';
import { tempDir } from '../helpers/service.ts';

const NOW = Date.UTC(2026, 10, 29, 12, 0, 0);
const store = openStore(tempDir());
const ingestor = new Ingestor(store, new Dictionary(store));
after(() => store.close());

const start = (vmId: string, time: number) => ({ type: 'vm.start', vmId, time, agentVersion: '1', agentRevision: 'r', inventory: {} });
const heartbeat = (vmId: string, time: number) => ({ type: 'vm.heartbeat', vmId, time });

test('a batch with an event of a VM nothing started is rejected whole, or skipped whole with the reason', async () => {
  await ingestor.ingest(() => validateEvents([start('known', NOW - 5_000)], NOW), NOW);
  const batch = [heartbeat('known', NOW - 1_000), heartbeat('stranger', NOW - 1_000)];

  await assert.rejects(ingestor.ingest(() => validateEvents(batch, NOW), NOW), (error: unknown) => {
    assert.ok(error instanceof UnknownVmsError);
    assert.deepEqual(error.details, [{ index: 1, message: "unknown vmId 'stranger': send vm.start first" }]);
    return true;
  });

  const hooked: string[] = [];
  const log = {
    unknownVms: (error: UnknownVmsError) => {
      hooked.push(`unknown ${error.vmIds.join(',')}`);
      store.meta.put('test.kept-batch', 'kept');
    },
    written: () => void hooked.push('written'),
  };
  const skipped = await ingestor.ingest(() => {
    store.meta.put('test.skipped-batch-seq', 7);
    return validateEvents([...batch, heartbeat('stranger', NOW - 900), heartbeat('other', NOW - 800)], NOW);
  }, NOW, log);
  assert.ok(skipped.skipped instanceof UnknownVmsError);
  assert.equal(skipped.accepted, 0);
  assert.deepEqual(skipped.touched, []);
  assert.deepEqual(hooked, ['unknown stranger,other'], 'each unknown VM named once; nothing written');
  assert.equal(store.meta.get('test.skipped-batch-seq'), 7, 'what the caller wrote in the transaction commits');
  assert.equal(store.meta.get('test.kept-batch'), 'kept', 'what the hook wrote in the transaction commits');
  assert.equal(findVm(store, 'known')!.lastHeardTime, NOW - 5_000, 'the known VM\'s event was not stored either');
  assert.equal(store.vmRows.get('stranger'), undefined);

  hooked.length = 0;
  const applied = await ingestor.ingest(() => validateEvents([heartbeat('known', NOW - 1_000), start('new', NOW - 900), heartbeat('new', NOW - 800)], NOW), NOW, log);
  assert.equal(applied.skipped, null);
  assert.deepEqual(hooked, ['written']);
  assert.equal(applied.accepted, 3);
  assert.deepEqual(applied.touched.map((record) => [record.vmId, record.lastHeardTime]).sort(), [['known', NOW - 1_000], ['new', NOW - 800]]);
  assert.equal(findVm(store, 'known')!.lastHeardTime, NOW - 1_000);
});
