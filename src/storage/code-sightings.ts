// Code sightings of a write batch (decisions §4): method → time slot through an in-memory index, times
// merged into their blocks, class records rewritten only when a class gains a method. Each method has two
// slots: one in its AppEnv's class record, one in the class's fleet-wide record that reports without an
// AppEnv filter read (no merging of a class's AppEnvs per report).
import { compareCodePoints } from '../collation.ts';
import type { CodeItem } from '../ingest/events.ts';
import { readBlock, SLOTS_PER_BLOCK, writeBlock } from './code-times.ts';
import type { ClassCode } from './records.ts';
import type { Database } from 'lmdb';
import type { Store } from './store.ts';

/** Methods cached before the index starts over: bounds the memory of a fleet with millions of methods. */
const MAX_CACHED_METHODS = 2_000_000;
/** Slots beyond this are looked up by hash only: bounds the guess array (8 bytes a slot). */
const MAX_GUESSED_SLOT = 8_000_000;

/** A class record's key joined into one string, to find the class and, with a methodName, the method. */
function classIdOf(sourceName: string, className: string, appEnv: string): string {
  return `${sourceName}\u0000${className}\u0000${appEnv}`;
}

/** A fleet-wide class record's key joined into one string (its own index: no clash with an AppEnv's). */
function fleetClassIdOf(sourceName: string, className: string): string {
  return `${sourceName}\u0000${className}`;
}

function methodIdOf(classId: string, methodName: string): string {
  return `${classId}\u0000${methodName}`;
}

/**
 * Slot of each method, by class record id and methodName, in one flat map (one look-up per sighting). An
 * entry never changes once written (slots are never reused), so entries stay true whoever else writes; a
 * missing entry is looked up in the store (another process may have added the method), which is why the
 * index needs no invalidation on foreign writes.
 */
class SlotIndex {
  readonly #slots = new Map<string, number>();
  /** Method id by slot ('' where unknown), to check a guessed slot with one string comparison. */
  #methodIds: string[] = [];

  /**
   * An agent sends a class's methods in the order it loaded them, the order in which they got their slots:
   * the slots after the last sighting's are checked first (the next but one where a new method took an
   * AppEnv slot and a fleet slot in turn). A big map's hash look-up costs cache misses.
   */
  slot(methodId: string, guess: number): number | undefined {
    if (guess >= 0 && guess < this.#methodIds.length) {
      if (this.#methodIds[guess] === methodId) return guess;
      if (this.#methodIds[guess + 1] === methodId) return guess + 1;
    }
    return this.#slots.get(methodId);
  }

  set(methodId: string, slot: number): void {
    this.#slots.set(methodId, slot);
    if (slot < MAX_GUESSED_SLOT) {
      while (this.#methodIds.length < slot) this.#methodIds.push('');
      this.#methodIds[slot] = methodId;
    }
  }

  get size(): number {
    return this.#slots.size;
  }

  clear(): void {
    this.#slots.clear();
    this.#methodIds = [];
  }
}

/**
 * What a process remembers of the stored slots between batches: each method's slot in its AppEnv's class
 * record (`code`), its slot in the class's fleet-wide record (`fleetCode`), and the fleet slot of each
 * AppEnv slot, so that most sightings find both slots without a second look-up.
 */
export class CodeIndex {
  readonly appEnv = new SlotIndex();
  readonly fleet = new SlotIndex();
  /** Fleet slot + 1 by AppEnv slot (0: not known here). */
  #fleetSlots = new Int32Array(0);

  fleetSlotOf(slot: number): number | undefined {
    const known = slot < this.#fleetSlots.length ? this.#fleetSlots[slot] : 0;
    return known === 0 ? undefined : known - 1;
  }

  setFleetSlot(slot: number, fleetSlot: number): void {
    if (slot >= MAX_GUESSED_SLOT) return;
    if (slot >= this.#fleetSlots.length) {
      const grown = new Int32Array(Math.min(MAX_GUESSED_SLOT, Math.max(slot + 1, 2 * this.#fleetSlots.length, 1024)));
      grown.set(this.#fleetSlots);
      this.#fleetSlots = grown;
    }
    this.#fleetSlots[slot] = fleetSlot + 1;
  }

  /** Between batches only: a batch relies on the entries of the methods it added. */
  trim(): void {
    if (this.appEnv.size + this.fleet.size >= MAX_CACHED_METHODS) this.clear();
  }

  /** After a failed transaction: its slots were never committed and will be handed out again. */
  clear(): void {
    this.appEnv.clear();
    this.fleet.clear();
    this.#fleetSlots = new Int32Array(0);
  }
}

/** A class read from the store in this batch, and the methods it gained, merged into its record at the end. */
interface ClassChange {
  key: string[];
  stored: ClassCode | undefined;
  added: [methodName: string, slot: number][];
}

/** One database of class records as a batch sees it: the records it read and the index of their slots. */
interface ClassRecords {
  db: Database<ClassCode, string[]>;
  index: SlotIndex;
  /** Classes read from the store in this transaction: no other writer can change them before it ends. */
  read: Map<string, ClassChange>;
}

/** One batch's sightings, applied inside its write transaction. */
export class CodeBatch {
  readonly #store: Store;
  readonly #index: CodeIndex;
  readonly #appEnv: ClassRecords;
  readonly #fleet: ClassRecords;
  readonly #blocks = new Map<number, Float64Array>();
  readonly #changedBlocks = new Set<number>();
  #nextSlot = -1;
  #lastSlot = -1;
  #lastFleetSlot = -1;
  /** The block of the last sighting: consecutive sightings mostly share one. */
  #lastBlock = -1;
  #lastTimes: Float64Array = new Float64Array(0);

  constructor(store: Store, index: CodeIndex) {
    this.#store = store;
    this.#index = index;
    this.#appEnv = { db: store.code, index: index.appEnv, read: new Map() };
    this.#fleet = { db: store.fleetCode, index: index.fleet, read: new Map() };
    index.trim();
  }

  /** A sighting moves the times of the method in its AppEnv's record and in the class's fleet-wide one. */
  add(item: CodeItem, appEnv: string, time: number): void {
    const classId = classIdOf(item.sourceName, item.className, appEnv);
    const methodId = methodIdOf(classId, item.methodName);
    const slot = this.#appEnv.index.slot(methodId, this.#lastSlot + 1) ?? this.#slotOfMiss(this.#appEnv, classId, methodId, [item.sourceName, item.className, appEnv], item.methodName);
    this.#lastSlot = slot;
    this.#see(slot, time);
    let fleetSlot = this.#index.fleetSlotOf(slot);
    if (fleetSlot === undefined) {
      const fleetClassId = fleetClassIdOf(item.sourceName, item.className);
      const fleetMethodId = methodIdOf(fleetClassId, item.methodName);
      fleetSlot = this.#fleet.index.slot(fleetMethodId, this.#lastFleetSlot + 1) ?? this.#slotOfMiss(this.#fleet, fleetClassId, fleetMethodId, [item.sourceName, item.className], item.methodName);
      this.#index.setFleetSlot(slot, fleetSlot);
    }
    this.#lastFleetSlot = fleetSlot;
    this.#see(fleetSlot, time);
  }

  /** Writes the changed blocks and the classes that gained methods. */
  write(): void {
    for (const block of this.#changedBlocks) writeBlock(this.#store, block, this.#blocks.get(block)!);
    for (const records of [this.#appEnv, this.#fleet]) {
      for (const { key, stored, added } of records.read.values()) {
        if (added.length === 0) continue;
        added.sort((a, b) => compareCodePoints(a[0], b[0]));
        records.db.put(key, withMethods(stored, added));
      }
    }
    if (this.#nextSlot >= 0) this.#store.meta.put('codeSlotNext', this.#nextSlot);
  }

  #see(slot: number, time: number): void {
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

  #slotOfMiss(records: ClassRecords, classId: string, methodId: string, key: string[], methodName: string): number {
    let change = records.read.get(classId);
    if (change === undefined) {
      change = { key, stored: records.db.get(key), added: [] };
      records.read.set(classId, change);
      const { stored } = change;
      if (stored !== undefined) {
        for (let m = 0; m < stored.methods.length; m++) records.index.set(methodIdOf(classId, stored.methods[m]), stored.slots[m]);
        const slot = records.index.slot(methodId, -1);
        if (slot !== undefined) return slot;
      }
    }
    const slot = this.#allocateSlot();
    records.index.set(methodId, slot);
    change.added.push([methodName, slot]);
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
