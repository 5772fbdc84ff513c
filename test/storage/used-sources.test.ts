// The sourceNames each VM loaded code from (store.usedSources: its sorted ids), which CVE events and SBOMs
// read to say whether a component's JAR was used: they grow batch by batch, each once, whether the items
// name them (a single node) or the event lists them (a cluster node of a code group).
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { AgentEvent } from '../../src/ingest/events.ts';
import { validateEvents } from '../../src/ingest/events.ts';
import { Dictionary } from '../../src/storage/dictionary.ts';
import { Ingestor } from '../../src/storage/ingest.ts';
import { openStore, uint32s } from '../../src/storage/store.ts';
import { tempDir } from '../helpers/service.ts';

const NOW = Date.UTC(2026, 10, 27, 12, 0, 0);
const store = openStore(tempDir());
const dict = new Dictionary(store);
const ingestor = new Ingestor(store, dict);
after(() => store.close());

const item = (sourceName: string, c: number) => ({ sourceName, className: `com/acme/C${c}`, methodName: 'run()' });

function ingest(events: unknown[]): Promise<unknown> {
  return ingestor.ingest(() => validateEvents(events, NOW), NOW);
}

/** A VM's stored ids, which must be sorted and distinct, as names. */
function usedSources(vmId: string): string[] {
  const ids = [...uint32s(store.usedSources.getBinary(store.vmRows.get(vmId)!))];
  assert.deepEqual(ids, [...new Set(ids)].sort((a, b) => a - b), 'ids sorted and distinct');
  return ids.map((id) => dict.lookup(id)!).sort();
}

test('a VM\'s sourceNames grow batch by batch, each stored once, in runs that recur', async () => {
  // Many ids interned before the VM's, so its ids do not start at 1; and two sources it adds later, whose
  // ids then come before those it has.
  await ingest([
    ...Array.from({ length: 40 }, (_, v) => ({ type: 'vm.start', vmId: `other-${v}`, time: NOW - 5_000, agentVersion: '1', agentRevision: 'r', inventory: { hostName: `host-${v}` } })),
    { type: 'code', vmId: 'other-0', time: NOW - 5_000, items: [item('y.jar', 0), item('b.jar', 0)] },
  ]);
  await ingest([
    { type: 'vm.start', vmId: 'vm-1', time: NOW - 4_000, agentVersion: '1', agentRevision: 'r', inventory: {} },
    { type: 'code', vmId: 'vm-1', time: NOW - 3_000, items: [item('z.jar', 1), item('a.jar', 2), item('a.jar', 3), item('z.jar', 4), item('m.jar', 5), item('a.jar', 6)] },
  ]);
  assert.deepEqual(usedSources('vm-1'), ['a.jar', 'm.jar', 'z.jar']);

  await ingest([{ type: 'code', vmId: 'vm-1', time: NOW - 2_000, items: [item('m.jar', 7), item('b.jar', 8), item('y.jar', 9), item('a.jar', 10)] }]);
  assert.deepEqual(usedSources('vm-1'), ['a.jar', 'b.jar', 'm.jar', 'y.jar', 'z.jar']);

  const before = store.usedSources.getBinary(store.vmRows.get('vm-1')!);
  await ingest([{ type: 'code', vmId: 'vm-1', time: NOW - 1_000, items: [item('z.jar', 11), item('b.jar', 12)] }]);
  assert.deepEqual(store.usedSources.getBinary(store.vmRows.get('vm-1')!), before, 'known sources only: the value stays');
});

test('a code event of a cluster node names its sources apart from its group\'s items (none of them, here)', async () => {
  const events: AgentEvent[] = [{ type: 'code', vmId: 'vm-1', time: NOW - 500, items: [], sources: { names: ['zz.jar', 'a.jar', 'c.jar'], refs: [2, 1, 0] } }];
  await ingestor.ingest(() => events, NOW);
  assert.deepEqual(usedSources('vm-1'), ['a.jar', 'b.jar', 'c.jar', 'm.jar', 'y.jar', 'z.jar', 'zz.jar']);
});

test('a VM with hundreds of sources: sent again in another order, none is stored twice', async () => {
  const names = Array.from({ length: 300 }, (_, k) => `lib-${k}.jar`);
  await ingest([
    { type: 'vm.start', vmId: 'vm-2', time: NOW - 4_000, agentVersion: '1', agentRevision: 'r', inventory: {} },
    { type: 'code', vmId: 'vm-2', time: NOW - 3_000, items: names.map((name, k) => item(name, k)) },
  ]);
  const shuffled = names.map((name, k) => names[(k * 7) % names.length]);
  await ingest([{ type: 'code', vmId: 'vm-2', time: NOW - 2_000, items: [...shuffled, 'new.jar'].map((name, k) => item(name, k)) }]);
  assert.deepEqual(usedSources('vm-2'), [...names, 'new.jar'].sort());
});
