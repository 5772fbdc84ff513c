// The fleet-wide class records: each class's methods over every AppEnv, with spans over all of them,
// kept by ingestion and built from the AppEnv records when a schema 2 data directory is opened.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { validateEvents } from '../../src/ingest/events.ts';
import { readClassTimes } from '../../src/storage/code-times.ts';
import { Dictionary } from '../../src/storage/dictionary.ts';
import { migrateToFleetCode } from '../../src/storage/fleet-code-migration.ts';
import { Ingestor } from '../../src/storage/ingest.ts';
import { openStore, SCHEMA_VERSION } from '../../src/storage/store.ts';
import type { Store } from '../../src/storage/store.ts';
import type { MethodTimes } from '../../src/storage/records.ts';
import { tempDir } from '../helpers/service.ts';

const NOW = Date.UTC(2026, 10, 25, 12, 0, 0);

function events(vmId: string, appEnv: string | null, time: number, classes: Record<string, string[]>): unknown[] {
  const items = Object.entries(classes).flatMap(([className, methods]) => methods.map((methodName) => ({ sourceName: 'app.jar', className, methodName })));
  return [
    { type: 'vm.start', vmId, time: time - 1000, agentVersion: '1', agentRevision: 'r', inventory: { hostName: vmId }, tags: appEnv === null ? {} : { AppEnv: appEnv } },
    { type: 'code', vmId, time, items },
  ];
}

async function ingest(store: Store, batch: unknown[]): Promise<void> {
  await new Ingestor(store, new Dictionary(store)).ingest(() => validateEvents(batch, NOW));
}

/** Every fleet-wide record with its times, by class. */
function fleetTimes(store: Store): Record<string, MethodTimes> {
  const classes: Record<string, MethodTimes> = {};
  for (const key of store.fleetCode.getKeys()) classes[key.join(' ')] = readClassTimes(store, key)!;
  return classes;
}

const A = { 'com/acme/A': ['run()', 'stop()'], 'com/acme/B': ['b()'] };
const B = { 'com/acme/A': ['run()', 'start(int)'], 'com/acme/Ü': ['ü()'] };

const EXPECTED: Record<string, MethodTimes> = {
  'app.jar com/acme/A': { methods: ['run()', 'start(int)', 'stop()'], firstSeen: [NOW - 5000, NOW - 3000, NOW - 5000], lastSeen: [NOW - 2000, NOW - 3000, NOW - 5000] },
  'app.jar com/acme/B': { methods: ['b()'], firstSeen: [NOW - 5000], lastSeen: [NOW - 5000] },
  'app.jar com/acme/Ü': { methods: ['ü()'], firstSeen: [NOW - 3000], lastSeen: [NOW - 3000] },
};

/** Sightings of one class in three AppEnvs (one of them none) and at several times. */
async function fleet(store: Store): Promise<void> {
  await ingest(store, [...events('vm-1', 'shop', NOW - 5000, A), ...events('vm-2', 'billing', NOW - 3000, B)]);
  await ingest(store, events('vm-3', null, NOW - 2000, { 'com/acme/A': ['run()'] }));
}

test('a class sighted in several AppEnvs has one fleet-wide record whose spans cover them all', async () => {
  const store = openStore(tempDir());
  try {
    await fleet(store);
    assert.deepEqual(fleetTimes(store), EXPECTED);
    assert.deepEqual(readClassTimes(store, ['app.jar', 'com/acme/A', 'shop']), { methods: ['run()', 'stop()'], firstSeen: [NOW - 5000, NOW - 5000], lastSeen: [NOW - 5000, NOW - 5000] }, 'the AppEnv records stay');
  } finally {
    await store.close();
  }
});

test('a schema 2 data directory is migrated when opened, once: a second migration finds it done', async () => {
  const dataDir = tempDir();
  let store = openStore(dataDir);
  await fleet(store);
  // Schema 2 had no fleet-wide records.
  store.fleetCode.clearSync();
  store.meta.putSync('schemaVersion', 2);
  const lines: string[] = [];
  migrateToFleetCode(store, (line) => lines.push(line));
  assert.match(lines[0], /migrating the data directory from schema 2 to 3: fleet-wide class records from 5 AppEnv class records/);
  assert.match(lines.at(-1)!, /migrated to schema 3 in/);
  assert.equal(store.meta.get('schemaVersion'), 3);
  assert.deepEqual(fleetTimes(store), EXPECTED);
  // As a second process that read version 2 before the first one's transaction ended.
  const again: string[] = [];
  migrateToFleetCode(store, (line) => again.push(line));
  assert.deepEqual(again, []);
  await store.close();

  // Through openStore, and ingestion goes on from the migrated records.
  store = openStore(dataDir);
  store.fleetCode.clearSync();
  store.meta.putSync('schemaVersion', 2);
  await store.close();
  store = openStore(dataDir);
  try {
    assert.equal(store.meta.get('schemaVersion'), SCHEMA_VERSION);
    assert.deepEqual(fleetTimes(store), EXPECTED);
    await ingest(store, events('vm-4', 'shop', NOW - 1000, { 'com/acme/A': ['stop()', 'new()'] }));
    assert.deepEqual(readClassTimes(store, ['app.jar', 'com/acme/A']), {
      methods: ['new()', 'run()', 'start(int)', 'stop()'],
      firstSeen: [NOW - 1000, NOW - 5000, NOW - 3000, NOW - 5000],
      lastSeen: [NOW - 1000, NOW - 2000, NOW - 3000, NOW - 1000],
    });
  } finally {
    await store.close();
  }
});
