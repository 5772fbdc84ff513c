// A VM as a fixed-width binary row (3 float64 times, then uint32 dictionary ids): its stored record, which
// report scans read as columns and ingestion and the explorer as a VmRecord.
import type { Dictionary } from './dictionary.ts';
import type { VmRecord } from './records.ts';
import type { Store } from './store.ts';

/** The dictionary-id fields of a scan row, in layout order. */
export const SCAN_STRING_FIELDS = ['vmId', 'hostName', 'agentVersion', 'agentRevision', 'mailbox', 'mainMethod', 'javaVersion', 'javaVendor', 'osName', 'osArch'] as const;
export type ScanStringField = (typeof SCAN_STRING_FIELDS)[number];

const TIMES = 3;
export const SCAN_ROW_BYTES = TIMES * 8 + SCAN_STRING_FIELDS.length * 4;

/** Encodes a VM; `vmIdId` is the dictionary id of its vmId. A missing stop time is NaN. */
export function encodeScanRow(record: VmRecord, vmIdId: number): Buffer {
  const buffer = Buffer.alloc(SCAN_ROW_BYTES);
  buffer.writeDoubleLE(record.startTime, 0);
  buffer.writeDoubleLE(record.lastHeardTime, 8);
  buffer.writeDoubleLE(record.stopTime ?? Number.NaN, 16);
  SCAN_STRING_FIELDS.forEach((field, k) => buffer.writeUInt32LE(field === 'vmId' ? vmIdId : record[field], TIMES * 8 + k * 4));
  return buffer;
}

/** The record a scan row holds, for the VM at `row` whose vmId the caller knows (the row holds its dictionary id). */
export function decodeVmRecord(buffer: Buffer, row: number, vmId: string): VmRecord {
  const stopTime = buffer.readDoubleLE(16);
  const record: VmRecord = {
    row, vmId, agentVersion: 0, agentRevision: 0, mailbox: 0, hostName: 0, mainMethod: 0, javaVersion: 0, javaVendor: 0, osName: 0, osArch: 0,
    startTime: buffer.readDoubleLE(0), lastHeardTime: buffer.readDoubleLE(8), stopTime: Number.isNaN(stopTime) ? null : stopTime,
  };
  // From 1: the vmId comes first.
  for (let k = 1; k < SCAN_STRING_FIELDS.length; k++) record[SCAN_STRING_FIELDS[k] as Exclude<ScanStringField, 'vmId'>] = buffer.readUInt32LE(TIMES * 8 + k * 4);
  return record;
}

/** The record of the VM `vmId` at `row`, or undefined where no row is stored. */
export function readVmRecord(store: Store, row: number, vmId: string): VmRecord | undefined {
  const buffer = store.vmScan.getBinaryFast(row);
  return buffer === undefined ? undefined : decodeVmRecord(buffer, row, vmId);
}

/** Every VM's record, in row order. */
export function* vmRecords(store: Store, dict: Dictionary): Generator<VmRecord> {
  for (const { key, value } of store.vmScan.getRange()) yield decodeVmRecord(value, key, dict.lookup(value.readUInt32LE(TIMES * 8))!);
}

/** Columns of many scan rows, filled row by row. */
export class ScanColumns {
  readonly rows: Uint32Array;
  readonly startTime: Float64Array;
  readonly lastHeardTime: Float64Array;
  /** NaN when the VM was never stopped. */
  readonly stopTime: Float64Array;
  readonly strings: Record<ScanStringField, Uint32Array>;
  count = 0;

  constructor(capacity: number) {
    this.rows = new Uint32Array(capacity);
    this.startTime = new Float64Array(capacity);
    this.lastHeardTime = new Float64Array(capacity);
    this.stopTime = new Float64Array(capacity);
    this.strings = Object.fromEntries(SCAN_STRING_FIELDS.map((field) => [field, new Uint32Array(capacity)])) as Record<ScanStringField, Uint32Array>;
  }

  push(row: number, buffer: Buffer): void {
    const i = this.count++;
    this.rows[i] = row;
    this.startTime[i] = buffer.readDoubleLE(0);
    this.lastHeardTime[i] = buffer.readDoubleLE(8);
    this.stopTime[i] = buffer.readDoubleLE(16);
    for (let k = 0; k < SCAN_STRING_FIELDS.length; k++) this.strings[SCAN_STRING_FIELDS[k]][i] = buffer.readUInt32LE(TIMES * 8 + k * 4);
  }
}

export interface ScanRow {
  startTime: number;
  lastHeardTime: number;
  stopTime: number;
  vmId: number;
  hostName: number;
}

/** The times and identity of one VM row, without decoding its msgpack record; decoded into `into` (no allocation per row). */
export function readScanRow(store: Store, row: number, into: ScanRow): ScanRow | undefined {
  const buffer = store.vmScan.getBinaryFast(row);
  return buffer === undefined ? undefined : decodeScanRow(buffer, into);
}

export function decodeScanRow(buffer: Buffer, into: ScanRow): ScanRow {
  into.startTime = buffer.readDoubleLE(0);
  into.lastHeardTime = buffer.readDoubleLE(8);
  into.stopTime = buffer.readDoubleLE(16);
  into.vmId = buffer.readUInt32LE(TIMES * 8);
  into.hostName = buffer.readUInt32LE(TIMES * 8 + 4);
  return into;
}
