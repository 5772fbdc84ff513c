// Schema 2 → 3: the fleet-wide class records (`fleetCode`) built from the AppEnv ones, once, when a version
// that reads them first opens an older data directory. The AppEnv records stay as they are.
import type { Database, RootDatabase } from 'lmdb';
import { compareCodePoints } from '../collation.ts';
import type { ClassCode, FleetClassCode } from './records.ts';

/** What the migration reads and writes of the store that store.ts is opening. */
interface MigratedDatabases {
  env: RootDatabase;
  meta: Database<number | string, string>;
  code: Database<ClassCode, string[]>;
  fleetCode: Database<FleetClassCode, string[]>;
}

/** AppEnv records read between progress lines. */
const RECORDS_PER_STEP = 100_000;

/**
 * Lists each class's methods over its AppEnv records, each with its slot in every record that has it. One
 * write transaction that first checks the version: a migration cut short leaves nothing, and a second
 * process that opened the directory meanwhile finds it migrated when the first one's transaction ends.
 */
export function migrateToFleetCode(store: MigratedDatabases, progress: (line: string) => void): void {
  store.env.transactionSync(() => {
    const version = store.meta.get('schemaVersion');
    if (version !== 2) return;
    const started = performance.now();
    const total = (store.code.getStats() as { entryCount: number }).entryCount;
    progress(`migrating the data directory from schema ${version} to 3: fleet-wide class records from ${total} AppEnv class records`);
    let read = 0;
    const addClass = (key: string[], slots: Map<string, number[]>): void => {
      const methods = [...slots.keys()].sort(compareCodePoints);
      store.fleetCode.put(key, { methods, slots: methods.map((method) => slots.get(method)!) });
    };
    // A class's AppEnv records are consecutive keys [sourceName, className, appEnv].
    let classKey: string[] | null = null;
    let slots = new Map<string, number[]>();
    for (const { key, value } of store.code.getRange() as Iterable<{ key: string[]; value: ClassCode }>) {
      if (++read % RECORDS_PER_STEP === 0) progress(`migrating: ${read} of ${total} AppEnv class records read`);
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
    if (classKey !== null) addClass(classKey, slots);
    store.meta.put('schemaVersion', 3);
    progress(`migrated to schema 3 in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  });
}
