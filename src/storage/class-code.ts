// Class records (decisions §4: a class's methods and their time slots) as bytes, the way every code report
// scan reads them: `count`, the slots, the UTF-16 length of each name (u32 little-endian), then the names as
// UTF-8. One string decode a record, where msgpack made an object, two arrays and a string per method.
// A fleet-wide record (FleetClassCode) has a method's slots in every AppEnv: `count`, the number of slots,
// each method's slot count, the slots, then the name lengths and names as above.
import type { ClassCode, FleetClassCode } from './records.ts';

export function encodeClassCode(code: ClassCode): Buffer {
  const count = code.methods.length;
  const names = code.methods.join('');
  const head = 4 + 8 * count;
  const bytes = Buffer.allocUnsafe(head + Buffer.byteLength(names));
  bytes.writeUInt32LE(count, 0);
  for (let m = 0; m < count; m++) {
    bytes.writeUInt32LE(code.slots[m], 4 + 4 * m);
    bytes.writeUInt32LE(code.methods[m].length, 4 + 4 * count + 4 * m);
  }
  bytes.write(names, head, 'utf8');
  return bytes;
}

export const uint32At = (bytes: Uint8Array, at: number): number => (bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16) | (bytes[at + 3] << 24)) >>> 0;

type Utf8Slicer = Uint8Array & { utf8Slice(start: number, end: number): string };
const textDecoder = new TextDecoder();
/** Buffer's own utf8Slice where there is one (Node, and lmdb-js hands over Buffers): no view, no checks. */
export const utf8Slice = (bytes: Uint8Array, start: number, end: number): string =>
  typeof (bytes as Partial<Utf8Slicer>).utf8Slice === 'function' ? (bytes as Utf8Slicer).utf8Slice(start, end) : textDecoder.decode(bytes.subarray(start, end));

/** `size` is the record's length when lmdb-js hands over its shared read buffer. */
export function decodeClassCode(bytes: Uint8Array, size: number = bytes.length): ClassCode {
  const count = uint32At(bytes, 0);
  const lengths = 4 + 4 * count;
  // A UTF-8 round trip keeps each name's UTF-16 length (a lone surrogate becomes U+FFFD, one unit too).
  const names = utf8Slice(bytes, lengths + 4 * count, size);
  const methods = new Array<string>(count);
  const slots = new Array<number>(count);
  let at = 0;
  for (let m = 0; m < count; m++) {
    slots[m] = uint32At(bytes, 4 + 4 * m);
    const length = uint32At(bytes, lengths + 4 * m);
    methods[m] = names.slice(at, at + length);
    at += length;
  }
  return { methods, slots };
}

/** The encoder lmdb-js calls for the code database; decoding copies out what it keeps. */
export const classCodeEncoder = {
  encode: encodeClassCode,
  decode: (source: Uint8Array, size?: number | object): ClassCode => decodeClassCode(source, typeof size === 'number' ? size : source.length),
};

export function encodeFleetClassCode(code: FleetClassCode): Buffer {
  const count = code.methods.length;
  const slots = code.slots.flat();
  const names = code.methods.join('');
  const lengths = 8 + 4 * count + 4 * slots.length;
  const bytes = Buffer.allocUnsafe(lengths + 4 * count + Buffer.byteLength(names));
  bytes.writeUInt32LE(count, 0);
  bytes.writeUInt32LE(slots.length, 4);
  for (let m = 0; m < count; m++) {
    bytes.writeUInt32LE(code.slots[m].length, 8 + 4 * m);
    bytes.writeUInt32LE(code.methods[m].length, lengths + 4 * m);
  }
  for (let k = 0; k < slots.length; k++) bytes.writeUInt32LE(slots[k], 8 + 4 * count + 4 * k);
  bytes.write(names, lengths + 4 * count, 'utf8');
  return bytes;
}

/** Where the parts of a fleet-wide record's bytes start, for a scan that reads them in place. */
export function fleetRecordLayout(bytes: Uint8Array): { count: number; slotCounts: number; slots: number; lengths: number; names: number } {
  const count = uint32At(bytes, 0);
  const slots = 8 + 4 * count;
  const lengths = slots + 4 * uint32At(bytes, 4);
  return { count, slotCounts: 8, slots, lengths, names: lengths + 4 * count };
}

export function decodeFleetClassCode(bytes: Uint8Array, size: number = bytes.length): FleetClassCode {
  const layout = fleetRecordLayout(bytes);
  const names = utf8Slice(bytes, layout.names, size);
  const methods = new Array<string>(layout.count);
  const slots = new Array<number[]>(layout.count);
  let at = 0;
  let slot = layout.slots;
  for (let m = 0; m < layout.count; m++) {
    const length = uint32At(bytes, layout.lengths + 4 * m);
    methods[m] = names.slice(at, at + length);
    at += length;
    const list = (slots[m] = new Array<number>(uint32At(bytes, layout.slotCounts + 4 * m)));
    for (let k = 0; k < list.length; k++, slot += 4) list[k] = uint32At(bytes, slot);
  }
  return { methods, slots };
}

/** The encoder lmdb-js calls for the fleet-wide code database. */
export const fleetClassCodeEncoder = {
  encode: encodeFleetClassCode,
  decode: (source: Uint8Array, size?: number | object): FleetClassCode => decodeFleetClassCode(source, typeof size === 'number' ? size : source.length),
};
