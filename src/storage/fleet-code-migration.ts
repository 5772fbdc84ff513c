// Schema 2 → 3: the fleet-wide class records (`fleetCode`) built from the AppEnv ones, once, when a version
// that reads them first opens an older data directory. The AppEnv records stay as they are.
import { compareCodePoints } from '../collation.ts';
import { readBlock, SLOTS_PER_BLOCK, SlotTimes, writeBlock } from './code-times.ts';
import type { ClassCode } from './records.ts';
import type { Store } from './store.ts';

/** Classes per write transaction: bounds the dirty pages a migration holds. */
const CLASSES_PER_TRANSACTION = 20_000;

/** The span of one method over a class's AppEnv records. */
type Span = [firstSeen: number, lastSeen: number];

/**
 * Merges each class's AppEnv records into one record with a new slot per method, whose times span the
 * method's times in every AppEnv. Sets the schema version in the last transaction, so that a migration
 * cut short starts over at the next open.
 */
export function migrateToFleetCode(store: Store, version: number, progress: (line: string) => void): void {
  const started = performance.now();
  const total = (store.code.getStats() as { entryCount: number }).entryCount;
  progress(`migrating the data directory from schema ${version} to 3: fleet-wide class records from ${total} AppEnv class records`);
  // Left by a migration cut short: built again (the slots it took are never handed out again).
  store.fleetCode.clearSync();
  const times = new SlotTimes(store);
  let nextSlot = (store.meta.get('codeSlotNext') as number | undefined) ?? 0;
  const blocks = new Map<number, Float64Array>();
  let records: [string[], ClassCode][] = [];
  let read = 0;

  const commit = (last: boolean): void => {
    store.env.transactionSync(() => {
      for (const [key, code] of records) store.fleetCode.put(key, code);
      for (const [block, blockTimes] of blocks) writeBlock(store, block, blockTimes);
      store.meta.put('codeSlotNext', nextSlot);
      if (last) store.meta.put('schemaVersion', 3);
    });
    // Blocks before the one being filled are complete.
    const current = Math.floor(nextSlot / SLOTS_PER_BLOCK);
    for (const block of blocks.keys()) if (block !== current) blocks.delete(block);
    records = [];
    progress(`migrating: ${read} of ${total} AppEnv class records read`);
  };

  const addClass = (key: string[], spans: Map<string, Span>): void => {
    const methods = [...spans.keys()].sort(compareCodePoints);
    const slots = methods.map((method) => {
      const slot = nextSlot++;
      const block = Math.floor(slot / SLOTS_PER_BLOCK);
      let blockTimes = blocks.get(block);
      if (blockTimes === undefined) blocks.set(block, (blockTimes = readBlock(store, block)));
      const [firstSeen, lastSeen] = spans.get(method)!;
      blockTimes[2 * (slot % SLOTS_PER_BLOCK)] = firstSeen;
      blockTimes[2 * (slot % SLOTS_PER_BLOCK) + 1] = lastSeen;
      return slot;
    });
    records.push([key, { methods, slots }]);
    if (records.length === CLASSES_PER_TRANSACTION) commit(false);
  };

  // A class's AppEnv records are consecutive keys [sourceName, className, appEnv]. Read a chunk at a time
  // and written between chunks: no write transaction commits while a range is being iterated.
  let classKey: string[] | null = null;
  let spans = new Map<string, Span>();
  let after: string[] | null = null;
  for (;;) {
    const chunk: { key: string[]; value: ClassCode }[] = [...store.code.getRange({ ...(after === null ? {} : { start: after, exclusiveStart: true }), limit: CLASSES_PER_TRANSACTION })];
    if (chunk.length === 0) break;
    for (const { key, value } of chunk) {
      read++;
      if (classKey !== null && (key[0] !== classKey[0] || key[1] !== classKey[1])) {
        addClass(classKey, spans);
        spans = new Map();
      }
      classKey = [key[0], key[1]];
      for (let m = 0; m < value.methods.length; m++) {
        const firstSeen = times.firstSeen(value.slots[m]);
        const lastSeen = times.lastSeen(value.slots[m]);
        const span = spans.get(value.methods[m]);
        if (span === undefined) spans.set(value.methods[m], [firstSeen, lastSeen]);
        else {
          span[0] = Math.min(span[0], firstSeen);
          span[1] = Math.max(span[1], lastSeen);
        }
      }
    }
    after = chunk[chunk.length - 1].key;
  }
  if (classKey !== null) addClass(classKey, spans);
  commit(true);
  progress(`migrated to schema 3 in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
