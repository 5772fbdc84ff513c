// Code report items written straight to JSON bytes (decisions §8, interface §2.4): the fast path of a code
// report, where a million items would otherwise cost a million objects and strings.
import { ItemEncoder, writeString } from '../encoded-items.ts';
import type { EncodedItems } from '../encoded-items.ts';
import type { ClassMethods } from './class-methods.ts';
import { TIME_BYTES, writeTimeBytes } from '../time-bytes.ts';
import type { ByteSink } from '../../byte-sink.ts';
import type { SlotTimes } from '../../../storage/code-times.ts';
import { fleetRecordLayout, uint32At } from '../../../storage/class-code.ts';

const ascii = (text: string): Uint8Array => Buffer.from(text, 'latin1');

const JSON_SOURCE_NAME = ascii('{"sourceName":');
const JSON_CLASS_NAME = ascii(',"className":');
const JSON_METHOD_NAME = ascii(',"methodName":');
const JSON_FIRST_SEEN = ascii(',"firstSeen":"');
const JSON_LAST_SEEN = ascii('","lastSeen":"');

/**
 * An item's last fields (`firstSeen`, `lastSeen`, and `count: 1` when grouped by method), kept as bytes
 * with the times filled in: consecutive methods often share their times.
 */
class ItemTail {
  readonly bytes: Uint8Array;
  readonly #firstAt: number;
  readonly #lastAt: number;

  constructor(firstKey: Uint8Array, lastKey: Uint8Array, closing: Uint8Array) {
    this.bytes = Uint8Array.from([...firstKey, ...new Uint8Array(TIME_BYTES), ...lastKey, ...new Uint8Array(TIME_BYTES), ...closing]);
    this.#firstAt = firstKey.length;
    this.#lastAt = firstKey.length + TIME_BYTES + lastKey.length;
  }

  setTimes(firstSeen: number, lastSeen: number): void {
    writeTimeBytes(this.bytes, this.#firstAt, firstSeen);
    writeTimeBytes(this.bytes, this.#lastAt, lastSeen);
  }
}

/**
 * A chunk's JSON size: a partition's items go out as chunks of about this size rather than one buffer
 * grown by doubling, whose copies cost more than the encoding (a 38 MB partition copied 63 MB).
 */
const CHUNK_BYTES = 4 << 20;

/** Encodes classes, as they come, into the items codeFinalize would give, for writeEncodedPages. */
export class CodeItemEncoder {
  readonly #chunkBytes: number;
  #encoder: ItemEncoder;
  readonly #chunks: EncodedItems[] = [];
  readonly #tail: ItemTail;
  #firstSeen = Number.NaN;
  #lastSeen = Number.NaN;
  /** Where the current class's leading fields are in the JSON, once written. */
  #head = -1;
  #headEnd = -1;

  /** `chunkBytes`: the JSON size at which a chunk is full (tests make it small). */
  constructor(withCount: boolean, chunkBytes = CHUNK_BYTES) {
    this.#chunkBytes = chunkBytes;
    this.#encoder = new ItemEncoder(chunkBytes + (64 << 10));
    this.#tail = new ItemTail(JSON_FIRST_SEEN, JSON_LAST_SEEN, ascii(withCount ? '","count":1}' : '"}'));
  }

  add(cls: ClassMethods): void {
    this.#head = -1;
    for (let m = 0; m < cls.methods.length; m++) {
      this.#startItem(cls.sourceName, cls.className);
      writeString(this.#encoder.json, cls.methods[m]);
      this.#endItem(cls.firstSeen[m], cls.lastSeen[m]);
    }
  }

  /**
   * Adds the methods of a fleet-wide class record (class-code.ts bytes) seen in the window, copying each
   * name's bytes into the JSON: no string per method. Only for a record whose names are all ASCII (then
   * each name's UTF-16 length is its byte length); false for any other, which the caller decodes and adds.
   */
  addRecord(sourceName: string, className: string, record: Uint8Array, times: SlotTimes, window: { from: number; to: number }): boolean {
    const layout = fleetRecordLayout(record);
    let nameBytes = 0;
    for (let m = 0; m < layout.count; m++) nameBytes += uint32At(record, layout.lengths + 4 * m);
    if (nameBytes !== record.length - layout.names) return false;
    this.#head = -1;
    let at = layout.names;
    let slot = layout.slots;
    for (let m = 0; m < layout.count; m++) {
      const start = at;
      at += uint32At(record, layout.lengths + 4 * m);
      // The method's times: the widest span over its AppEnvs' slots.
      let firstSeen = Number.POSITIVE_INFINITY;
      let lastSeen = Number.NEGATIVE_INFINITY;
      for (let k = uint32At(record, layout.slotCounts + 4 * m); k > 0; k--, slot += 4) {
        firstSeen = Math.min(firstSeen, times.firstSeen(uint32At(record, slot)));
        lastSeen = Math.max(lastSeen, times.lastSeen(uint32At(record, slot)));
      }
      if (lastSeen < window.from || firstSeen > window.to) continue;
      this.#startItem(sourceName, className);
      const { json } = this.#encoder;
      json.reserve(at - start + 2);
      if (!copyQuoted(json, record, start, at)) writeString(json, Buffer.from(record.buffer, record.byteOffset + start, at - start).toString('latin1'));
      this.#endItem(firstSeen, lastSeen);
    }
    return true;
  }

  /** The items in chunks, in order. */
  finish(): EncodedItems[] {
    return [...this.takeChunks(), this.#encoder.finish()];
  }

  /** Whether a chunk is full, for takeChunks. */
  get chunksReady(): boolean {
    return this.#chunks.length > 0;
  }

  /** The full chunks so far, in order: the items written since stay for the next ones. */
  takeChunks(): EncodedItems[] {
    return this.#chunks.splice(0);
  }

  /** An item's leading fields, the class's: written once, then copied for each further method. */
  #startItem(sourceName: string, className: string): void {
    const { json } = this.#encoder;
    if (this.#head >= 0) {
      json.reserve(this.#headEnd - this.#head);
      // A reserve may move the bytes, never their offsets.
      json.repeat(this.#head, this.#headEnd);
      return;
    }
    this.#head = json.length;
    json.reserve(JSON_SOURCE_NAME.length);
    json.copy(JSON_SOURCE_NAME);
    writeString(json, sourceName);
    json.reserve(JSON_CLASS_NAME.length);
    json.copy(JSON_CLASS_NAME);
    writeString(json, className);
    json.reserve(JSON_METHOD_NAME.length);
    json.copy(JSON_METHOD_NAME);
    this.#headEnd = json.length;
  }

  #endItem(firstSeen: number, lastSeen: number): void {
    if (firstSeen !== this.#firstSeen || lastSeen !== this.#lastSeen) {
      this.#tail.setTimes(firstSeen, lastSeen);
      this.#firstSeen = firstSeen;
      this.#lastSeen = lastSeen;
    }
    const tail = this.#tail.bytes;
    const { json } = this.#encoder;
    json.reserve(tail.length);
    json.copy(tail);
    this.#encoder.endItem();
    if (json.length >= this.#chunkBytes) {
      this.#chunks.push(this.#encoder.finish());
      this.#encoder = new ItemEncoder(this.#chunkBytes + (64 << 10));
      // The class's leading fields are in the finished chunk: written again in the next.
      this.#head = -1;
    }
  }
}

/**
 * ASCII bytes [start, end) as a JSON string, when none needs an escape (a quote, a backslash, a control
 * character); false, with nothing written, otherwise. Room for the bytes and quotes must be reserved.
 */
function copyQuoted(json: ByteSink, bytes: Uint8Array, start: number, end: number): boolean {
  const out = json.bytes;
  let at = json.length;
  out[at++] = 0x22;
  for (let i = start; i < end; i++) {
    const byte = bytes[i];
    if (byte < 0x20 || byte === 0x22 || byte === 0x5c) return false;
    out[at++] = byte;
  }
  out[at++] = 0x22;
  json.length = at;
  return true;
}
