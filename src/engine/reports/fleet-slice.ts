// A range of VM rows read from LMDB as columns: what the JVM and component kernels filter and group on.
import type { Column } from '../../parser/columns.ts';
import type { FieldDef } from '../../parser/fields.ts';
import type { Dictionary } from '../../storage/dictionary.ts';
import type { Store } from '../../storage/store.ts';
import { uint32s } from '../../storage/store.ts';
import { VM_STATES } from '../../storage/vm-state.ts';
import { SCAN_STRING_FIELDS, ScanColumns } from '../../storage/vm-scan.ts';
import type { ScanStringField } from '../../storage/vm-scan.ts';
import type { GroupValue } from './report-types.ts';

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

export class FleetSlice {
  readonly scan: ScanColumns;
  /** 1 RUNNING, 2 OFFLINE, 3 TERMINATED, as of the report's `now`. */
  readonly states: Uint8Array;
  readonly #store: Store;
  readonly #dict: Dictionary;
  readonly #now: number;
  readonly #columns = new Map<string, Column>();
  #tags: Uint32Array[] | null = null;

  constructor(store: Store, dict: Dictionary, start: number, end: number, now: number, offlineAfterMs: number) {
    this.#store = store;
    this.#dict = dict;
    this.#now = now;
    const last = Math.min(end, (store.meta.get('rowNext') as number | undefined) ?? 0);
    this.scan = new ScanColumns(Math.max(0, last - start));
    for (let row = start; row < last; row++) {
      const buffer = store.vmScan.getBinaryFast(row);
      if (buffer !== undefined) this.scan.push(row, buffer);
    }
    const { startTime, lastHeardTime, stopTime } = this.scan;
    this.states = new Uint8Array(this.scan.count);
    for (let i = 0; i < this.scan.count; i++) {
      // decisions §4: TERMINATED after a stop at or after the start; OFFLINE after silence.
      if (stopTime[i] >= startTime[i]) this.states[i] = TERMINATED;
      else this.states[i] = now - lastHeardTime[i] > offlineAfterMs ? OFFLINE : RUNNING;
    }
  }

  get count(): number {
    return this.scan.count;
  }

  row(i: number): number {
    return this.scan.rows[i];
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

  #tagPairs(): Uint32Array[] {
    this.#tags ??= Array.from(this.scan.rows.subarray(0, this.count), (row) => uint32s(this.#store.tags.getBinaryFast(row)));
    return this.#tags;
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
        const pairs = this.#tagPairs();
        for (let i = 0; i < n; i++) {
          const tags = pairs[i];
          for (let k = 0; k < tags.length; k += 2) {
            if (tags[k] === keyId) {
              ids[i] = tags[k + 1];
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
