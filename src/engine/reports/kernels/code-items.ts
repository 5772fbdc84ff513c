// Code report items written straight to JSON and msgpack bytes (decisions §8, interface §2.4): the fast
// path of a code report, where a million items would otherwise cost a million objects and strings.
import { ItemEncoder, msgpackBytes, writeString } from '../encoded-items.ts';
import type { EncodedItems } from '../encoded-items.ts';
import type { ClassMethods } from './class-methods.ts';
import { TIME_BYTES, writeTimeBytes } from '../time-bytes.ts';

const ascii = (text: string): Uint8Array => Buffer.from(text, 'latin1');
/** msgpack of a map key, then (for the time keys) the fixstr header of a 23-byte string. */
const key = (name: string, valueHeader: number[] = []): Uint8Array => Uint8Array.from([...msgpackBytes(name), ...valueHeader]);

const JSON_SOURCE_NAME = ascii('{"sourceName":');
const JSON_CLASS_NAME = ascii(',"className":');
const JSON_METHOD_NAME = ascii(',"methodName":');
const JSON_FIRST_SEEN = ascii(',"firstSeen":"');
const JSON_LAST_SEEN = ascii('","lastSeen":"');
const MSGPACK_SOURCE_NAME = key('sourceName');
const MSGPACK_CLASS_NAME = key('className');
const MSGPACK_METHOD_NAME = key('methodName');
const MSGPACK_FIRST_SEEN = key('firstSeen', [0xa0 | TIME_BYTES]);
const MSGPACK_LAST_SEEN = key('lastSeen', [0xa0 | TIME_BYTES]);

/**
 * An item's last fields (`firstSeen`, `lastSeen`, and `count: 1` when grouped by method) in one encoding,
 * kept as bytes with the times filled in: consecutive methods often share their times.
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

  /** Writes both times; `from`, when given, holds them already (another tail's bytes). */
  setTimes(firstSeen: number, lastSeen: number, from: ItemTail | null): void {
    if (from === null) {
      writeTimeBytes(this.bytes, this.#firstAt, firstSeen);
      writeTimeBytes(this.bytes, this.#lastAt, lastSeen);
      return;
    }
    for (let i = 0; i < TIME_BYTES; i++) {
      this.bytes[this.#firstAt + i] = from.bytes[from.#firstAt + i];
      this.bytes[this.#lastAt + i] = from.bytes[from.#lastAt + i];
    }
  }
}

/** Encodes classes, as they come, into the items codeFinalize would give, for writeEncodedPages. */
export class CodeItemEncoder {
  readonly #encoder = new ItemEncoder();
  readonly #jsonTail: ItemTail;
  readonly #msgpackTail: ItemTail;
  /** A fixmap of 5 or 6 entries. */
  readonly #map: number;
  #firstSeen = Number.NaN;
  #lastSeen = Number.NaN;

  constructor(withCount: boolean) {
    this.#jsonTail = new ItemTail(JSON_FIRST_SEEN, JSON_LAST_SEEN, ascii(withCount ? '","count":1}' : '"}'));
    // `count: 1`: the key, then positive fixint 1.
    this.#msgpackTail = new ItemTail(MSGPACK_FIRST_SEEN, MSGPACK_LAST_SEEN, withCount ? key('count', [0x01]) : new Uint8Array(0));
    this.#map = withCount ? 0x86 : 0x85;
  }

  add(cls: ClassMethods): void {
    const { json, msgpack } = this.#encoder;
    // The item's leading fields are the class's: written once, then copied for each further method.
    const jsonHead = json.length;
    const msgpackHead = msgpack.length;
    json.reserve(JSON_SOURCE_NAME.length);
    json.copy(JSON_SOURCE_NAME);
    msgpack.reserve(1 + MSGPACK_SOURCE_NAME.length);
    msgpack.byte(this.#map);
    msgpack.copy(MSGPACK_SOURCE_NAME);
    writeString(json, msgpack, cls.sourceName);
    json.reserve(JSON_CLASS_NAME.length);
    json.copy(JSON_CLASS_NAME);
    msgpack.reserve(MSGPACK_CLASS_NAME.length);
    msgpack.copy(MSGPACK_CLASS_NAME);
    writeString(json, msgpack, cls.className);
    json.reserve(JSON_METHOD_NAME.length);
    json.copy(JSON_METHOD_NAME);
    msgpack.reserve(MSGPACK_METHOD_NAME.length);
    msgpack.copy(MSGPACK_METHOD_NAME);
    const jsonHeadEnd = json.length;
    const msgpackHeadEnd = msgpack.length;
    const jsonTail = this.#jsonTail.bytes;
    const msgpackTail = this.#msgpackTail.bytes;
    for (let m = 0; m < cls.methods.length; m++) {
      if (m > 0) {
        json.reserve(jsonHeadEnd - jsonHead);
        // A reserve may move the bytes, never their offsets.
        json.repeat(jsonHead, jsonHeadEnd);
        msgpack.reserve(msgpackHeadEnd - msgpackHead);
        msgpack.repeat(msgpackHead, msgpackHeadEnd);
      }
      writeString(json, msgpack, cls.methods[m]);
      const firstSeen = cls.firstSeen[m];
      const lastSeen = cls.lastSeen[m];
      if (firstSeen !== this.#firstSeen || lastSeen !== this.#lastSeen) {
        this.#jsonTail.setTimes(firstSeen, lastSeen, null);
        this.#msgpackTail.setTimes(firstSeen, lastSeen, this.#jsonTail);
        this.#firstSeen = firstSeen;
        this.#lastSeen = lastSeen;
      }
      json.reserve(jsonTail.length);
      json.copy(jsonTail);
      msgpack.reserve(msgpackTail.length);
      msgpack.copy(msgpackTail);
      this.#encoder.endItem();
    }
  }

  finish(): EncodedItems {
    return this.#encoder.finish();
  }
}
