// Ungrouped JVM report items in the default order (hostName, vmId), written straight to JSON and msgpack bytes
// in the partition that read them (decisions §7): 100,000 VMs would otherwise cost 100,000 objects cloned
// twice between threads, measured and stringified one by one.
import { compareCodePoints } from '../../../collation.ts';
import { isoTime } from '../../../iso-time.ts';
import type { FieldDef } from '../../../parser/fields.ts';
import { ItemEncoder, msgpackBytes, writeString } from '../encoded-items.ts';
import type { EncodedItems } from '../encoded-items.ts';
import type { FleetSlice } from '../fleet-slice.ts';
import { JVM_ITEM_FIELDS } from '../family-fields.ts';

/** A partition's items in its own order, with the sort keys a merge of partitions needs. */
export interface EncodedJvmItems {
  kind: 'encoded';
  items: EncodedItems;
  hostNames: (string | null)[];
  vmIds: string[];
}

/** null sorts last (decisions §6.3). */
function compareNullable(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return compareCodePoints(a, b);
}

function compareItems(hostA: string | null, vmA: string, hostB: string | null, vmB: string): number {
  return compareNullable(hostA, hostB) || compareCodePoints(vmA, vmB);
}

const ascii = (text: string): Uint8Array => Buffer.from(text, 'latin1');
/** `{"vmId":`, `,"hostName":`, …: what precedes each field's value, in item order. */
const JSON_KEYS = JVM_ITEM_FIELDS.map((field, k) => ascii(`${k === 0 ? '{' : ','}"${field}":`));
const JSON_TAGS = ascii(',"tags":');
const MSGPACK_KEYS = JVM_ITEM_FIELDS.map((field) => msgpackBytes(field));
const MSGPACK_TAGS = msgpackBytes('tags');
/** A fixmap of the item fields and tags. */
const MSGPACK_ITEM_MAP = 0x80 | (JVM_ITEM_FIELDS.length + 1);
const NULL = ascii('null');

function writeValue(encoder: ItemEncoder, value: string | number | null): void {
  if (value === null) {
    encoder.json.reserve(4);
    encoder.json.copy(NULL);
    encoder.msgpack.reserve(1);
    encoder.msgpack.byte(0xc0);
    return;
  }
  writeString(encoder.json, encoder.msgpack, String(value));
}

function writeTags(encoder: ItemEncoder, tags: Record<string, string>): void {
  // Tag keys start with a letter (ingest validation), so an object keeps them in the stored order.
  const keys = Object.keys(tags);
  if (keys.length >= 16) {
    // Past a msgpack fixmap: rare enough to encode through the general path.
    const json = JSON.stringify(tags);
    encoder.json.reserve(json.length * 3);
    encoder.json.utf8(json);
    const bytes = msgpackBytes(tags);
    encoder.msgpack.reserve(bytes.length);
    encoder.msgpack.copy(bytes);
    return;
  }
  encoder.json.reserve(1);
  encoder.json.byte(0x7b);
  encoder.msgpack.reserve(1);
  encoder.msgpack.byte(0x80 | keys.length);
  keys.forEach((key, k) => {
    if (k > 0) {
      encoder.json.reserve(1);
      encoder.json.byte(0x2c);
    }
    writeString(encoder.json, encoder.msgpack, key);
    encoder.json.reserve(1);
    encoder.json.byte(0x3a);
    writeString(encoder.json, encoder.msgpack, tags[key]);
  });
  encoder.json.reserve(1);
  encoder.json.byte(0x7d);
}

/**
 * Encodes the selected rows of a slice (mask[i] === 1) as items in the default order, exactly as
 * jvmFinalize would give them: the fields of decisions §7 (times as ISO text), then tags.
 */
export function encodeJvmItems(slice: FleetSlice, mask: Uint8Array, fields: Record<string, FieldDef>): EncodedJvmItems {
  const rows: number[] = [];
  for (let i = 0; i < slice.count; i++) if (mask[i] === 1) rows.push(i);
  const hostField = fields.hostName;
  const hosts = rows.map((i) => slice.groupValue(hostField, i) as string | null);
  const vms = rows.map((i) => slice.vmId(i));
  const order = rows.map((_, k) => k).sort((a, b) => compareItems(hosts[a], vms[a], hosts[b], vms[b]));

  const encoder = new ItemEncoder();
  for (const k of order) {
    const i = rows[k];
    encoder.msgpack.reserve(1);
    encoder.msgpack.byte(MSGPACK_ITEM_MAP);
    JVM_ITEM_FIELDS.forEach((name, f) => {
      encoder.json.reserve(JSON_KEYS[f].length);
      encoder.json.copy(JSON_KEYS[f]);
      encoder.msgpack.reserve(MSGPACK_KEYS[f].length);
      encoder.msgpack.copy(MSGPACK_KEYS[f]);
      const value = name === 'vmId' ? vms[k] : name === 'hostName' ? hosts[k] : slice.groupValue(fields[name], i);
      writeValue(encoder, name === 'startTime' || name === 'lastHeardTime' ? isoTime(value as number) : value);
    });
    encoder.json.reserve(JSON_TAGS.length);
    encoder.json.copy(JSON_TAGS);
    encoder.msgpack.reserve(MSGPACK_TAGS.length);
    encoder.msgpack.copy(MSGPACK_TAGS);
    writeTags(encoder, slice.tags(i));
    encoder.json.reserve(1);
    encoder.json.byte(0x7d);
    encoder.endItem();
  }
  return { kind: 'encoded', items: encoder.finish(), hostNames: order.map((k) => hosts[k]), vmIds: order.map((k) => vms[k]) };
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
      if (best === -1 || compareItems(partials[p].hostNames[k], partials[p].vmIds[k], partials[best].hostNames[next[best]], partials[best].vmIds[next[best]]) < 0) best = p;
    }
    if (best === -1) break;
    const { items } = partials[best];
    const k = next[best]++;
    const json = items.json.subarray(k === 0 ? 0 : items.jsonEnds[k - 1] + 1, items.jsonEnds[k]);
    const msgpack = items.msgpack.subarray(k === 0 ? 0 : items.msgpackEnds[k - 1], items.msgpackEnds[k]);
    encoder.json.reserve(json.length);
    encoder.json.copy(json);
    encoder.msgpack.reserve(msgpack.length);
    encoder.msgpack.copy(msgpack);
    encoder.endItem();
  }
  return encoder.finish();
}
