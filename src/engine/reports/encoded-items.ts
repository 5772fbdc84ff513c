// Report items encoded once, as JSON, in the worker that produced them: when a partition's items are already in
// their final order, pages are cut by byte counts and copied, never re-encoded, and the items cross threads as
// transferred buffers instead of a million cloned objects. (A page's msgpack is made from its JSON when a client
// first asks for it: see http/routes/reports.ts.)
import { ByteSink } from '../byte-sink.ts';

/**
 * The items of one partition. Item k's JSON ends at `jsonEnds[k]` and is followed by a comma (so a run
 * of items is one slice). Each array views a buffer of its own.
 */
export interface EncodedItems {
  count: number;
  json: Uint8Array;
  jsonEnds: Uint32Array;
}

/** The buffers to transfer, not copy, when the items are posted to another thread. */
export function transferablesOf(items: EncodedItems): ArrayBuffer[] {
  return [items.json, items.jsonEnds].map((view) => view.buffer as ArrayBuffer);
}

/** A growable list of byte offsets. */
class Offsets {
  #values = new Uint32Array(1024);
  count = 0;

  push(value: number): void {
    if (this.count === this.#values.length) {
      const grown = new Uint32Array(this.#values.length * 2);
      grown.set(this.#values);
      this.#values = grown;
    }
    this.#values[this.count++] = value;
  }

  written(): Uint32Array {
    return this.#values.subarray(0, this.count);
  }
}

/**
 * Where an encoder writes items: JSON bytes at the end of `json`, each item closed by `endItem`. `moves`
 * counts the times the bytes written so far left `json` (a chunk or a page was closed): an encoder copies
 * earlier bytes again only while it is unchanged. `ready`: output is waiting to be handed on.
 */
export interface ItemSink {
  readonly json: ByteSink;
  endItem(): void;
  readonly moves: number;
  readonly ready: boolean;
}

/** Collects items written piece by piece as JSON: one run, kept in one buffer. */
export class ItemEncoder implements ItemSink {
  readonly json: ByteSink;
  readonly #jsonEnds = new Offsets();
  readonly moves = 0;
  readonly ready = false;

  /** `bytes`: a first guess of the JSON size, so that big outputs are not grown step by step. */
  constructor(bytes?: number) {
    this.json = new ByteSink(bytes);
  }

  /** Closes the current item: its JSON (without the comma) was written. */
  endItem(): void {
    this.#jsonEnds.push(this.json.length);
    this.json.reserve(1);
    this.json.byte(0x2c);
  }

  /**
   * The items. Buffers mostly unused are copied to their size first: they are transferred to the service,
   * whose heap counts them as external memory until the pages are cut, and unused megabytes there bring
   * on full collections (31 code partitions held 1 GB, and the service spent 1 s per report collecting).
   */
  finish(): EncodedItems {
    return { count: this.#jsonEnds.count, json: fitted(this.json.written()), jsonEnds: fitted(this.#jsonEnds.written()) };
  }
}

/** The view itself when it fills most of its buffer, else a copy of just its bytes. */
function fitted<T extends Uint8Array | Uint32Array>(view: T): T {
  if (view.byteLength * 2 >= view.buffer.byteLength) return view;
  return view.slice() as T;
}

/** Whether `value` is printable ASCII with nothing JSON escapes: its JSON is its bytes between quotes. */
function isPlainAscii(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    if (unit < 0x20 || unit > 0x7e || unit === 0x22 || unit === 0x5c) return false;
  }
  return true;
}

/** A string as a JSON string; reserves its own room. */
export function writeString(json: ByteSink, value: string): void {
  if (isPlainAscii(value)) {
    json.reserve(value.length + 2);
    json.byte(0x22);
    json.latin1(value);
    json.byte(0x22);
    return;
  }
  const quoted = JSON.stringify(value);
  json.reserve(quoted.length * 3);
  json.utf8(quoted);
}

/** A value as JSON.stringify writes it (strings without a second copy); reserves its own room. */
export function writeJsonValue(json: ByteSink, value: unknown): void {
  if (typeof value === 'string') {
    writeString(json, value);
    return;
  }
  const text = JSON.stringify(value);
  json.reserve(text.length * 3);
  json.utf8(text);
}

/**
 * A chunk's JSON size: a partition's items go out as chunks of about this size rather than one buffer
 * grown by doubling, whose copies cost more than the encoding (a 38 MB partition copied 63 MB).
 */
const CHUNK_BYTES = 4 << 20;

/** A partition's items in chunks, handed to the service. */
export class ChunkedItems implements ItemSink {
  readonly #chunkBytes: number;
  #encoder: ItemEncoder;
  readonly #chunks: EncodedItems[] = [];
  moves = 0;

  /** `chunkBytes`: the JSON size at which a chunk is full (tests make it small). */
  constructor(chunkBytes = CHUNK_BYTES) {
    this.#chunkBytes = chunkBytes;
    this.#encoder = new ItemEncoder(chunkBytes + (64 << 10));
  }

  get json(): ByteSink {
    return this.#encoder.json;
  }

  endItem(): void {
    this.#encoder.endItem();
    if (this.#encoder.json.length < this.#chunkBytes) return;
    this.#chunks.push(this.#encoder.finish());
    this.#encoder = new ItemEncoder(this.#chunkBytes + (64 << 10));
    this.moves++;
  }

  /** Whether a chunk is full, for takeChunks. */
  get ready(): boolean {
    return this.#chunks.length > 0;
  }

  /** The full chunks so far, in order: the items written since stay for the next ones. */
  takeChunks(): EncodedItems[] {
    return this.#chunks.splice(0);
  }

  /** Every chunk left, the last one partly filled. */
  finish(): EncodedItems[] {
    return [...this.takeChunks(), this.#encoder.finish()];
  }
}
