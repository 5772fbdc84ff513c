// A VM's record lives in its scan row (schema 5). What a user relies on: a data directory of schema 4, which
// kept a msgpack copy of each record in `vms`, opens with every VM as it was, stopped ones included, and keeps
// ingesting; the copies are gone. Real LMDB on disk, VMs ingested through the real Ingestor.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Database } from 'lmdb';
import { validateEvents } from '../../src/ingest/events.ts';
import { Dictionary } from '../../src/storage/dictionary.ts';
import { Ingestor } from '../../src/storage/ingest.ts';
import type { VmRecord } from '../../src/storage/records.ts';
import { openStore, SCHEMA_VERSION } from '../../src/storage/store.ts';
import type { Store } from '../../src/storage/store.ts';
import { migrateVmRecordsToScanRows } from '../../src/storage/vm-records-migration.ts';
import { findVm } from '../../src/storage/vms.ts';
import { tempDir } from '../helpers/service.ts';

const NOW = Date.UTC(2026, 10, 30, 8, 0, 0);
const VMS = ['vm-a', 'vm-b', 'vm-c'];

function start(vmId: string, time: number): unknown {
  return {
    type: 'vm.start', vmId, time, agentVersion: '1.5.0', agentRevision: 'r7', mailbox: 'm',
    inventory: { hostName: `host-${vmId}`, mainMethod: 'com.acme.Main', systemProperties: { 'java.version': '17.0.9', 'os.name': 'Linux', 'os.arch': 'amd64', 'java.vm.vendor': 'Eclipse Adoptium' } },
  };
}

function ingest(store: Store, events: unknown[]): Promise<unknown> {
  return new Ingestor(store, new Dictionary(store)).ingest(() => validateEvents(events, NOW), NOW);
}

function vmsCopy(store: Store): Database<VmRecord, number> {
  return store.env.openDB({ name: 'vms', encoding: 'msgpack', keyEncoding: 'uint32' });
}

test('a schema 4 data directory opens with every VM as it was, its msgpack copies dropped', async () => {
  const dataDir = tempDir();
  let store = openStore(dataDir);
  await ingest(store, [...VMS.map((vmId, k) => start(vmId, NOW - 60_000 + k)), { type: 'vm.heartbeat', vmId: 'vm-b', time: NOW - 1_000 }, { type: 'vm.stop', vmId: 'vm-c', time: NOW - 500 }]);
  const before = VMS.map((vmId) => findVm(store, vmId)!);
  assert.equal(before[1].lastHeardTime, NOW - 1_000);
  assert.equal(before[2].stopTime, NOW - 500);
  assert.equal(before[0].stopTime, null);
  assert.equal(before[0].javaVersion !== 0 && before[0].osArch !== 0 && before[0].hostName !== 0, true, 'the strings are stored');
  // As schema 4 left it: each record also as msgpack in `vms`.
  const copies = vmsCopy(store);
  for (const record of before) copies.putSync(record.row, record);
  store.meta.putSync('schemaVersion', 4);
  await store.close();

  store = openStore(dataDir);
  try {
    assert.equal(store.meta.get('schemaVersion'), SCHEMA_VERSION);
    assert.deepEqual(VMS.map((vmId) => findVm(store, vmId)), before);
    assert.equal(vmsCopy(store).getKeysCount(), 0, 'the msgpack copies are gone');
    const lines: string[] = [];
    migrateVmRecordsToScanRows(store, (line) => lines.push(line));
    assert.deepEqual(lines, [], 'a second migration finds it done');
    await ingest(store, [{ type: 'vm.heartbeat', vmId: 'vm-a', time: NOW - 100 }]);
    assert.equal(findVm(store, 'vm-a')!.lastHeardTime, NOW - 100, 'ingestion goes on from the scan rows');
  } finally {
    await store.close();
  }
});

test('the migration says what it did', async () => {
  const store = openStore(tempDir());
  try {
    await ingest(store, [start('vm-a', NOW - 5_000)]);
    const record = findVm(store, 'vm-a')!;
    vmsCopy(store).putSync(record.row, record);
    store.meta.putSync('schemaVersion', 4);
    const lines: string[] = [];
    migrateVmRecordsToScanRows(store, (line) => lines.push(line));
    assert.match(lines[0], /^migrated the data directory from schema 4 to 5 in \d+\.\d s: the msgpack copies of 1 VM record\(s\) dropped \(their scan rows hold them\)$/);
    assert.deepEqual(findVm(store, 'vm-a'), record);
  } finally {
    await store.close();
  }
});
