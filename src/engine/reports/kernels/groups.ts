// Group ids of VM rows: VM-field values crossed with the time buckets a VM was alive in, as dense integers.
import type { FieldCatalog, FieldDef } from '../../../parser/fields.ts';
import type { FleetSlice } from '../fleet-slice.ts';
import type { GroupValue } from '../report-types.ts';
import { bucketTuple } from '../time-buckets.ts';

const DAY = 86_400_000;

/** The catalogue's fields for the groupBy names of a plan (validated at the edge: a lookup, no parsing). */
export function groupFields(names: readonly string[], catalog: FieldCatalog): FieldDef[] {
  return names.map((name) => {
    const field = catalog.lookup(name);
    if (field === undefined) throw new Error(`a planned groupBy names ${name}, which the ${catalog.family} catalogue lacks`);
    return field;
  });
}

/**
 * Numbers the groups of one slice. A group id is `vmGroup * bucketCount + bucket`: VM-field tuples are
 * numbered as met, time buckets are the distinct tuples of the time fields over the window's days.
 */
export class Grouper {
  readonly #slice: FleetSlice;
  readonly #fields: readonly FieldDef[];
  readonly #vmFields: readonly FieldDef[];
  readonly #timeFields: readonly string[];
  readonly #vmGroups = new Map<string, number>();
  /** A row of each VM group, to decode its values from. */
  readonly #vmGroupRows: number[] = [];
  readonly #firstDay: number;
  readonly #dayBucket: Int32Array;
  readonly #buckets: number[][] = [];
  readonly #stamp: Int32Array;
  readonly #ids: number[] = [];
  /** With a single dictionary field to group on, its ids number the groups through this table (-1: none yet). */
  #groupOfId: Int32Array | null = null;
  /** That field's dictionary ids by row. */
  #dictIds: Uint32Array | null = null;

  constructor(slice: FleetSlice, fields: readonly FieldDef[], from: number, to: number) {
    this.#slice = slice;
    this.#fields = fields;
    this.#vmFields = fields.filter((field) => field.scope !== 'time');
    this.#timeFields = fields.filter((field) => field.scope === 'time').map((field) => field.name);
    this.#firstDay = Math.floor(from / DAY);
    const days = this.#timeFields.length === 0 ? 0 : Math.max(0, Math.floor(to / DAY) - this.#firstDay + 1);
    this.#dayBucket = new Int32Array(days);
    const bucketIds = new Map<string, number>();
    for (let d = 0; d < days; d++) {
      const tuple = bucketTuple(this.#timeFields, (this.#firstDay + d) * DAY);
      const key = tuple.join(',');
      let id = bucketIds.get(key);
      if (id === undefined) {
        id = this.#buckets.length;
        bucketIds.set(key, id);
        this.#buckets.push(tuple);
      }
      this.#dayBucket[d] = id;
    }
    this.#stamp = new Int32Array(Math.max(1, this.#buckets.length)).fill(-1);
    for (const field of this.#vmFields) slice.column(field);
    const only = this.#vmFields.length === 1 ? slice.column(this.#vmFields[0]) : null;
    if (only?.kind === 'dict') {
      this.#groupOfId = new Int32Array(1024).fill(-1);
      this.#dictIds = only.ids;
    }
  }

  get bucketCount(): number {
    return this.#timeFields.length === 0 ? 1 : this.#buckets.length;
  }

  /** Whether every row is in exactly one group (no time fields): then `rowGroups` gives it. */
  get timeless(): boolean {
    return this.#timeFields.length === 0;
  }

  /** The one group of each of `rows` when `timeless`. */
  rowGroups(rows: Int32Array): Int32Array {
    const groups = new Int32Array(rows.length);
    for (let k = 0; k < rows.length; k++) groups[k] = this.#vmGroup(rows[k]);
    return groups;
  }

  /**
   * The group ids of row i, each once, clipped to [from, to] for time buckets. The array is reused
   * by the next call.
   */
  groupsOf(i: number, from: number, to: number): readonly number[] {
    const ids = this.#ids;
    ids.length = 0;
    const vmGroup = this.#vmGroup(i);
    if (this.#timeFields.length === 0) {
      ids.push(vmGroup);
      return ids;
    }
    const first = Math.max(this.#slice.scan.startTime[i], from);
    const last = Math.min(this.#slice.lifeEnd(i), to);
    if (first > last) return ids;
    const base = vmGroup * this.#buckets.length;
    const end = Math.min(Math.floor(last / DAY) - this.#firstDay, this.#dayBucket.length - 1);
    for (let d = Math.max(0, Math.floor(first / DAY) - this.#firstDay); d <= end; d++) {
      const bucket = this.#dayBucket[d];
      // A VM counts once per bucket (day of month 5 recurs across months: one count); stamps hold the row.
      if (this.#stamp[bucket] === i) continue;
      this.#stamp[bucket] = i;
      ids.push(base + bucket);
    }
    return ids;
  }

  /** The values of a group, in groupBy order. */
  values(groupId: number): GroupValue[] {
    const buckets = this.bucketCount;
    const row = this.#vmGroupRows[Math.floor(groupId / buckets)];
    const tuple = this.#timeFields.length === 0 ? [] : this.#buckets[groupId % buckets];
    let vm = 0;
    let time = 0;
    return this.#fields.map((field) => (field.scope === 'time' ? tuple[time++] : this.#slice.groupValue(this.#vmFields[vm++], row)));
  }

  #vmGroup(i: number): number {
    if (this.#vmFields.length === 0) {
      if (this.#vmGroupRows.length === 0) this.#vmGroupRows.push(i);
      return 0;
    }
    if (this.#dictIds !== null) return this.#dictGroup(this.#dictIds[i], i);
    let key = '';
    for (const field of this.#vmFields) {
      const column = this.#slice.column(field);
      key += column.kind === 'dict' ? `${column.ids[i]},` : `${column.values[i]},`;
    }
    let group = this.#vmGroups.get(key);
    if (group === undefined) {
      group = this.#vmGroupRows.length;
      this.#vmGroups.set(key, group);
      this.#vmGroupRows.push(i);
    }
    return group;
  }

  /** The group of row i, whose value has dictionary id `id`. */
  #dictGroup(id: number, i: number): number {
    let table = this.#groupOfId!;
    if (id >= table.length) {
      const grown = new Int32Array(Math.max(id + 1, table.length * 2)).fill(-1);
      grown.set(table);
      this.#groupOfId = table = grown;
    }
    let group = table[id];
    if (group === -1) {
      group = table[id] = this.#vmGroupRows.length;
      this.#vmGroupRows.push(i);
    }
    return group;
  }
}

/** A Map key for a tuple of group values. */
export function tupleKey(values: readonly GroupValue[]): string {
  return JSON.stringify(values);
}
