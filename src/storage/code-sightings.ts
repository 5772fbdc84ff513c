// Code sightings of a write batch (decisions §4): method → time slot through an in-memory index, times
// merged into their blocks, class records rewritten only when a class gains a method. A method new to an
// AppEnv's record also joins the class's fleet-wide record with its slot, so that a report without an
// AppEnv filter reads one record per class; a sighting of a known method costs nothing more.
import { compareCodePoints } from '../collation.ts';
import type { CodeItem } from '../ingest/events.ts';
import { readBlock, SLOTS_PER_BLOCK, writeBlock } from './code-times.ts';
import type { ClassCode, FleetClassCode } from './records.ts';
import { MethodSlots } from './method-slots.ts';
import { noteFleetCodeChange } from './store.ts';
import type { Store } from './store.ts';

/** Methods cached before the index starts over: bounds the memory of a fleet with millions of methods. */
const MAX_CACHED_METHODS = 2_000_000;
/** Slots beyond this are looked up by hash only: bounds the guess array (4 bytes a slot). */
const MAX_GUESSED_SLOT = 8_000_000;

/** A class record's key joined into one string, to find the class and, with a methodName, the method. */
function classIdOf(sourceName: string, className: string, appEnv: string): string {
  return `${sourceName}\u0000${className}\u0000${appEnv}`;
}

function methodIdOf(classId: string, methodName: string): string {
  return `${classId}\u0000${methodName}`;
}

/**
 * Slot of each method, by class record id and methodName (one look-up per sighting). An entry never changes
 * once written (slots are never reused), so entries stay true whoever else writes; a missing entry is
 * looked up in the store (another process may have added the method), which is why the index needs no
 * invalidation on foreign writes.
 */
export class CodeIndex {
  readonly #slots = new MethodSlots(MAX_GUESSED_SLOT);

  /**
   * An agent sends a class's methods in the order it loaded them, the order in which they got their slots:
   * the slot after the last sighting's is checked first. A big table's hash look-up costs cache misses.
   */
  slot(methodId: string, guess: number): number | undefined {
    return this.#slots.slot(methodId, guess);
  }

  set(methodId: string, slot: number): void {
    this.#slots.set(methodId, slot);
  }

  /** Between batches only: a batch relies on the entries of the methods it added. */
  trim(): void {
    if (this.#slots.size >= MAX_CACHED_METHODS) this.clear();
  }

  /** After a failed transaction: its slots were never committed and will be handed out again. */
  clear(): void {
    this.#slots.clear();
  }
}

/** A class read from the store in this batch, and the methods it gained, merged into its record at the end. */
interface ClassChange {
  key: string[];
  stored: ClassCode | undefined;
  added: [methodName: string, slot: number][];
  /** The class's fleet-wide record, once the class gained a method here. */
  fleet: FleetClassChange | null;
}

/** A class's fleet-wide record read in this batch, and the (method, AppEnv slot) pairs it gained. */
interface FleetClassChange {
  key: string[];
  stored: FleetClassCode | undefined;
  added: [methodName: string, slot: number][];
}

/** One batch's sightings, applied inside its write transaction. */
export class CodeBatch {
  readonly #store: Store;
  readonly #index: CodeIndex;
  /** Classes read from the store in this transaction: no other writer can change them before it ends. */
  readonly #read = new Map<string, ClassChange>();
  /** Fleet-wide records of the classes that gained a method in an AppEnv, by their class id without one. */
  readonly #fleetRead = new Map<string, FleetClassChange>();
  readonly #blocks = new Map<number, Float64Array>();
  readonly #changedBlocks = new Set<number>();
  #nextSlot = -1;
  #lastSlot = -1;
  /** The block of the last sighting: consecutive sightings mostly share one. */
  #lastBlock = -1;
  #lastTimes: Float64Array = new Float64Array(0);

  constructor(store: Store, index: CodeIndex) {
    this.#store = store;
    this.#index = index;
    index.trim();
  }

  add(item: CodeItem, appEnv: string, time: number): void {
    const classId = classIdOf(item.sourceName, item.className, appEnv);
    const methodId = methodIdOf(classId, item.methodName);
    const slot = this.#index.slot(methodId, this.#lastSlot + 1) ?? this.#slotOfMiss(classId, methodId, item, appEnv);
    this.#lastSlot = slot;
    const block = Math.floor(slot / SLOTS_PER_BLOCK);
    const times = this.#block(block);
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
    for (const { key, stored, added } of this.#fleetRead.values()) this.#store.fleetCode.put(key, withSlots(stored, added));
    if (this.#fleetRead.size > 0) noteFleetCodeChange(this.#store);
    if (this.#nextSlot >= 0) this.#store.meta.put('codeSlotNext', this.#nextSlot);
  }

  #block(block: number): Float64Array {
    if (block === this.#lastBlock) return this.#lastTimes;
    let times = this.#blocks.get(block);
    if (times === undefined) {
      times = readBlock(this.#store, block);
      this.#blocks.set(block, times);
    }
    this.#lastBlock = block;
    this.#lastTimes = times;
    return times;
  }

  #slotOfMiss(classId: string, methodId: string, item: CodeItem, appEnv: string): number {
    let change = this.#read.get(classId);
    if (change === undefined) {
      const key = [item.sourceName, item.className, appEnv];
      change = { key, stored: this.#store.code.get(key), added: [], fleet: null };
      this.#read.set(classId, change);
      const { stored } = change;
      if (stored !== undefined) {
        for (let m = 0; m < stored.methods.length; m++) this.#index.set(methodIdOf(classId, stored.methods[m]), stored.slots[m]);
        const slot = this.#index.slot(methodId, -1);
        if (slot !== undefined) return slot;
      }
    }
    const slot = this.#allocateSlot();
    this.#index.set(methodId, slot);
    change.added.push([item.methodName, slot]);
    change.fleet ??= this.#fleetChange(item.sourceName, item.className);
    change.fleet.added.push([item.methodName, slot]);
    return slot;
  }

  #fleetChange(sourceName: string, className: string): FleetClassChange {
    const id = `${sourceName}\u0000${className}`;
    let change = this.#fleetRead.get(id);
    if (change === undefined) {
      const key = [sourceName, className];
      this.#fleetRead.set(id, (change = { key, stored: this.#store.fleetCode.get(key), added: [] }));
    }
    return change;
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

/** The stored fleet-wide record with the AppEnv slots it did not have: new methods merged in code-point order. */
function withSlots(stored: FleetClassCode | undefined, added: [string, number][]): FleetClassCode {
  added.sort((a, b) => compareCodePoints(a[0], b[0]));
  const merged: FleetClassCode = { methods: [], slots: [] };
  const methods = stored?.methods ?? [];
  let i = 0;
  let j = 0;
  while (i < methods.length || j < added.length) {
    const order = i === methods.length ? 1 : j === added.length ? -1 : compareCodePoints(methods[i], added[j][0]);
    if (order <= 0) {
      merged.methods.push(methods[i]);
      merged.slots.push(order === 0 ? [...stored!.slots[i++]] : stored!.slots[i++]);
    } else {
      merged.methods.push(added[j][0]);
      merged.slots.push([]);
    }
    // The added slots of this method (the same method may be new to several AppEnvs in one batch).
    const last = merged.methods.length - 1;
    while (j < added.length && added[j][0] === merged.methods[last]) merged.slots[last].push(added[j++][1]);
  }
  return merged;
}
