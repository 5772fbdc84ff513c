// Report items encoded once, as JSON and msgpack side by side, in the worker that produced them: when a
// partition's items are already in their final order, pages are cut by byte counts and copied, never
// re-encoded, and the items cross threads as one transferred buffer instead of a million cloned objects.
import { pack } from 'msgpackr';

/**
 * The items of one partition, views over one ArrayBuffer. Item k's JSON ends at `jsonEnds[k]` and is
 * followed by a comma (so a run of items is one slice); its msgpack ends at `msgpackEnds[k]`.
 */
export interface EncodedItems {
  count: number;
  json: Uint8Array;
  jsonEnds: Uint32Array;
  msgpack: Uint8Array;
  msgpackEnds: Uint32Array;
}

export function isEncodedItems(value: unknown): value is EncodedItems {
  return typeof value === 'object' && value !== null && (value as Partial<EncodedItems>).jsonEnds instanceof Uint32Array;
}

/** The buffers to transfer, not copy, when partials are posted to another thread. */
export function transferablesOf(partials: readonly unknown[]): ArrayBuffer[] {
  return partials.filter(isEncodedItems).map((items) => items.json.buffer as ArrayBuffer);
}

type Latin1Writer = Buffer & { latin1Write(value: string, offset: number): number };

/**
 * Buffer's own latin1Write (undocumented, in Node and Deno) when there is one: write()'s argument
 * checks cost ~300 ns a call, which is most of the cost of writing a short item.
 */
const latin1Write: (bytes: Buffer, value: string, at: number) => number =
  typeof (Buffer.prototype as Partial<Latin1Writer>).latin1Write === 'function'
    ? (bytes, value, at) => (bytes as Latin1Writer).latin1Write(value, at)
    : (bytes, value, at) => bytes.write(value, at, 'latin1');

/** A growable byte buffer. */
class ByteSink {
  bytes = Buffer.allocUnsafeSlow(1 << 20);
  length = 0;

  reserve(extra: number): void {
    if (this.length + extra <= this.bytes.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(this.length + extra, this.bytes.length * 2));
    this.bytes.copy(grown, 0, 0, this.length);
    this.bytes = grown;
  }

  /** UTF-8 of `value`. */
  text(value: string): void {
    this.reserve(value.length * 3);
    this.length += this.bytes.write(value, this.length);
  }

  /** One byte per character (each below 256): ASCII text, or bytes carried in a string. */
  latin1(value: string): void {
    this.reserve(value.length);
    this.length += latin1Write(this.bytes, value, this.length);
  }

  byte(value: number): void {
    this.reserve(1);
    this.bytes[this.length++] = value;
  }

}

/**
 * The msgpack str of `value` (the shortest of fixstr, str8, str16, str32, then the UTF-8 bytes) as a
 * latin1 string: one character per byte, so that an item's msgpack is written with one native call.
 */
export function msgpackStringLatin1(value: string, size = Buffer.byteLength(value)): string {
  // UTF-8 as long as the text is: ASCII, its characters are its bytes.
  const bytes = size === value.length ? value : Buffer.from(value).toString('latin1');
  if (size < 32) return String.fromCharCode(0xa0 | size) + bytes;
  if (size < 0x100) return String.fromCharCode(0xd9, size) + bytes;
  if (size < 0x10000) return String.fromCharCode(0xda, size >>> 8, size & 0xff) + bytes;
  return String.fromCharCode(0xdb, size >>> 24, (size >>> 16) & 0xff, (size >>> 8) & 0xff, size & 0xff) + bytes;
}

/** The bytes of `value` as a latin1 string. */
export function latin1Of(value: Uint8Array): string {
  return Buffer.from(value.buffer, value.byteOffset, value.length).toString('latin1');
}

/** Collects items written piece by piece into both encodings. */
export class ItemEncoder {
  readonly json = new ByteSink();
  readonly msgpack = new ByteSink();
  #jsonEnds: number[] = [];
  #msgpackEnds: number[] = [];

  /** Closes the current item: its JSON (without the comma) and its msgpack were written. */
  endItem(): void {
    this.#jsonEnds.push(this.json.length);
    this.json.byte(0x2c);
    this.#msgpackEnds.push(this.msgpack.length);
  }

  /** Everything in one new ArrayBuffer: ends first (aligned for the Uint32 views), then the bytes. */
  finish(): EncodedItems {
    const count = this.#jsonEnds.length;
    const buffer = new ArrayBuffer(8 * count + this.json.length + this.msgpack.length);
    const jsonEnds = new Uint32Array(buffer, 0, count);
    jsonEnds.set(this.#jsonEnds);
    const msgpackEnds = new Uint32Array(buffer, 4 * count, count);
    msgpackEnds.set(this.#msgpackEnds);
    const json = new Uint8Array(buffer, 8 * count, this.json.length);
    json.set(this.json.bytes.subarray(0, this.json.length));
    const msgpack = new Uint8Array(buffer, 8 * count + this.json.length, this.msgpack.length);
    msgpack.set(this.msgpack.bytes.subarray(0, this.msgpack.length));
    return { count, json, jsonEnds, msgpack, msgpackEnds };
  }
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
