// Report items encoded once, as JSON and msgpack side by side, in the worker that produced them: when a
// partition's items are already in their final order, pages are cut by byte counts and copied, never
// re-encoded, and the items cross threads as transferred buffers instead of a million cloned objects.
import { pack } from 'msgpackr';
import { ByteSink } from '../byte-sink.ts';

/**
 * The items of one partition. Item k's JSON ends at `jsonEnds[k]` and is followed by a comma (so a run
 * of items is one slice); its msgpack ends at `msgpackEnds[k]`. Each array views a buffer of its own.
 */
export interface EncodedItems {
  count: number;
  json: Uint8Array;
  jsonEnds: Uint32Array;
  msgpack: Uint8Array;
  msgpackEnds: Uint32Array;
}

/** The buffers to transfer, not copy, when the items are posted to another thread. */
export function transferablesOf(items: EncodedItems): ArrayBuffer[] {
  return [items.json, items.jsonEnds, items.msgpack, items.msgpackEnds].map((view) => view.buffer as ArrayBuffer);
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

/** Collects items written piece by piece into both encodings. */
export class ItemEncoder {
  readonly json: ByteSink;
  readonly msgpack: ByteSink;
  readonly #jsonEnds = new Offsets();
  readonly #msgpackEnds = new Offsets();

  /** `bytes`: a first guess of the JSON size (msgpack is smaller), so that big outputs are not grown step by step. */
  constructor(bytes?: number) {
    this.json = new ByteSink(bytes);
    this.msgpack = new ByteSink(bytes);
  }

  /** Closes the current item: its JSON (without the comma) and its msgpack were written. */
  endItem(): void {
    this.#jsonEnds.push(this.json.length);
    this.json.reserve(1);
    this.json.byte(0x2c);
    this.#msgpackEnds.push(this.msgpack.length);
  }

  /** The items, as views over the encoder's own buffers (handed over, not copied). */
  /**
   * The items. Buffers mostly unused are copied to their size first: they are transferred to the service,
   * whose heap counts them as external memory until the pages are cut, and unused megabytes there bring
   * on full collections (31 code partitions held 1 GB, and the service spent 1 s per report collecting).
   */
  finish(): EncodedItems {
    return { count: this.#jsonEnds.count, json: fitted(this.json.written()), jsonEnds: fitted(this.#jsonEnds.written()), msgpack: fitted(this.msgpack.written()), msgpackEnds: fitted(this.#msgpackEnds.written()) };
  }
}

/** The view itself when it fills most of its buffer, else a copy of just its bytes. */
function fitted<T extends Uint8Array | Uint32Array>(view: T): T {
  if (view.byteLength * 2 >= view.buffer.byteLength) return view;
  return view.slice() as T;
}

/** The msgpack bytes of a value, copied out of msgpackr's shared buffer: for constant item parts. */
export function msgpackBytes(value: unknown): Uint8Array {
  return Uint8Array.from(pack(value));
}

/** A msgpack array header for `count` elements. */
export function msgpackArrayHeader(count: number): Buffer {
  if (count < 16) return Buffer.of(0x90 | count);
  if (count < 0x10000) return Buffer.of(0xdc, count >>> 8, count & 0xff);
  const header = Buffer.alloc(5);
  header[0] = 0xdd;
  header.writeUInt32BE(count, 1);
  return header;
}

/** Writes the msgpack str header for `size` UTF-8 bytes (fixstr, str8, str16 or str32); reserve 5 bytes. */
function msgpackStringHeader(sink: ByteSink, size: number): void {
  if (size < 32) sink.byte(0xa0 | size);
  else if (size < 0x100) {
    sink.byte(0xd9);
    sink.byte(size);
  } else if (size < 0x10000) {
    sink.byte(0xda);
    sink.byte(size >>> 8);
    sink.byte(size & 0xff);
  } else {
    sink.byte(0xdb);
    sink.byte(size >>> 24);
    sink.byte((size >>> 16) & 0xff);
    sink.byte((size >>> 8) & 0xff);
    sink.byte(size & 0xff);
  }
}

/** Whether `value` is printable ASCII with nothing JSON escapes: its JSON is its bytes between quotes. */
function isPlainAscii(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    if (unit < 0x20 || unit > 0x7e || unit === 0x22 || unit === 0x5c) return false;
  }
  return true;
}

/** A string as a JSON string and as a msgpack str, written to both sinks; reserves its own room. */
export function writeString(json: ByteSink, msgpack: ByteSink, value: string): void {
  if (isPlainAscii(value)) {
    json.reserve(value.length + 2);
    json.byte(0x22);
    json.latin1(value);
    json.byte(0x22);
    msgpack.reserve(value.length + 5);
    msgpackStringHeader(msgpack, value.length);
    msgpack.latin1(value);
    return;
  }
  const quoted = JSON.stringify(value);
  json.reserve(quoted.length * 3);
  json.utf8(quoted);
  msgpack.reserve(value.length * 3 + 5);
  msgpackStringHeader(msgpack, Buffer.byteLength(value));
  msgpack.utf8(value);
}
