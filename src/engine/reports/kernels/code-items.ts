// Code report items written straight to JSON bytes (decisions §8, interface §2.4): the fast path of a code
// report, where a million items would otherwise cost a million objects and strings.
import { writeString } from '../encoded-items.ts';
import type { ItemSink } from '../encoded-items.ts';
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
 * with the times filled in: consecutive methods often share their times, each time written only when it
 * changes.
 */
class ItemTail {
  readonly bytes: Uint8Array;
  readonly #firstAt: number;
  readonly #lastAt: number;
  #firstSeen = Number.NaN;
  #lastSeen = Number.NaN;

  constructor(firstKey: Uint8Array, lastKey: Uint8Array, closing: Uint8Array) {
    this.bytes = Uint8Array.from([...firstKey, ...new Uint8Array(TIME_BYTES), ...lastKey, ...new Uint8Array(TIME_BYTES), ...closing]);
    this.#firstAt = firstKey.length;
    this.#lastAt = firstKey.length + TIME_BYTES + lastKey.length;
  }

  setTimes(firstSeen: number, lastSeen: number): void {
    if (firstSeen !== this.#firstSeen) {
      writeTimeBytes(this.bytes, this.#firstAt, firstSeen);
      this.#firstSeen = firstSeen;
    }
    if (lastSeen !== this.#lastSeen) {
      writeTimeBytes(this.bytes, this.#lastAt, lastSeen);
      this.#lastSeen = lastSeen;
    }
  }
}

/** Encodes classes, as they come, into the items codeFinalize would give: in chunks, or straight into pages. */
export class CodeItemEncoder {
  readonly sink: ItemSink;
  readonly #tail: ItemTail;
  /** Where the current class's leading fields are in the JSON, once written, and the sink's moves then. */
  #head = -1;
  #headEnd = -1;
  #headMoves = 0;

  constructor(withCount: boolean, sink: ItemSink) {
    this.sink = sink;
    this.#tail = new ItemTail(JSON_FIRST_SEEN, JSON_LAST_SEEN, ascii(withCount ? '","count":1}' : '"}'));
  }

  add(cls: ClassMethods): void {
    this.#head = -1;
    for (let m = 0; m < cls.methods.length; m++) {
      this.#startItem(cls.sourceName, cls.className);
      writeString(this.sink.json, cls.methods[m]);
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
      const { json } = this.sink;
      json.reserve(at - start + 2);
      if (!copyQuoted(json, record, start, at)) writeString(json, Buffer.from(record.buffer, record.byteOffset + start, at - start).toString('latin1'));
      this.#endItem(firstSeen, lastSeen);
    }
    return true;
  }

  /** An item's leading fields, the class's: written once, then copied for each further method while they are in the sink's JSON. */
  #startItem(sourceName: string, className: string): void {
    const { json } = this.sink;
    if (this.#head >= 0 && this.#headMoves === this.sink.moves) {
      json.reserve(this.#headEnd - this.#head);
      // A reserve may move the bytes, never their offsets.
      json.repeat(this.#head, this.#headEnd);
      return;
    }
    this.#head = json.length;
    this.#headMoves = this.sink.moves;
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
    this.#tail.setTimes(firstSeen, lastSeen);
    const tail = this.#tail.bytes;
    const { json } = this.sink;
    json.reserve(tail.length);
    json.copy(tail);
    this.sink.endItem();
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
