// Code report items written straight to JSON bytes (decisions §8, interface §2.4): the fast path of a code
// report, where a million items would otherwise cost a million objects and strings.
import { ItemEncoder, writeString } from '../encoded-items.ts';
import type { EncodedItems } from '../encoded-items.ts';
import type { ClassMethods } from './class-methods.ts';
import { TIME_BYTES, writeTimeBytes } from '../time-bytes.ts';

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

/** Encodes classes, as they come, into the items codeFinalize would give, for writeEncodedPages. */
export class CodeItemEncoder {
  readonly #encoder = new ItemEncoder();
  readonly #tail: ItemTail;
  #firstSeen = Number.NaN;
  #lastSeen = Number.NaN;

  constructor(withCount: boolean) {
    this.#tail = new ItemTail(JSON_FIRST_SEEN, JSON_LAST_SEEN, ascii(withCount ? '","count":1}' : '"}'));
  }

  add(cls: ClassMethods): void {
    const { json } = this.#encoder;
    // The item's leading fields are the class's: written once, then copied for each further method.
    const head = json.length;
    json.reserve(JSON_SOURCE_NAME.length);
    json.copy(JSON_SOURCE_NAME);
    writeString(json, cls.sourceName);
    json.reserve(JSON_CLASS_NAME.length);
    json.copy(JSON_CLASS_NAME);
    writeString(json, cls.className);
    json.reserve(JSON_METHOD_NAME.length);
    json.copy(JSON_METHOD_NAME);
    const headEnd = json.length;
    const tail = this.#tail.bytes;
    for (let m = 0; m < cls.methods.length; m++) {
      if (m > 0) {
        json.reserve(headEnd - head);
        // A reserve may move the bytes, never their offsets.
        json.repeat(head, headEnd);
      }
      writeString(json, cls.methods[m]);
      const firstSeen = cls.firstSeen[m];
      const lastSeen = cls.lastSeen[m];
      if (firstSeen !== this.#firstSeen || lastSeen !== this.#lastSeen) {
        this.#tail.setTimes(firstSeen, lastSeen);
        this.#firstSeen = firstSeen;
        this.#lastSeen = lastSeen;
      }
      json.reserve(tail.length);
      json.copy(tail);
      this.#encoder.endItem();
    }
  }

  finish(): EncodedItems {
    return this.#encoder.finish();
  }
}
