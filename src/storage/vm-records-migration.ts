// Schema 4 → 5: a VM's record lives in its scan row only (vm-scan.ts). Every batch used to write it twice, as
// msgpack in `vms` and as the scan row, and to read the msgpack copy back: a cluster node pays that for every
// VM of every batch (18 to 37 % of the per-batch CPU of a node outside most of a batch's code groups, in process).
// The scan rows hold every field of the record; the migration writes the row of a VM that has none (no store
// should lack one), then drops `vms`.
import type { Database } from 'lmdb';
import { Dictionary } from './dictionary.ts';
import type { VmRecord } from './records.ts';
import type { Store } from './store.ts';
import { encodeScanRow } from './vm-scan.ts';

export function migrateVmRecordsToScanRows(store: Store, progress: (line: string) => void): void {
  if (store.meta.get('schemaVersion') !== 4) return;
  const started = performance.now();
  const vms: Database<VmRecord, number> = store.env.openDB({ name: 'vms', encoding: 'msgpack', keyEncoding: 'uint32' });
  const dict = new Dictionary(store);
  let written = 0;
  store.env.transactionSync(() => {
    if (store.meta.get('schemaVersion') !== 4) return;
    for (const { key, value } of vms.getRange()) {
      if (store.vmScan.getBinaryFast(key) !== undefined) continue;
      store.vmScan.put(key, encodeScanRow(value, dict.intern(value.vmId)));
      written++;
    }
    store.meta.put('schemaVersion', 5);
  });
  // Apart: dropSync runs its own transaction. Cut short here, the copy stays, unread.
  vms.dropSync();
  progress(`migrated the data directory from schema 4 to 5 in ${((performance.now() - started) / 1000).toFixed(1)} s: VM records are read from their scan rows (${written} written)`);
}
