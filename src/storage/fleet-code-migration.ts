// Schema 2 → 3: the fleet-wide class records (`fleetCode`) built from the AppEnv ones, once, when a version
// that reads them first opens an older data directory. The AppEnv records stay as they are.
import { compareCodePoints } from '../collation.ts';
import type { ClassCode, FleetClassCode } from './records.ts';
import type { Store } from './store.ts';

/** AppEnv records read, and classes written, per step: bounds what a migration holds. */
const RECORDS_PER_STEP = 20_000;

/**
 * Lists each class's methods over its AppEnv records, each with its slot in every record that has it.
 * Sets the schema version in the last transaction, so that a migration cut short starts over at the next
 * open.
 */
export function migrateToFleetCode(store: Store, version: number, progress: (line: string) => void): void {
  const started = performance.now();
  const total = (store.code.getStats() as { entryCount: number }).entryCount;
  progress(`migrating the data directory from schema ${version} to 3: fleet-wide class records from ${total} AppEnv class records`);
  // Left by a migration cut short: built again.
  store.fleetCode.clearSync();
  let records: [string[], FleetClassCode][] = [];
  let read = 0;

  const commit = (last: boolean): void => {
    store.env.transactionSync(() => {
      for (const [key, code] of records) store.fleetCode.put(key, code);
      if (last) store.meta.put('schemaVersion', 3);
    });
    records = [];
    progress(`migrating: ${read} of ${total} AppEnv class records read`);
  };

  const addClass = (key: string[], slots: Map<string, number[]>): void => {
    const methods = [...slots.keys()].sort(compareCodePoints);
    records.push([key, { methods, slots: methods.map((method) => slots.get(method)!) }]);
  };

  // A class's AppEnv records are consecutive keys [sourceName, className, appEnv]. Read a chunk at a time
  // and written between chunks: no write transaction commits while a range is being iterated.
  let classKey: string[] | null = null;
  let slots = new Map<string, number[]>();
  let after: string[] | null = null;
  for (;;) {
    const chunk: { key: string[]; value: ClassCode }[] = [...store.code.getRange({ ...(after === null ? {} : { start: after, exclusiveStart: true }), limit: RECORDS_PER_STEP })];
    if (chunk.length === 0) break;
    for (const { key, value } of chunk) {
      read++;
      if (classKey !== null && (key[0] !== classKey[0] || key[1] !== classKey[1])) {
        addClass(classKey, slots);
        slots = new Map();
      }
      classKey = [key[0], key[1]];
      value.methods.forEach((method, m) => {
        const list = slots.get(method);
        if (list === undefined) slots.set(method, [value.slots[m]]);
        else list.push(value.slots[m]);
      });
    }
    after = chunk[chunk.length - 1].key;
    commit(false);
  }
  if (classKey !== null) addClass(classKey, slots);
  commit(true);
  progress(`migrated to schema 3 in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
