// The VM side of the store as columns in shared memory: what report workers scan instead of reading LMDB
// row by row (about 1 µs a read, three reads a VM). The service builds them at start and refreshes the rows
// each committed write touched; workers get a view (typed arrays over SharedArrayBuffers) with each task.
import { SCAN_ROW_BYTES, SCAN_STRING_FIELDS } from './vm-scan.ts';
import type { ScanStringField } from './vm-scan.ts';
import type { Store } from './store.ts';
import { uint32View } from './store.ts';

/**
 * Dictionary-style ids in an arena: two bytes each while every id is below 65,536, as a fleet's component
 * ids are (a few thousand distinct versions), four once one is not. At 1M VMs with 100 components each the
 * component arena is the largest thing the service holds: 200 MB instead of 400.
 */
export type IdArray = Uint16Array | Uint32Array;

/** A list's place in its arena, packed into one float64 so a reader never sees half an update. */
const LENGTH_BITS = 2 ** 21;
const MIN_ROWS = 1024;
const MIN_ARENA = 1 << 16;

/**
 * What crosses to a worker: plain typed arrays over shared memory (structured clone shares them). Rows are
 * `0 … rows-1`; `present[row]` is 0 for a row no VM holds. A view is never resized: growth or compaction
 * makes new arrays, so a task keeps a consistent set for as long as it runs.
 */
export interface FleetColumnsView {
  rows: number;
  present: Uint8Array;
  startTime: Float64Array;
  lastHeardTime: Float64Array;
  /** NaN when the VM was never stopped. */
  stopTime: Float64Array;
  /** Dictionary ids, one column per scan string field. */
  strings: Record<ScanStringField, Uint32Array>;
  /** Tags as (key id, value id) pairs, sorted by key id; `tagSpans[row]` locates them in `tagArena`. */
  tagSpans: Float64Array;
  tagArena: IdArray;
  /** Component ids of each VM, ascending; `componentSpans[row]` locates them in `componentArena`. */
  componentSpans: Float64Array;
  componentArena: IdArray;
}

/** Where a span's list starts in its arena. */
export function spanStart(span: number): number {
  // floor and multiply, not %: a float remainder costs several times more in the scan loops.
  return Math.floor(span / LENGTH_BITS);
}

/** How many values a span's list holds (0 for span 0). */
export function spanLength(span: number): number {
  return span - Math.floor(span / LENGTH_BITS) * LENGTH_BITS;
}

/** The list a span locates, as a view: hot loops read the arena between spanStart and spanLength instead. */
export function spanOf<T extends IdArray>(spans: Float64Array, arena: T, row: number): T {
  const start = spanStart(spans[row]);
  return arena.subarray(start, start + spanLength(spans[row])) as T;
}

function sharedFloat64(length: number, fill = 0): Float64Array {
  const array = new Float64Array(new SharedArrayBuffer(length * 8));
  if (fill !== 0) array.fill(fill);
  return array;
}

function sharedUint32(length: number): Uint32Array {
  return new Uint32Array(new SharedArrayBuffer(length * 4));
}

/** The largest id a two-byte arena holds. */
const NARROW_MAX = 0xffff;

function sharedIds(length: number, wide: boolean): IdArray {
  return wide ? sharedUint32(length) : new Uint16Array(new SharedArrayBuffer(length * 2));
}

/**
 * Append-only lists of ids in one shared array; a replaced list is garbage until the next compaction. The
 * ids take two bytes each until the first larger one, which widens the arena (a compaction into four-byte ids).
 */
class Arena {
  data: IdArray;
  spans: Float64Array;
  used = 0;
  live = 0;

  constructor(rows: number, capacity: number) {
    this.spans = sharedFloat64(rows);
    this.data = sharedIds(capacity, false);
  }

  set(row: number, values: Uint32Array): void {
    const current = spanOf(this.spans, this.data, row);
    if (current.length === values.length && current.every((value, k) => value === values[k])) return;
    const wasWide = this.data instanceof Uint32Array;
    let wide = wasWide;
    for (let k = 0; !wide && k < values.length; k++) wide = values[k] > NARROW_MAX;
    if (this.used + values.length > this.data.length || wide !== wasWide) this.#make(Math.max(this.live + values.length, 1) * 2, this.spans.length, wide);
    this.data.set(values, this.used);
    this.live += values.length - current.length;
    // The list is in place before its span points at it: a reader sees the old list or the new one.
    this.spans[row] = values.length === 0 ? 0 : this.used * LENGTH_BITS + values.length;
    this.used += values.length;
  }

  /** More rows: new spans (the old stay as they are for views that hold them). */
  resize(rows: number): void {
    this.#make(Math.max(MIN_ARENA, this.live * 2), rows, this.data instanceof Uint32Array);
  }

  /** Copies the live lists into new arrays, so that views handed out before keep theirs untouched. */
  #make(capacity: number, rows: number, wide: boolean): void {
    const spans = sharedFloat64(rows);
    const data = sharedIds(Math.max(MIN_ARENA, capacity), wide);
    let used = 0;
    for (let row = 0; row < this.spans.length; row++) {
      const list = spanOf(this.spans, this.data, row);
      if (list.length === 0) continue;
      data.set(list, used);
      spans[row] = used * LENGTH_BITS + list.length;
      used += list.length;
    }
    this.spans = spans;
    this.data = data;
    this.used = used;
    this.live = used;
  }
}

export class FleetColumns {
  readonly #store: Store;
  #view: FleetColumnsView;
  #tags: Arena;
  #components: Arena;

  constructor(store: Store) {
    this.#store = store;
    this.#tags = new Arena(MIN_ROWS, MIN_ARENA);
    this.#components = new Arena(MIN_ROWS, MIN_ARENA);
    this.#view = this.#emptyView(MIN_ROWS);
  }

  /** The columns as they are now, for a task to take along. */
  view(): FleetColumnsView {
    return { ...this.#view, tagSpans: this.#tags.spans, tagArena: this.#tags.data, componentSpans: this.#components.spans, componentArena: this.#components.data };
  }

  /** Reads every VM row of the store (at start, or after another process wrote VM data). */
  reload(): void {
    const rows = (this.#store.meta.get('rowNext') as number | undefined) ?? 0;
    this.#tags = new Arena(Math.max(MIN_ROWS, rows), MIN_ARENA);
    this.#components = new Arena(Math.max(MIN_ROWS, rows), MIN_ARENA);
    this.#view = this.#emptyView(Math.max(MIN_ROWS, rows));
    for (const { key, value } of this.#store.vmScan.getRange()) this.#setScan(key, value);
    for (const { key, value } of this.#store.tags.getRange()) this.#tags.set(key, uint32View(value));
    for (const { key, value } of this.#store.vmComponents.getRange()) this.#components.set(key, componentIds(uint32View(value)));
  }

  /** Re-reads rows after a committed write: scan and tags of `rows`, components of `componentRows`. */
  refresh(rows: Iterable<number>, componentRows: Iterable<number> = []): void {
    for (const row of rows) {
      this.#ensureRows(row + 1);
      this.#setScan(row, this.#store.vmScan.getBinaryFast(row));
      this.#tags.set(row, uint32View(this.#store.tags.getBinaryFast(row)));
    }
    for (const row of componentRows) {
      this.#ensureRows(row + 1);
      this.#components.set(row, componentIds(uint32View(this.#store.vmComponents.getBinaryFast(row))));
    }
  }

  #setScan(row: number, buffer: Buffer | undefined): void {
    if (buffer === undefined || buffer.length < SCAN_ROW_BYTES) return;
    this.#ensureRows(row + 1);
    const view = this.#view;
    view.startTime[row] = buffer.readDoubleLE(0);
    view.lastHeardTime[row] = buffer.readDoubleLE(8);
    view.stopTime[row] = buffer.readDoubleLE(16);
    for (let k = 0; k < SCAN_STRING_FIELDS.length; k++) view.strings[SCAN_STRING_FIELDS[k]][row] = buffer.readUInt32LE(24 + k * 4);
    view.present[row] = 1;
    if (row >= view.rows) view.rows = row + 1;
  }

  #ensureRows(rows: number): void {
    const capacity = this.#view.present.length;
    if (rows <= capacity) return;
    const grown = this.#emptyView(Math.max(rows, capacity * 2));
    const old = this.#view;
    grown.rows = old.rows;
    grown.present.set(old.present);
    grown.startTime.set(old.startTime);
    grown.lastHeardTime.set(old.lastHeardTime);
    grown.stopTime.set(old.stopTime);
    for (const field of SCAN_STRING_FIELDS) grown.strings[field].set(old.strings[field]);
    this.#view = grown;
    this.#tags.resize(grown.present.length);
    this.#components.resize(grown.present.length);
  }

  #emptyView(capacity: number): FleetColumnsView {
    const strings = sharedUint32(capacity * SCAN_STRING_FIELDS.length);
    return {
      rows: 0,
      present: new Uint8Array(new SharedArrayBuffer(capacity)),
      startTime: sharedFloat64(capacity),
      lastHeardTime: sharedFloat64(capacity),
      stopTime: sharedFloat64(capacity, Number.NaN),
      strings: Object.fromEntries(SCAN_STRING_FIELDS.map((field, k) => [field, strings.subarray(k * capacity, (k + 1) * capacity)])) as Record<ScanStringField, Uint32Array>,
      tagSpans: this.#tags.spans,
      tagArena: this.#tags.data,
      componentSpans: this.#components.spans,
      componentArena: this.#components.data,
    };
  }
}

/** The stored (component id, source id) pairs of a VM reduced to its component ids, each once. */
function componentIds(pairs: Uint32Array): Uint32Array {
  const ids = new Uint32Array(pairs.length >>> 1);
  let count = 0;
  for (let k = 0; k < pairs.length; k += 2) {
    // A component found in several JARs has consecutive pairs.
    if (count === 0 || ids[count - 1] !== pairs[k]) ids[count++] = pairs[k];
  }
  return count === ids.length ? ids : ids.subarray(0, count);
}
