// Code sighting times: [firstSeen, lastSeen] per method slot, stored in blocks of slots. Slots are handed out
// in first-sighting order, so the methods an application loads sit in few blocks and a batch that only
// moves times rewrites those blocks, not one record per class.
import type { ClassCode, MethodTimes } from './records.ts';
import type { Store } from './store.ts';

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

/**
 * Joins class records with their times for a reader. Blocks are read once each; they agree with the class
 * records when both are read in one read transaction (one synchronous scan).
 */
export class CodeTimesReader {
  readonly #store: Store;
  readonly #blocks = new Map<number, Float64Array>();

  constructor(store: Store) {
    this.#store = store;
  }

  times(code: ClassCode): MethodTimes {
    const count = code.slots.length;
    const firstSeen = new Array<number>(count);
    const lastSeen = new Array<number>(count);
    for (let m = 0; m < count; m++) {
      const slot = code.slots[m];
      const times = this.#block(Math.floor(slot / SLOTS_PER_BLOCK));
      const at = 2 * (slot % SLOTS_PER_BLOCK);
      firstSeen[m] = times[at];
      lastSeen[m] = times[at + 1];
    }
    return { methods: code.methods, firstSeen, lastSeen };
  }

  #block(block: number): Float64Array {
    let times = this.#blocks.get(block);
    if (times === undefined) {
      times = readBlock(this.#store, block);
      this.#blocks.set(block, times);
    }
    return times;
  }
}

/** One class's methods with their times, read now: for tests and tools. */
export function readClassTimes(store: Store, key: string[]): MethodTimes | undefined {
  const code = store.code.get(key);
  return code === undefined ? undefined : new CodeTimesReader(store).times(code);
}
