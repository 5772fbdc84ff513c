// The component names a worker keeps between reports: components created since its last report are read
// and ranked with the others (name ascending, version descending in Maven order).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ComponentNames } from '../../src/engine/reports/kernels/component-names.ts';
import { validateEvents } from '../../src/ingest/events.ts';
import { Dictionary } from '../../src/storage/dictionary.ts';
import { Ingestor } from '../../src/storage/ingest.ts';
import { openStore } from '../../src/storage/store.ts';
import type { Store } from '../../src/storage/store.ts';
import { tempDir } from '../helpers/service.ts';

const now = Date.now();
let store: Store;
let ingestor: Ingestor;

before(() => {
  store = openStore(tempDir());
  ingestor = new Ingestor(store, new Dictionary(store));
});
after(() => store.close());

async function report(vmId: string, components: [string, string][]): Promise<void> {
  const events = [
    { type: 'vm.start', vmId, time: now, agentVersion: '1', agentRevision: 'r', inventory: {}, tags: {} },
    { type: 'components', vmId, time: now, items: components.map(([componentName, componentVersion]) => ({ componentName, componentVersion })) },
  ];
  await ingestor.ingest(() => validateEvents(events, now));
  store.env.resetReadTxn();
}

/** The kept ranking as "name version" strings. */
function ranked(names: ComponentNames): string[] {
  const { ranks } = names;
  return [...ranks.keys()].sort((a, b) => ranks[a] - ranks[b]).map((c) => `${names.name(c)} ${names.version(c)}`);
}

test('components created after a report are ranked among the kept ones', async () => {
  const kept = new ComponentNames();
  await report('vm-1', [['netty', '4.1.9'], ['guava', '31.0'], ['netty', '4.1.10']]);
  assert.deepEqual(ranked(kept.update(store)), ['guava 31.0', 'netty 4.1.10', 'netty 4.1.9']);
  // Between, before and after the kept ones; a version Maven orders above 4.1.10.
  await report('vm-2', [['netty', '4.1.100'], ['asm', '9.0'], ['zstd', '1.5'], ['guava', '31.0']]);
  const expected = ['asm 9.0', 'guava 31.0', 'netty 4.1.100', 'netty 4.1.10', 'netty 4.1.9', 'zstd 1.5'];
  assert.deepEqual(ranked(kept.update(store)), expected);
  assert.deepEqual(ranked(new ComponentNames().update(store)), expected);
});
