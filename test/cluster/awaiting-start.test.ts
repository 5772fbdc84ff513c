// Writes of the log kept until their VM starts (src/cluster/awaiting-start.ts), on a real store: a node keeps
// at most AWAITING_MAX, so a history far off the gateways' cannot fill its disk, and it keeps none once
// they applied. The order and the apply itself are tested through a node (applying-in-flight.test.ts).
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { AWAITING_MAX, keepUntilStarted, keptCount, readyWrites, release } from '../../src/cluster/awaiting-start.ts';
import { encodeCommand } from '../../src/cluster/commands.ts';
import { validateEvents } from '../../src/ingest/events.ts';
import { Dictionary } from '../../src/storage/dictionary.ts';
import { Ingestor } from '../../src/storage/ingest.ts';
import { openStore } from '../../src/storage/store.ts';
import { vmStart } from '../helpers/events.ts';
import { tempDir } from '../helpers/service.ts';

const store = openStore(tempDir('jvmlens-awaiting-start-'));
const dict = new Dictionary(store);
after(() => store.close());

test('a node keeps up to AWAITING_MAX writes waiting for a start, and none once they applied', async () => {
  const edit = (vmId: string) => encodeCommand({ kind: 'tags', edit: { vmId, op: 'merge', records: [{ key: 'k', value: 'v' }] } });
  const vmId = (index: number) => `vm-${index}`;
  await store.env.transaction(() => {
    for (let seq = 1; seq <= AWAITING_MAX; seq++) assert.equal(keepUntilStarted(store, seq, edit(vmId(seq)), [vmId(seq)]), true);
    assert.equal(keepUntilStarted(store, AWAITING_MAX + 1, edit('one-more'), ['one-more']), false, 'one past the limit is refused');
  });
  assert.equal(keptCount(store), AWAITING_MAX);

  const now = Date.now();
  const events = validateEvents([vmStart(vmId(1), now), vmStart(vmId(2), now)], now);
  await new Ingestor(store, dict).ingest(() => events, now);
  await store.env.transaction(() => {
    const ready = readyWrites(store, events, 0);
    assert.deepEqual(ready.map((write) => write.seq), [1, 2]);
    release(store, dict, ready);
  });
  assert.equal(keptCount(store), AWAITING_MAX - 2);
  await store.env.transaction(() => assert.deepEqual(readyWrites(store, events, 0), [], 'released writes are kept no longer'));
  assert.equal(keepUntilStarted(store, AWAITING_MAX + 2, edit('room-again'), ['room-again']), true, 'room again below the limit');
});
