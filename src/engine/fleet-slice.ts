// A range of VM rows read from LMDB as columns: what the JVM and component kernels filter and group on.
import type { Column } from '../parser/columns.ts';
import type { FieldDef } from '../parser/fields.ts';
import type { Dictionary } from '../storage/dictionary.ts';
import type { VmRecord } from '../storage/records.ts';
import type { Store } from '../storage/store.ts';
import { isTerminated, VM_STATES, vmState } from '../storage/vm-state.ts';
import type { GroupValue } from './report-types.ts';

type DictField = 'hostName' | 'agentVersion' | 'agentRevision' | 'mailbox' | 'mainMethod' | 'javaVersion' | 'javaVendor' | 'osName' | 'osArch';
const DICT_FIELDS: readonly string[] = ['hostName', 'agentVersion', 'agentRevision', 'mailbox', 'mainMethod', 'javaVersion', 'javaVendor', 'osName', 'osArch'];

/** Strings that exist only for one slice (vmIds, states, system properties), encoded like the store's dictionary. */
class LocalDictionary {
  readonly #ids = new Map<string, number>();
  readonly strings: (string | null)[] = [null];
  readonly lookup = (id: number): string | null => this.strings[id] ?? null;

  intern(value: string | null | undefined): number {
    if (value === null || value === undefined) return 0;
    let id = this.#ids.get(value);
    if (id === undefined) {
      id = this.strings.length;
      this.strings.push(value);
      this.#ids.set(value, id);
    }
    return id;
  }
}

const stateDictionary = new LocalDictionary();
for (const state of VM_STATES) stateDictionary.intern(state);

export class FleetSlice {
  readonly records: VmRecord[];
  readonly #store: Store;
  readonly #dict: Dictionary;
  readonly #now: number;
  readonly #offlineAfterMs: number;
  readonly #columns = new Map<string, Column>();
  #tags: (number[] | undefined)[] | null = null;

  constructor(store: Store, dict: Dictionary, start: number, end: number, now: number, offlineAfterMs: number) {
    this.#store = store;
    this.#dict = dict;
    this.#now = now;
    this.#offlineAfterMs = offlineAfterMs;
    this.records = [];
    for (const { value } of store.vms.getRange({ start, end })) this.records.push(value);
  }

  get count(): number {
    return this.records.length;
  }

  /** The VM's life: from its start to now while RUNNING, else to when it was last heard (decisions §7). */
  lifeEnd(i: number): number {
    const record = this.records[i];
    return vmState(record, this.#now, this.#offlineAfterMs) === 'RUNNING' ? Math.max(this.#now, record.lastHeardTime) : record.lastHeardTime;
  }

  terminated(i: number): boolean {
    return isTerminated(this.records[i]);
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

  #tagPairs(): (number[] | undefined)[] {
    if (this.#tags === null) this.#tags = this.records.map((record) => this.#store.tags.get(record.row));
    return this.#tags;
  }

  #build(field: FieldDef): Column {
    const n = this.records.length;
    const dictLookup = this.#dict.lookupFunction;
    if (DICT_FIELDS.includes(field.name)) {
      const ids = new Uint32Array(n);
      const key = field.name as DictField;
      for (let i = 0; i < n; i++) ids[i] = this.records[i][key];
      return { kind: 'dict', ids, lookup: dictLookup };
    }
    if (field.tagKey !== undefined) {
      const ids = new Uint32Array(n);
      const keyId = this.#dict.find(field.tagKey);
      if (keyId !== undefined) {
        const pairs = this.#tagPairs();
        for (let i = 0; i < n; i++) {
          const tags = pairs[i];
          if (tags === undefined) continue;
          for (let k = 0; k < tags.length; k += 2) {
            if (tags[k] === keyId) {
              ids[i] = tags[k + 1];
              break;
            }
          }
        }
      }
      return { kind: 'dict', ids, lookup: dictLookup };
    }
    switch (field.name) {
      case 'vmId': {
        const local = new LocalDictionary();
        const ids = new Uint32Array(n);
        for (let i = 0; i < n; i++) ids[i] = local.intern(this.records[i].vmId);
        return { kind: 'dict', ids, lookup: local.lookup };
      }
      case 'state': {
        const ids = new Uint32Array(n);
        for (let i = 0; i < n; i++) ids[i] = stateDictionary.intern(vmState(this.records[i], this.#now, this.#offlineAfterMs));
        return { kind: 'dict', ids, lookup: stateDictionary.lookup };
      }
      case 'startTime':
      case 'lastHeardTime': {
        const values = new Float64Array(n);
        for (let i = 0; i < n; i++) values[i] = this.records[i][field.name];
        return { kind: 'number', values };
      }
    }
    if (field.propertyKey !== undefined) {
      const local = new LocalDictionary();
      const ids = new Uint32Array(n);
      for (let i = 0; i < n; i++) {
        const properties = this.#store.vmDetails.get(this.records[i].row)?.inventory.systemProperties as Record<string, string> | undefined;
        ids[i] = local.intern(properties?.[field.propertyKey]);
      }
      return { kind: 'dict', ids, lookup: local.lookup };
    }
    throw new Error(`no VM column for field ${field.name}`);
  }
}
