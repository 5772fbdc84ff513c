// A range of VM rows of the shared fleet columns: what the JVM and component kernels filter and group on.
import type { Column } from '../../parser/columns.ts';
import type { FieldDef } from '../../parser/fields.ts';
import type { Dictionary } from '../../storage/dictionary.ts';
import { spanLength, spanOf, spanStart } from '../../storage/fleet-columns.ts';
import type { FleetColumnsView, IdArray } from '../../storage/fleet-columns.ts';
import type { Store } from '../../storage/store.ts';
import { VM_STATES } from '../../storage/vm-state.ts';
import { SCAN_STRING_FIELDS } from '../../storage/vm-scan.ts';
import type { ScanStringField } from '../../storage/vm-scan.ts';
import type { GroupValue } from './report-types.ts';
import type { ShardFilter } from './vm-shards.ts';

const RUNNING = 1;
const OFFLINE = 2;
const TERMINATED = 3;
const stateLookup = (id: number): string | null => VM_STATES[id - 1] ?? null;

/** System property values exist only per slice: encoded here like the store's dictionary. */
class LocalDictionary {
  readonly #ids = new Map<string, number>();
  readonly #strings: (string | null)[] = [null];
  readonly lookup = (id: number): string | null => this.#strings[id] ?? null;

  intern(value: string | null | undefined): number {
    if (value === null || value === undefined) return 0;
    let id = this.#ids.get(value);
    if (id === undefined) {
      id = this.#strings.length;
      this.#strings.push(value);
      this.#ids.set(value, id);
    }
    return id;
  }
}

/** Scan columns of a slice: views into the shared columns, index i being row `start + i`. */
export interface SliceScan {
  startTime: Float64Array;
  lastHeardTime: Float64Array;
  stopTime: Float64Array;
  strings: Record<ScanStringField, Uint32Array>;
}

export class FleetSlice {
  readonly scan: SliceScan;
  /** 0 for an absent row, else 1 RUNNING, 2 OFFLINE, 3 TERMINATED, as of the report's `now`. */
  readonly states: Uint8Array;
  /** Where each row's component ids are in `componentArena` (spanStart, spanLength), row i at i. */
  readonly componentSpans: Float64Array;
  readonly #fleet: FleetColumnsView;
  readonly #store: Store;
  readonly #dict: Dictionary;
  readonly #now: number;
  readonly #start: number;
  readonly #count: number;
  readonly #columns = new Map<string, Column>();

  /** `shards`: only the VMs of some shards are present (a cluster's partition); the others read as absent rows. */
  constructor(fleet: FleetColumnsView, store: Store, dict: Dictionary, start: number, end: number, now: number, offlineAfterMs: number, shards?: ShardFilter) {
    this.#fleet = fleet;
    this.#store = store;
    this.#dict = dict;
    this.#now = now;
    this.#start = Math.min(start, fleet.rows);
    const last = Math.min(end, fleet.rows);
    this.#count = Math.max(0, last - this.#start);
    const view = <T extends Float64Array | Uint32Array>(column: T): T => column.subarray(this.#start, last) as T;
    this.scan = {
      startTime: view(fleet.startTime),
      lastHeardTime: view(fleet.lastHeardTime),
      stopTime: view(fleet.stopTime),
      strings: Object.fromEntries(SCAN_STRING_FIELDS.map((field) => [field, view(fleet.strings[field])])) as Record<ScanStringField, Uint32Array>,
    };
    this.componentSpans = view(fleet.componentSpans);
    const present = fleet.present.subarray(this.#start, last);
    const { startTime, lastHeardTime, stopTime } = this.scan;
    this.states = new Uint8Array(this.#count);
    for (let i = 0; i < this.#count; i++) {
      if (present[i] === 0) continue;
      if (shards !== undefined && shards.take[shards.ofRow[this.#start + i]] !== 1) continue;
      // decisions §4: TERMINATED after a stop at or after the start; OFFLINE after silence.
      if (stopTime[i] >= startTime[i]) this.states[i] = TERMINATED;
      else this.states[i] = now - lastHeardTime[i] > offlineAfterMs ? OFFLINE : RUNNING;
    }
  }

  /** The array that holds every VM's component ids. */
  get componentArena(): IdArray {
    return this.#fleet.componentArena;
  }

  /** The VM's tags as (key id, value id) pairs, sorted by key id. */
  tagPairs(i: number): IdArray {
    return spanOf(this.#fleet.tagSpans, this.#fleet.tagArena, this.#start + i);
  }

  /** The string of a dictionary id (null for none). */
  lookup(id: number): string | null {
    return this.#dict.lookup(id);
  }

  /** The VM's tags, decoded. */
  tags(i: number): Record<string, string> {
    const pairs = this.tagPairs(i);
    const tags: Record<string, string> = {};
    for (let k = 0; k < pairs.length; k += 2) tags[this.#dict.lookup(pairs[k])!] = this.#dict.lookup(pairs[k + 1]) ?? '';
    return tags;
  }

  get count(): number {
    return this.#count;
  }

  row(i: number): number {
    return this.#start + i;
  }

  vmId(i: number): string {
    return this.#dict.lookup(this.scan.strings.vmId[i])!;
  }

  /** The VM's life ends now while RUNNING, else when it was last heard (decisions §7). */
  lifeEnd(i: number): number {
    const heard = this.scan.lastHeardTime[i];
    return this.states[i] === RUNNING ? Math.max(this.#now, heard) : heard;
  }

  column(field: FieldDef): Column {
    let column = this.#columns.get(field.name);
    if (column === undefined) {
      column = this.#build(field);
      this.#columns.set(field.name, column);
    }
    return column;
  }

  /** The value of a VM-scope group field for row i, decoded for the report. */
  groupValue(field: FieldDef, i: number): GroupValue {
    const column = this.column(field);
    if (column.kind === 'number') {
      const value = column.values[i];
      return Number.isNaN(value) ? null : value;
    }
    return column.lookup(column.ids[i]);
  }

  #build(field: FieldDef): Column {
    const n = this.count;
    if ((SCAN_STRING_FIELDS as readonly string[]).includes(field.name)) {
      return { kind: 'dict', ids: this.scan.strings[field.name as ScanStringField], lookup: this.#dict.lookupFunction };
    }
    if (field.tagKey !== undefined) {
      const ids = new Uint32Array(n);
      const keyId = this.#dict.find(field.tagKey);
      if (keyId !== undefined) {
        const { tagSpans: spans, tagArena: arena } = this.#fleet;
        for (let i = 0; i < n; i++) {
          // Read in place: a view per VM would cost more than the scan.
          const span = spans[this.#start + i];
          const end = spanStart(span) + spanLength(span);
          for (let k = spanStart(span); k < end; k += 2) {
            if (arena[k] === keyId) {
              ids[i] = arena[k + 1];
              break;
            }
          }
        }
      }
      return { kind: 'dict', ids, lookup: this.#dict.lookupFunction };
    }
    switch (field.name) {
      case 'state':
        return { kind: 'dict', ids: Uint32Array.from(this.states), lookup: stateLookup };
      case 'startTime':
        return { kind: 'number', values: this.scan.startTime };
      case 'lastHeardTime':
        return { kind: 'number', values: this.scan.lastHeardTime };
    }
    if (field.propertyKey !== undefined) {
      const local = new LocalDictionary();
      const ids = new Uint32Array(n);
      for (let i = 0; i < n; i++) {
        const properties = this.#store.vmDetails.get(this.row(i))?.inventory.systemProperties as Record<string, string> | undefined;
        ids[i] = local.intern(properties?.[field.propertyKey]);
      }
      return { kind: 'dict', ids, lookup: local.lookup };
    }
    throw new Error(`no VM column for field ${field.name}`);
  }
}
