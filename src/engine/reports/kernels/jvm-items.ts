// Ungrouped JVM report items in the default order (hostName, vmId), written straight to JSON bytes in the
// partition that read them (decisions §7): 100,000 VMs would otherwise cost 100,000 objects cloned
// twice between threads, measured and stringified one by one.
import { compareCodePoints } from '../../../collation.ts';
import { isoTime } from '../../../iso-time.ts';
import type { Column } from '../../../parser/columns.ts';
import type { FieldDef } from '../../../parser/fields.ts';
import { ByteSink } from '../../byte-sink.ts';
import { ItemEncoder, writeString } from '../encoded-items.ts';
import { TIME_BYTES, writeTimeBytes } from '../time-bytes.ts';
import type { EncodedItems, ItemSink } from '../encoded-items.ts';
import type { FleetSlice } from '../fleet-slice.ts';
import { JVM_ITEM_FIELDS } from '../family-fields.ts';
import { compareHostVm } from './row-order.ts';

/** A partition's items in its own order, with the sort keys a merge of partitions needs. */
export interface EncodedJvmItems {
  kind: 'encoded';
  items: EncodedItems;
  hostNames: (string | null)[];
  vmIds: string[];
}

const ascii = (text: string): Uint8Array => Buffer.from(text, 'latin1');
const NULL = ascii('null');
/** Years 0000–9999: the range whose ISO text is 24 bytes (`toISOString` widens others). */
const LAST_FOUR_DIGIT_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** A value's JSON bytes. */
function piece(value: string | null): Uint8Array {
  if (value === null) return NULL;
  const json = new ByteSink(value.length * 3 + 8);
  writeString(json, value);
  return Uint8Array.from(json.written());
}

/** `{"vmId":`, `,"hostName":`, …: what precedes each field's value, in item order. */
const KEYS: Uint8Array[] = JVM_ITEM_FIELDS.map((field, k) => ascii(`${k === 0 ? '{' : ','}"${field}":`));
const TAGS_KEY = ascii(',"tags":');
/** A first guess of an item's JSON size, to size the buffers once. */
const BYTES_PER_ITEM = 400;

/**
 * Writes items field by field from pieces encoded once per distinct value: states, versions, vendors and
 * tag pairs repeat across a fleet, so most of an item is copied, not encoded (vmIds and host names do not).
 */
class JvmItemWriter {
  /** Where items go: set per `JvmItems.encodeInto`, while the pieces are kept. */
  encoder: ItemSink = new ItemEncoder(0);
  /** Per field (by its index), `,"field":value` of each dictionary id met. */
  readonly #fields: Map<number, Uint8Array>[] = JVM_ITEM_FIELDS.map(() => new Map());
  /** `"key":"value"` per tag pair of dictionary ids. */
  readonly #tagPairs = new Map<number, Map<number, Uint8Array>>();
  readonly #slice: FleetSlice;

  constructor(slice: FleetSlice) {
    this.#slice = slice;
  }

  write(bytes: Uint8Array): void {
    const { json } = this.encoder;
    json.reserve(bytes.length);
    json.copy(bytes);
  }

  /** Field f, a dictionary column, at row i: its key and value, copied as one piece. */
  field(f: number, column: Column, i: number): void {
    if (column.kind !== 'dict') throw new Error('JVM item fields beside the times are dictionary columns');
    const pieces = this.#fields[f];
    const id = column.ids[i];
    let bytes = pieces.get(id);
    if (bytes === undefined) pieces.set(id, (bytes = Uint8Array.from([...KEYS[f], ...piece(column.lookup(id))])));
    this.write(bytes);
  }

  /** A string of many values (vmId, hostName): encoded in place, not cached. */
  unique(value: string | null): void {
    if (value === null) this.write(NULL);
    else writeString(this.encoder.json, value);
  }

  time(time: number): void {
    if (!(time >= 0 && time <= LAST_FOUR_DIGIT_TIME)) return this.write(piece(isoTime(time)));
    const { json } = this.encoder;
    json.reserve(TIME_BYTES + 3);
    json.byte(0x22);
    writeTimeBytes(json.bytes, json.length, time);
    json.length += TIME_BYTES;
    json.byte(0x5a);
    json.byte(0x22);
  }

  tags(i: number): void {
    const pairs = this.#slice.tagPairs(i);
    // Most VMs carry the same few tag pairs: copied from pieces, not encoded.
    const { json } = this.encoder;
    json.reserve(1);
    json.byte(0x7b);
    for (let k = 0; k < pairs.length; k += 2) {
      if (k > 0) {
        json.reserve(1);
        json.byte(0x2c);
      }
      this.write(this.#tagPair(pairs[k], pairs[k + 1]));
    }
    json.reserve(1);
    json.byte(0x7d);
  }

  #tagPair(key: number, value: number): Uint8Array {
    let values = this.#tagPairs.get(key);
    if (values === undefined) this.#tagPairs.set(key, (values = new Map()));
    let bytes = values.get(value);
    if (bytes === undefined) {
      const name = piece(this.#slice.lookup(key) ?? '');
      const text = piece(this.#slice.lookup(value) ?? '');
      bytes = Uint8Array.from([...name, 0x3a, ...text]);
      values.set(value, bytes);
    }
    return bytes;
  }
}

/**
 * The selected rows of a slice (mask[i] === 1) as items in the default order, exactly as jvmFinalize
 * would give them: the fields of decisions §7 (times as ISO text), then tags (keys in stored order, which
 * an object keeps: tag keys start with a letter). Encoded run by run as asked, so that a report's only
 * partition can write pages while it encodes the next ones.
 */
export class JvmItems {
  /** The sort keys of each item, in order: what a merge of partitions compares. */
  readonly hostNames: (string | null)[];
  readonly vmIds: string[];
  readonly #rows: number[] = [];
  readonly #slice: FleetSlice;
  readonly #writer: JvmItemWriter;
  readonly #columns: Column[];

  /** `fleetOrder`: every row of the fleet in the default order (RowOrder). */
  constructor(slice: FleetSlice, mask: Uint8Array, fields: Record<string, FieldDef>, fleetOrder: Uint32Array) {
    const first = slice.row(0);
    for (const row of fleetOrder) {
      const i = row - first;
      if (i >= 0 && i < slice.count && mask[i] === 1) this.#rows.push(i);
    }
    this.#slice = slice;
    this.hostNames = this.#rows.map((i) => slice.groupValue(fields.hostName, i) as string | null);
    this.vmIds = this.#rows.map((i) => slice.vmId(i));
    this.#writer = new JvmItemWriter(slice);
    this.#columns = JVM_ITEM_FIELDS.map((name) => slice.column(fields[name]));
  }

  get count(): number {
    return this.#rows.length;
  }

  /** Items [from, to) as one run. */
  encode(from: number, to: number): EncodedItems {
    const encoder = new ItemEncoder(Math.max(1 << 16, (to - from) * BYTES_PER_ITEM));
    this.encodeInto(encoder, from, to);
    return encoder.finish();
  }

  /** Items [from, to), written to `encoder`. */
  encodeInto(encoder: ItemSink, from: number, to: number): void {
    const writer = this.#writer;
    writer.encoder = encoder;
    const columns = this.#columns;
    const { startTime, lastHeardTime } = this.#slice.scan;
    for (let k = from; k < to; k++) {
      const i = this.#rows[k];
      for (let f = 0; f < JVM_ITEM_FIELDS.length; f++) {
        const name = JVM_ITEM_FIELDS[f];
        if (name !== 'vmId' && name !== 'hostName' && name !== 'startTime' && name !== 'lastHeardTime') {
          writer.field(f, columns[f], i);
          continue;
        }
        writer.write(KEYS[f]);
        if (name === 'vmId') writer.unique(this.vmIds[k]);
        else if (name === 'hostName') writer.unique(this.hostNames[k]);
        else if (name === 'startTime') writer.time(startTime[i]);
        else writer.time(lastHeardTime[i]);
      }
      writer.write(TAGS_KEY);
      writer.tags(i);
      encoder.json.reserve(1);
      encoder.json.byte(0x7d);
      encoder.endItem();
    }
  }

  /** Every item as one run, with the keys to merge it with other partitions'. */
  all(): EncodedJvmItems {
    return { kind: 'encoded', items: this.encode(0, this.count), hostNames: this.hostNames, vmIds: this.vmIds };
  }
}

/** Merges partitions' items, each in the default order, into one run in that order (copying item bytes). */
export function mergeJvmItems(partials: readonly EncodedJvmItems[]): EncodedItems {
  if (partials.length === 1) return partials[0].items;
  const encoder = new ItemEncoder();
  const next = partials.map(() => 0);
  for (;;) {
    let best = -1;
    for (let p = 0; p < partials.length; p++) {
      const k = next[p];
      if (k >= partials[p].items.count) continue;
      if (best === -1 || compareHostVm(compareCodePoints, partials[p].hostNames[k], partials[p].vmIds[k], partials[best].hostNames[next[best]], partials[best].vmIds[next[best]]) < 0) best = p;
    }
    if (best === -1) break;
    const { items } = partials[best];
    const k = next[best]++;
    const json = items.json.subarray(k === 0 ? 0 : items.jsonEnds[k - 1] + 1, items.jsonEnds[k]);
    encoder.json.reserve(json.length);
    encoder.json.copy(json);
    encoder.endItem();
  }
  return encoder.finish();
}
