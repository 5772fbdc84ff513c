// Code sightings of a write batch (decisions §4): method → time slot through an in-memory index, times
// merged into their blocks, class records rewritten only when a class gains a method.
import { compareCodePoints } from '../collation.ts';
import type { CodeItem } from '../ingest/events.ts';
import { readBlock, SLOTS_PER_BLOCK, writeBlock } from './code-times.ts';
import type { ClassCode } from './records.ts';
import type { Store } from './store.ts';

/** Methods cached before the index starts over: bounds the memory of a fleet with millions of methods. */
const MAX_CACHED_METHODS = 2_000_000;

/**
 * Slot of each method, by class record. An entry never changes once written (slots are never reused), so
 * entries stay true whoever else writes; a missing entry is looked up in the store (another process may
 * have added the method), which is why the index needs no invalidation on foreign writes.
 */
export class CodeIndex {
  readonly #classes = new Map<string, Map<string, number>>();
  #methods = 0;

  get(classId: string): Map<string, number> | undefined {
    return this.#classes.get(classId);
  }

  /** Adds a class record as read from the store to the class's entry. */
  merge(classId: string, stored: ClassCode | undefined): Map<string, number> {
    let methods = this.#classes.get(classId);
    if (methods === undefined) {
      methods = new Map();
      this.#classes.set(classId, methods);
    }
    if (stored !== undefined) {
      for (let m = 0; m < stored.methods.length; m++) this.add(methods, stored.methods[m], stored.slots[m]);
    }
    return methods;
  }

  add(methods: Map<string, number>, methodName: string, slot: number): void {
    if (!methods.has(methodName)) this.#methods++;
    methods.set(methodName, slot);
  }

  /** Between batches only: a batch relies on the entries of the methods it added. */
  trim(): void {
    if (this.#methods >= MAX_CACHED_METHODS) this.clear();
  }

  /** After a failed transaction: its slots were never committed and will be handed out again. */
  clear(): void {
    this.#classes.clear();
    this.#methods = 0;
  }
}

/** A class read from the store in this batch, and the methods it gained, merged into its record at the end. */
interface ClassChange {
  key: string[];
  stored: ClassCode | undefined;
  added: [methodName: string, slot: number][];
}

/** One batch's sightings, applied inside its write transaction. */
export class CodeBatch {
  readonly #store: Store;
  readonly #index: CodeIndex;
  /** Classes read from the store in this transaction: no other writer can change them before it ends. */
  readonly #read = new Map<string, ClassChange>();
  readonly #blocks = new Map<number, Float64Array>();
  readonly #changedBlocks = new Set<number>();
  #nextSlot = -1;

  constructor(store: Store, index: CodeIndex) {
    this.#store = store;
    this.#index = index;
    index.trim();
  }

  add(item: CodeItem, appEnv: string, time: number): void {
    const classId = `${item.sourceName}\u0000${item.className}\u0000${appEnv}`;
    const slot = this.#index.get(classId)?.get(item.methodName) ?? this.#slotOfMiss(classId, item, appEnv);
    const block = Math.floor(slot / SLOTS_PER_BLOCK);
    let times = this.#blocks.get(block);
    if (times === undefined) {
      times = readBlock(this.#store, block);
      this.#blocks.set(block, times);
    }
    const at = 2 * (slot % SLOTS_PER_BLOCK);
    if (time < times[at]) {
      times[at] = time;
      this.#changedBlocks.add(block);
    }
    if (time > times[at + 1]) {
      times[at + 1] = time;
      this.#changedBlocks.add(block);
    }
  }

  /** Writes the changed blocks and the classes that gained methods. */
  write(): void {
    for (const block of this.#changedBlocks) writeBlock(this.#store, block, this.#blocks.get(block)!);
    for (const { key, stored, added } of this.#read.values()) {
      if (added.length === 0) continue;
      added.sort((a, b) => compareCodePoints(a[0], b[0]));
      this.#store.code.put(key, withMethods(stored, added));
    }
    if (this.#nextSlot >= 0) this.#store.meta.put('codeSlotNext', this.#nextSlot);
  }

  #slotOfMiss(classId: string, item: CodeItem, appEnv: string): number {
    let change = this.#read.get(classId);
    let methods: Map<string, number>;
    if (change === undefined) {
      const key = [item.sourceName, item.className, appEnv];
      change = { key, stored: this.#store.code.get(key), added: [] };
      this.#read.set(classId, change);
      methods = this.#index.merge(classId, change.stored);
      const slot = methods.get(item.methodName);
      if (slot !== undefined) return slot;
    } else {
      methods = this.#index.get(classId)!;
    }
    const slot = this.#allocateSlot();
    this.#index.add(methods, item.methodName, slot);
    change.added.push([item.methodName, slot]);
    return slot;
  }

  #allocateSlot(): number {
    if (this.#nextSlot < 0) this.#nextSlot = (this.#store.meta.get('codeSlotNext') as number | undefined) ?? 0;
    return this.#nextSlot++;
  }
}

/** The stored record with methods it did not have, merged in code-point order. */
function withMethods(stored: ClassCode | undefined, added: readonly [string, number][]): ClassCode {
  const merged: ClassCode = { methods: [], slots: [] };
  const methods = stored?.methods ?? [];
  const slots = stored?.slots ?? [];
  let i = 0;
  let j = 0;
  while (i < methods.length || j < added.length) {
    if (j === added.length || (i < methods.length && compareCodePoints(methods[i], added[j][0]) < 0)) {
      merged.methods.push(methods[i]);
      merged.slots.push(slots[i++]);
    } else {
      merged.methods.push(added[j][0]);
      merged.slots.push(added[j++][1]);
    }
  }
  return merged;
}
