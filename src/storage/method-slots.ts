// Method id → time slot, held in typed arrays rather than a Map of strings: the ingesting process keeps up
// to millions of ids, and as strings every full collection of its heap walked them all (a service that had
// ingested 1M methods took 1.3-1.5 s per code report, 0.9-1.0 s with its index kept small).
// Ids are stored as UTF-8 back to back; an open-addressing table finds them by hash. (A lone surrogate
// becomes U+FFFD in UTF-8, as it does in the stored class records: such ids are one method, as stored.)

const encoder = new TextEncoder();

/** FNV-1a over bytes [0, length). */
function hashOf(bytes: Uint8Array, length: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < length; i++) hash = Math.imul(hash ^ bytes[i], 0x01000193);
  return hash >>> 0;
}

function grown<T extends Uint8Array | Uint32Array | Int32Array>(array: T, size: number): T {
  const bigger = new (array.constructor as new (length: number) => T)(size);
  bigger.set(array);
  return bigger;
}

export class MethodSlots {
  /** The ids' UTF-8, entry after entry. */
  #bytes = new Uint8Array(1 << 16);
  #used = 0;
  /** Per entry: where its id starts in #bytes, its length, its hash, its slot. */
  #starts = new Uint32Array(1024);
  #lengths = new Uint32Array(1024);
  #hashes = new Uint32Array(1024);
  #slots = new Uint32Array(1024);
  #count = 0;
  /** Entry index + 1 per bucket (0: empty); a power of two at least twice the entries. */
  #buckets = new Int32Array(2048);
  /** Entry index + 1 by slot (0: unknown), below `maxGuessedSlot`. */
  #entryOfSlot = new Int32Array(1024);
  readonly #maxGuessedSlot: number;
  /** The id being looked up, as UTF-8. */
  #key = new Uint8Array(4096);
  #keyLength = 0;

  constructor(maxGuessedSlot: number) {
    this.#maxGuessedSlot = maxGuessedSlot;
  }

  get size(): number {
    return this.#count;
  }

  /** The slot of `id`: `guess` is checked first (one comparison of bytes), then the hash table. */
  slot(id: string, guess: number): number | undefined {
    this.#encode(id);
    if (guess >= 0 && guess < this.#entryOfSlot.length) {
      const entry = this.#entryOfSlot[guess] - 1;
      if (entry >= 0 && this.#matches(entry)) return guess;
    }
    const hash = hashOf(this.#key, this.#keyLength);
    const mask = this.#buckets.length - 1;
    for (let bucket = hash & mask; this.#buckets[bucket] !== 0; bucket = (bucket + 1) & mask) {
      const entry = this.#buckets[bucket] - 1;
      if (this.#hashes[entry] === hash && this.#matches(entry)) return this.#slots[entry];
    }
    return undefined;
  }

  /** Adds `id` with its slot; an id already present keeps its entry (a slot never changes). */
  set(id: string, slot: number): void {
    if (this.slot(id, slot) !== undefined) return;
    const length = this.#keyLength;
    if (this.#used + length > this.#bytes.length) this.#bytes = grown(this.#bytes, Math.max(2 * this.#bytes.length, this.#used + length));
    this.#bytes.set(this.#key.subarray(0, length), this.#used);
    if (this.#count === this.#starts.length) {
      const size = 2 * this.#starts.length;
      this.#starts = grown(this.#starts, size);
      this.#lengths = grown(this.#lengths, size);
      this.#hashes = grown(this.#hashes, size);
      this.#slots = grown(this.#slots, size);
    }
    const entry = this.#count++;
    this.#starts[entry] = this.#used;
    this.#lengths[entry] = length;
    this.#hashes[entry] = hashOf(this.#key, length);
    this.#slots[entry] = slot;
    this.#used += length;
    if (2 * this.#count > this.#buckets.length) this.#rehash(2 * this.#buckets.length);
    else this.#insert(entry);
    if (slot < this.#maxGuessedSlot) {
      if (slot >= this.#entryOfSlot.length) this.#entryOfSlot = grown(this.#entryOfSlot, Math.min(this.#maxGuessedSlot, Math.max(slot + 1, 2 * this.#entryOfSlot.length)));
      this.#entryOfSlot[slot] = entry + 1;
    }
  }

  clear(): void {
    this.#used = 0;
    this.#count = 0;
    this.#buckets.fill(0);
    this.#entryOfSlot.fill(0);
  }

  #encode(id: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    if (3 * id.length > this.#key.length) this.#key = new Uint8Array(3 * id.length);
    this.#keyLength = encoder.encodeInto(id, this.#key).written;
  }

  #matches(entry: number): boolean {
    const length = this.#keyLength;
    if (this.#lengths[entry] !== length) return false;
    const bytes = this.#bytes;
    const key = this.#key;
    for (let i = 0, at = this.#starts[entry]; i < length; i++, at++) if (bytes[at] !== key[i]) return false;
    return true;
  }

  #insert(entry: number): void {
    const mask = this.#buckets.length - 1;
    let bucket = this.#hashes[entry] & mask;
    while (this.#buckets[bucket] !== 0) bucket = (bucket + 1) & mask;
    this.#buckets[bucket] = entry + 1;
  }

  #rehash(size: number): void {
    this.#buckets = new Int32Array(size);
    for (let entry = 0; entry < this.#count; entry++) this.#insert(entry);
  }
}
