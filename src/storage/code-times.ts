// Code sighting times: [firstSeen, lastSeen] per method slot, stored in blocks of slots. Slots are handed out
// in first-sighting order, so the methods an application loads sit in few blocks and a batch that only
// moves times rewrites those blocks, not one record per class.
import type { MethodTimes } from './records.ts';
import type { Store } from './store.ts';
import { fleetRecordLayout, uint32At } from './class-code.ts';

/** 255 slots of 16 bytes: a block fills one 4 KiB LMDB overflow page with its 16-byte header, where 256 take two. */
export const SLOTS_PER_BLOCK = 255;

/** A block's times as a fresh array; a slot never written holds [+Infinity, -Infinity], so min and max need no case. */
export function readBlock(store: Store, block: number): Float64Array {
  const times = new Float64Array(2 * SLOTS_PER_BLOCK);
  const bytes = store.codeTimes.getBinaryFast(block);
  if (bytes === undefined) {
    for (let i = 0; i < times.length; i += 2) {
      times[i] = Number.POSITIVE_INFINITY;
      times[i + 1] = Number.NEGATIVE_INFINITY;
    }
  } else {
    // getBinaryFast's buffer is only valid until the next read and need not be 8-byte aligned: copy bytes.
    new Uint8Array(times.buffer).set(new Uint8Array(bytes.buffer, bytes.byteOffset, times.byteLength));
  }
  return times;
}

export function writeBlock(store: Store, block: number, times: Float64Array): void {
  store.codeTimes.put(block, Buffer.from(times.buffer, times.byteOffset, times.byteLength));
}

const BLOCK_TIMES = 2 * SLOTS_PER_BLOCK;

/**
 * The code sighting times of the whole fleet, read once: one table by method slot that every partition of
 * a report indexes, instead of each reading the blocks its classes touch.
 */
export class SlotTimes {
  readonly #store: Store;
  /** [firstSeen, lastSeen] by slot. */
  #times: Float64Array;
  /** Whether each block of the table holds the stored times. */
  #loaded: Uint8Array;

  constructor(store: Store) {
    this.#store = store;
    let blocks = 0;
    for (const block of store.codeTimes.getKeys({ reverse: true, limit: 1 })) blocks = block + 1;
    this.#times = new Float64Array(blocks * BLOCK_TIMES);
    this.#loaded = new Uint8Array(blocks);
    const table = new Uint8Array(this.#times.buffer);
    for (const { key: block, value } of store.codeTimes.getRange()) {
      if (block >= blocks) break;
      table.set(value.subarray(0, BLOCK_TIMES * 8), block * BLOCK_TIMES * 8);
      this.#loaded[block] = 1;
    }
  }

  /** The earliest first sighting of these slots: a method's over the AppEnvs of a fleet-wide record. */
  earliest(slots: readonly number[]): number {
    let time = Number.POSITIVE_INFINITY;
    for (const slot of slots) time = Math.min(time, this.firstSeen(slot));
    return time;
  }

  /** The latest last sighting of these slots. */
  latest(slots: readonly number[]): number {
    let time = Number.NEGATIVE_INFINITY;
    for (const slot of slots) time = Math.max(time, this.lastSeen(slot));
    return time;
  }

  /**
   * Whether the table holds the times of the slots stored as uint32s in bytes [from, to), so that reading
   * them touches no LMDB page (a view of LMDB's read buffer stays valid meanwhile).
   */
  holds(bytes: Uint8Array, from: number, to: number): boolean {
    for (let at = from; at < to; at += 4) if (this.#loaded[Math.floor(uint32At(bytes, at) / SLOTS_PER_BLOCK)] !== 1) return false;
    return true;
  }

  firstSeen(slot: number): number {
    return this.#ensure(slot)[2 * slot];
  }

  lastSeen(slot: number): number {
    return this.#ensure(slot)[2 * slot + 1];
  }

  /**
   * The table, with the slot's block in it. A block the table lacks (written since it was read) is read
   * from the task's own snapshot: a partition never misses a method its class records name.
   */
  #ensure(slot: number): Float64Array {
    const block = Math.floor(slot / SLOTS_PER_BLOCK);
    if (this.#loaded[block] === 1) return this.#times;
    if (block >= this.#loaded.length) {
      const times = new Float64Array((block + 1) * BLOCK_TIMES);
      times.set(this.#times);
      const loaded = new Uint8Array(block + 1);
      loaded.set(this.#loaded);
      this.#times = times;
      this.#loaded = loaded;
    }
    this.#times.set(readBlock(this.#store, block), block * BLOCK_TIMES);
    this.#loaded[block] = 1;
    return this.#times;
  }
}

/**
 * The methods of a fleet-wide class record (class-code.ts bytes) seen in a window, one after the other
 * (`next`), each with its name's bytes [start, end) and its times: the widest span over its AppEnvs' slots.
 * Read in place, without a string per method, so only for a record whose names are all ASCII (then each
 * name's UTF-16 length, which the record holds, is its byte length): `read` says whether it is.
 */
export class RecordMethods {
  start = 0;
  end = 0;
  firstSeen = 0;
  lastSeen = 0;
  #record: Uint8Array = new Uint8Array(0);
  #times: SlotTimes | null = null;
  #window = { from: 0, to: 0 };
  #count = 0;
  #method = 0;
  #lengths = 0;
  #slotCounts = 0;
  #slot = 0;

  /** Starts on `record`; false, with nothing to read, when a name is not ASCII: the caller decodes it. */
  read(record: Uint8Array, times: SlotTimes, window: { from: number; to: number }): boolean {
    const layout = fleetRecordLayout(record);
    let nameBytes = 0;
    for (let m = 0; m < layout.count; m++) nameBytes += uint32At(record, layout.lengths + 4 * m);
    this.#count = nameBytes === record.length - layout.names ? layout.count : 0;
    this.#record = record;
    this.#times = times;
    this.#window = window;
    this.#method = 0;
    this.#lengths = layout.lengths;
    this.#slotCounts = layout.slotCounts;
    this.#slot = layout.slots;
    this.end = layout.names;
    return this.#count === layout.count;
  }

  /** Moves to the next method seen in the window; false after the last. */
  next(): boolean {
    const record = this.#record;
    const times = this.#times!;
    while (this.#method < this.#count) {
      const m = this.#method++;
      this.start = this.end;
      this.end += uint32At(record, this.#lengths + 4 * m);
      let firstSeen = Number.POSITIVE_INFINITY;
      let lastSeen = Number.NEGATIVE_INFINITY;
      for (let k = uint32At(record, this.#slotCounts + 4 * m); k > 0; k--, this.#slot += 4) {
        firstSeen = Math.min(firstSeen, times.firstSeen(uint32At(record, this.#slot)));
        lastSeen = Math.max(lastSeen, times.lastSeen(uint32At(record, this.#slot)));
      }
      if (lastSeen < this.#window.from || firstSeen > this.#window.to) continue;
      this.firstSeen = firstSeen;
      this.lastSeen = lastSeen;
      return true;
    }
    return false;
  }
}

/**
 * One class's methods with their times, read now: for tests and tools. A key [sourceName, className,
 * appEnv] reads the AppEnv's record, [sourceName, className] the fleet-wide one.
 */
export function readClassTimes(store: Store, key: string[]): MethodTimes | undefined {
  const times = new SlotTimes(store);
  if (key.length === 2) {
    const fleet = store.fleetCode.get(key);
    return fleet && { methods: fleet.methods, firstSeen: fleet.slots.map((slots) => times.earliest(slots)), lastSeen: fleet.slots.map((slots) => times.latest(slots)) };
  }
  const code = store.code.get(key);
  return code && { methods: code.methods, firstSeen: code.slots.map((slot) => times.firstSeen(slot)), lastSeen: code.slots.map((slot) => times.lastSeen(slot)) };
}
