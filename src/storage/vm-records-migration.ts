// Schema 4 → 5: a VM's record lives in its scan row only (vm-scan.ts). Every batch used to write it twice, as
// msgpack in `vms` and as the scan row, and to read the msgpack copy back: a cluster node pays that for every
// VM of every batch (18 to 37 % of the per-batch CPU of a node outside most of a batch's code groups, in process).
// The scan rows hold every field of the record, and every store that can be migrated has one per VM: the rows
// came before schema 2, and each write of a record wrote its row in the same transaction. So `vms` is dropped.
import type { Database, RootDatabase } from 'lmdb';

/** What the migration reads and writes of the store that store.ts is opening. */
interface MigratedStore {
  env: RootDatabase;
  meta: Database<number | string, string>;
}

export function migrateVmRecordsToScanRows(store: MigratedStore, progress: (line: string) => void): void {
  if (store.meta.get('schemaVersion') !== 4) return;
  const started = performance.now();
  const vms = store.env.openDB<unknown, number>({ name: 'vms', encoding: 'msgpack', keyEncoding: 'uint32' });
  const records = vms.getKeysCount();
  // Checked again in the transaction: another process may have migrated meanwhile.
  const migrated = store.env.transactionSync(() => {
    if (store.meta.get('schemaVersion') !== 4) return false;
    store.meta.put('schemaVersion', 5);
    return true;
  });
  if (!migrated) return;
  // After the version: cut short between the two, the copies stay, unread.
  vms.dropSync();
  progress(`migrated the data directory from schema 4 to 5 in ${((performance.now() - started) / 1000).toFixed(1)} s: the msgpack copies of ${records} VM record(s) dropped (their scan rows hold them)`);
}
