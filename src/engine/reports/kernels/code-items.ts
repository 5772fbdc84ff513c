// Code report items written straight to JSON bytes (decisions §8, interface §2.4): the fast path of a code
// report, where a million items would otherwise cost a million objects and strings.
import { writeString } from '../encoded-items.ts';
import type { ItemSink } from '../encoded-items.ts';
import type { ClassMethods } from './class-methods.ts';
import { TIME_BYTES, writeTimeBytes } from '../time-bytes.ts';
import type { ByteSink } from '../../byte-sink.ts';
import { RecordMethods } from '../../../storage/code-times.ts';
import type { SlotTimes } from '../../../storage/code-times.ts';
import { utf8Slice } from '../../../storage/class-code.ts';
import { METHOD_HEAD } from './timed-classes.ts';
import type { TimedClass } from './timed-classes.ts';

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
  readonly #recordMethods = new RecordMethods();

  constructor(withCount: boolean, sink: ItemSink) {
    this.sink = sink;
    this.#tail = new ItemTail(JSON_FIRST_SEEN, JSON_LAST_SEEN, ascii(withCount ? '","count":1}' : '"}'));
  }

  /** Output is waiting in the sink: a resumable scan returns. */
  get ready(): boolean {
    return this.sink.ready;
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
   * name's bytes into the JSON: no string per method. False, with nothing added, for a record whose names
   * are not all ASCII (RecordMethods), which the caller decodes and adds.
   */
  addRecord(sourceName: string, className: string, record: Uint8Array, times: SlotTimes, window: { from: number; to: number }): boolean {
    const methods = this.#recordMethods;
    if (!methods.read(record, times, window)) return false;
    this.#head = -1;
    while (methods.next()) {
      this.#startItem(sourceName, className);
      this.#name(record, methods.start, methods.end);
      this.#endItem(methods.firstSeen, methods.lastSeen);
    }
    return true;
  }

  /** Adds a class of a code group's classes (timed-classes.ts), copying each name's bytes into the JSON. */
  addTimed({ sourceName, className, timed, view, index }: TimedClass): void {
    const { methods: bytes } = timed;
    this.#head = -1;
    let at = timed.starts[index];
    for (let m = 0; m < timed.counts[index]; m++) {
      const start = at + METHOD_HEAD;
      at = start + view.getUint32(at + 16, true);
      this.#startItem(sourceName, className);
      this.#name(bytes, start, at);
      this.#endItem(view.getFloat64(start - METHOD_HEAD, true), view.getFloat64(start - METHOD_HEAD + 8, true));
    }
  }

  /** A method's name from its UTF-8 bytes [start, end): copied when it needs no escape, else as its string. */
  #name(bytes: Uint8Array, start: number, end: number): void {
    const { json } = this.sink;
    json.reserve(end - start + 2);
    if (!copyQuoted(json, bytes, start, end)) writeString(json, utf8Slice(bytes, start, end));
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
 * UTF-8 bytes [start, end) as a JSON string, when none needs an escape (a quote, a backslash, a control
 * character: JSON.stringify leaves other characters as they are, and stored names hold no lone surrogate,
 * which it would escape); false, with nothing written, otherwise. Room for the bytes and quotes must be reserved.
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
