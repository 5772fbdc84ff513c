// Component inventory kernel (decisions §9): (VM, component) pairs counted per group in dense integer arrays.
import { evaluateConditions } from '../../../parser/columns.ts';
import type { Column } from '../../../parser/columns.ts';
import type { FieldDef } from '../../../parser/fields.ts';
import { bindFilter } from '../../../parser/filter.ts';
import type { Condition } from '../../../parser/filter.ts';
import { codePointComparator, compareCodePoints } from '../../../collation.ts';
import { orderKeys, sortItems } from '../item-order.ts';
import type { Collation, OrderKey } from '../item-order.ts';
import type { ComponentCve, ComponentRecord } from '../../../storage/records.ts';
import type { Store } from '../../../storage/store.ts';
import { FleetSlice } from '../fleet-slice.ts';
import { spanLength, spanStart } from '../../../storage/fleet-columns.ts';
import { CATALOGS } from '../family-fields.ts';
import type { GroupValue, ReportRequest } from '../report-types.ts';
import type { KernelContext } from './kernel-context.ts';
import type { ItemWriter } from '../pages.ts';
import type { ComponentNames } from './component-names.ts';
import { ByteSink } from '../../byte-sink.ts';
import { writeJsonValue } from '../encoded-items.ts';
import { groupFields, Grouper, tupleKey } from './groups.ts';

export interface ComponentPartial {
  groups: GroupValue[][];
  /**
   * Every group's [componentId, count, …], ids ascending, group after group: group g's end at
   * `countEnds[g]`. Flat, not an array per group: a report by host has tens of thousands of groups.
   */
  counts: Uint32Array;
  countEnds: Uint32Array;
  /** Per group, with `detail`: component id → vmIds. */
  vmIds: Record<number, string[]>[] | null;
  vmCount: number;
  /** Ids of the components counted at least once. */
  components: Uint32Array;
}

/** Every component of the fleet with its CVEs, indexed by component id. */
export interface ComponentTable {
  records: (ComponentRecord | undefined)[];
  cves: (ComponentCve[] | undefined)[];
}

export function readComponentTable(store: Store): ComponentTable {
  const records: (ComponentRecord | undefined)[] = [];
  const cves: (ComponentCve[] | undefined)[] = [];
  for (const { key, value } of store.components.getRange()) records[key] = value;
  for (const { key, value } of store.componentCves.getRange()) cves[key] = value;
  return { records, cves };
}

/** Evaluates the component-scope conditions once per component: a 0/1 mask by component id. */
function componentMask(table: ComponentTable, conditions: readonly Condition[]): Uint8Array {
  const n = table.records.length;
  const mask = new Uint8Array(n);
  for (let id = 0; id < n; id++) mask[id] = table.records[id] === undefined ? 0 : 1;
  for (const condition of conditions) {
    for (let id = 0; id < n; id++) {
      if (mask[id] === 0) continue;
      const record = table.records[id]!;
      const cves = table.cves[id] ?? [];
      let pass: boolean;
      switch (condition.field.name) {
        case 'componentName':
          pass = condition.test(record.componentName);
          break;
        case 'componentVersion':
          pass = condition.test(record.componentVersion);
          break;
        case 'cveId':
          // A component has many CVEs: it passes when one of them does (or, with none, when null does).
          pass = cves.length === 0 ? condition.test(null) : cves.some((cve) => condition.test(cve.cveId));
          break;
        default:
          pass = condition.test(highestScore(cves));
      }
      if (!pass) mask[id] = 0;
    }
  }
  return mask;
}

/**
 * Beyond this many dense counters in all (16 MiB), further groups are counted one at a time after the scan
 * (countGroupByGroup): a report grouped by host has a group per VM or two, and a dense array each would
 * take gigabytes to fill and to read back.
 */
const DENSE_LIMIT = 1 << 22;
/**
 * Dense counters of the unfiltered count come in lanes, one per step of the unrolled loop (counter of id c,
 * lane l at c * LANES + l): consecutive ids then never wait on the same counter's store. Summed when the
 * partition ends.
 */
const LANES = 4;

/**
 * Which components a report counts, numbered densely: with component conditions (`componentName =
 * 'log4j-core'`) a group's counters cover the few that pass, not the whole component table.
 */
interface CountedComponents {
  /** Component id → its counter, -1 for one that does not count. */
  slotOf: Int32Array;
  /** Counter → component id. */
  componentOf: Uint32Array;
}

function countedComponents(allowed: Uint8Array): CountedComponents {
  const slotOf = new Int32Array(allowed.length).fill(-1);
  const componentOf: number[] = [];
  for (let c = 0; c < allowed.length; c++) {
    if (allowed[c] === 0) continue;
    slotOf[c] = componentOf.length;
    componentOf.push(c);
  }
  return { slotOf, componentOf: Uint32Array.from(componentOf) };
}

/** `denseLimit`: counters held in dense arrays before groups are counted one by one (tests lower it to reach that path). */
export function componentPartition(context: KernelContext, request: ReportRequest, start: number, end: number, denseLimit = DENSE_LIMIT): ComponentPartial {
  const slice = new FleetSlice(context.fleet, context.store, context.dict, start, end, request.now, request.offlineAfterMs);
  const catalog = CATALOGS.component;
  const { conditions } = bindFilter(request.conditions, catalog);
  const vmConditions = conditions.filter((c) => c.field.scope === 'vm');
  const mask = evaluateConditions(vmConditions, (field: FieldDef): Column => slice.column(field), slice.count);
  const componentConditions = conditions.filter((c) => c.field.scope === 'component');
  // Without component conditions every component counts: no need to read the component table.
  const componentCount = (context.store.meta.get('componentNext') as number | undefined) ?? 0;
  const countEvery = request.detail !== true && componentConditions.length === 0;
  const counted = countedComponents(componentConditions.length === 0 ? new Uint8Array(componentCount).fill(1) : componentMask(readComponentTable(context.store), componentConditions));
  const { slotOf, componentOf } = counted;
  const slots = componentOf.length;
  // The unrolled loop of the unfiltered count spreads its increments over lanes; the filtered one does not.
  const lanes = countEvery ? LANES : 1;
  const to = request.to ?? request.now;
  // Component fields in groupBy come from the component itself (componentFinalize): partitions group on the rest.
  const grouper = new Grouper(slice, groupFields(request.groupBy, catalog).filter((field) => field.scope !== 'component'), request.from, to);

  const groups = new GroupIndex(grouper);
  const { memberships, rowFrom, rowTo, vmCount } = planCounts(slice, mask, grouper, groups, countEvery ? null : slotOf, componentCount, request.from, request.to ?? Number.POSITIVE_INFINITY, to);

  // Dense counters for the groups met first, up to the limit; a report with `detail` lists each group's VMs
  // per component, which GroupByGroup keeps, so all its groups are counted there.
  const denseAt = new Int32Array(groups.count).fill(-1);
  let denseUsed = 0;
  for (let g = 0; g < groups.count && !request.detail && denseUsed + lanes * slots <= denseLimit; g++, denseUsed += lanes * slots) denseAt[g] = denseUsed;
  const denseCounters = new Uint32Array(denseUsed);
  const rest = new Int32Array(memberships.length);
  const restLength = countDense(memberships, denseAt, rowFrom, rowTo, slice.componentArena, denseCounters, countEvery ? null : slotOf, rest);

  const vmIds: Record<number, string[]>[] | null = request.detail ? groups.values.map(() => ({})) : null;
  const oneByOne = new GroupByGroup(slice, counted, groups.count, rest.subarray(0, restLength), vmIds);
  const counts = new PairList();
  const countEnds = new Uint32Array(groups.count);
  for (let g = 0; g < groups.count; g++) {
    const at = denseAt[g];
    if (at === -1) oneByOne.countInto(g, counts);
    else {
      for (let slot = 0; slot < slots; slot++) {
        let n = 0;
        for (let lane = 0; lane < lanes; lane++) n += denseCounters[at + slot * lanes + lane];
        if (n !== 0) counts.push(componentOf[slot], n);
      }
    }
    countEnds[g] = counts.length;
  }
  const pairs = counts.written();
  const seen = new Uint8Array(componentCount);
  for (let k = 0; k < pairs.length; k += 2) seen[pairs[k]] = 1;
  const components: number[] = [];
  for (let c = 0; c < componentCount; c++) if (seen[c] === 1) components.push(c);
  return { groups: groups.values, counts: pairs, countEnds, vmIds, vmCount, components: Uint32Array.from(components) };
}

/** A partition's groups in the order met: the grouper's group ids numbered densely, with their values. */
class GroupIndex {
  readonly #grouper: Grouper;
  /** Group id → index into `values` (-1: not met yet); group ids are small dense integers. */
  #indexOf = new Int32Array(64).fill(-1);
  readonly values: GroupValue[][] = [];

  constructor(grouper: Grouper) {
    this.#grouper = grouper;
  }

  get count(): number {
    return this.values.length;
  }

  /** The index of a grouper's group id, numbering it the first time. */
  of(group: number): number {
    if (group >= this.#indexOf.length) {
      const larger = new Int32Array(Math.max(group + 1, this.#indexOf.length * 2)).fill(-1);
      larger.set(this.#indexOf);
      this.#indexOf = larger;
    }
    let g = this.#indexOf[group];
    if (g === -1) {
      g = this.#indexOf[group] = this.values.length;
      this.values.push(this.#grouper.values(group));
    }
    return g;
  }
}

/** What the counting kernel counts: (group index, row) memberships, each row's counted range arena[rowFrom, rowTo). */
interface CountPlan {
  memberships: Int32Array;
  rowFrom: Int32Array;
  rowTo: Int32Array;
  vmCount: number;
}

/**
 * Which groups each counted VM is in, and where its counted components are in the arena. A function of
 * its own, apart from the report's setup, so that V8 keeps it compiled from one report to the next.
 * `slotOf` null: every component counts.
 */
function planCounts(slice: FleetSlice, mask: Uint8Array, grouper: Grouper, groups: GroupIndex, slotOf: Int32Array | null, componentCount: number, from: number, until: number, to: number): CountPlan {
  const memberships = new Memberships();
  const rowFrom = new Int32Array(slice.count);
  const rowTo = new Int32Array(slice.count);
  let vmCount = 0;
  const arena = slice.componentArena;
  const { states, scan } = slice;
  for (let i = 0; i < slice.count; i++) {
    // Population (decisions §9): heard from since startTime, started by endTime.
    if (mask[i] === 0 || states[i] === 0 || scan.lastHeardTime[i] < from || scan.startTime[i] > until) continue;
    const span = slice.componentSpan(i);
    const first = spanStart(span);
    let last = first + spanLength(span);
    // Ids ascend: those newer than this task's snapshot of the component table (the columns are live) end
    // the list, and are not counted (their counters would be another group's).
    while (last > first && arena[last - 1] >= componentCount) last--;
    // A VM without a counted component makes no group: a filter for one library grouped by host creates
    // the hosts that have it, not every host.
    const countFrom = slotOf === null ? first : firstCounted(arena, first, last, slotOf);
    if (countFrom === last) continue;
    rowFrom[i] = countFrom;
    rowTo[i] = last;
    if (grouper.timeless) memberships.add(groups.of(grouper.groupOf(i)), i);
    else {
      let any = false;
      for (const group of grouper.groupsOf(i, from, to)) {
        memberships.add(groups.of(group), i);
        any = true;
      }
      if (!any) continue;
    }
    vmCount++;
  }
  return { memberships: memberships.written(), rowFrom, rowTo, vmCount };
}

/** Where the first counted component of arena[first, last) is, `last` for none. */
function firstCounted(arena: Uint32Array, first: number, last: number, slotOf: Int32Array): number {
  let k = first;
  while (k < last && (arena[k] >= slotOf.length || slotOf[arena[k]] < 0)) k++;
  return k;
}

/**
 * The counting kernel: each membership's counted components, arena[rowFrom[row], rowTo[row]), added to its
 * group's dense counters. Typed arrays only, apart from the plan, so that it compiles once and stays
 * compiled. `slotOf` null: every component counts, each in its own lane (counter c * LANES + lane), so
 * consecutive ids never wait on the same counter's store. The memberships of groups without dense
 * counters are copied to `rest`; gives back how many values it wrote there (nothing after the loop but a
 * number: V8 compiles the loop while it runs, and code it has not yet seen run would undo that).
 */
function countDense(memberships: Int32Array, denseAt: Int32Array, rowFrom: Int32Array, rowTo: Int32Array, arena: Uint32Array, counters: Uint32Array, slotOf: Int32Array | null, rest: Int32Array): number {
  let restLength = 0;
  for (let m = 0; m < memberships.length; m += 2) {
    const at = denseAt[memberships[m]];
    const row = memberships[m + 1];
    if (at === -1) {
      rest[restLength++] = memberships[m];
      rest[restLength++] = row;
      continue;
    }
    let k = rowFrom[row];
    const last = rowTo[row];
    if (slotOf === null) {
      for (; k + 3 < last; k += 4) {
        counters[at + arena[k] * LANES]++;
        counters[at + arena[k + 1] * LANES + 1]++;
        counters[at + arena[k + 2] * LANES + 2]++;
        counters[at + arena[k + 3] * LANES + 3]++;
      }
      for (; k < last; k++) counters[at + arena[k] * LANES]++;
      continue;
    }
    for (; k < last; k++) {
      const c = arena[k];
      const slot = c < slotOf.length ? slotOf[c] : -1;
      if (slot >= 0) counters[at + slot]++;
    }
  }
  return restLength;
}

/** A growable list of (group index, row) memberships. */
class Memberships {
  #values = new Int32Array(1 << 13);
  #length = 0;

  add(group: number, row: number): void {
    if (this.#length + 2 > this.#values.length) this.#values = grown(this.#values, 2 * this.#values.length);
    this.#values[this.#length++] = group;
    this.#values[this.#length++] = row;
  }

  written(): Int32Array {
    return this.#values.subarray(0, this.#length);
  }
}

/** A copy of `array` with room for `length` values. */
function grown<T extends Int32Array | Uint32Array>(array: T, length: number): T {
  const copy = new (array.constructor as new (length: number) => T)(length);
  copy.set(array);
  return copy;
}

/** A growable list of (componentId, count) pairs. */
class PairList {
  #values = new Uint32Array(1024);
  length = 0;

  push(component: number, count: number): void {
    if (this.length + 2 > this.#values.length) this.#values = grown(this.#values, 2 * this.#values.length);
    this.#values[this.length++] = component;
    this.#values[this.length++] = count;
  }

  written(): Uint32Array {
    return this.#values.slice(0, this.length);
  }
}

/**
 * Counts the groups recorded as (group index, row) pairs, one group at a time over one scratch array: rows
 * bucketed by group (a stable counting sort, so vmIds keep the scan's order), then each group's components
 * counted and read back in id order.
 */
class GroupByGroup {
  readonly #slice: FleetSlice;
  readonly #counted: CountedComponents;
  readonly #vmIds: Record<number, string[]>[] | null;
  /** Group g's rows are rows[starts[g]] … rows[starts[g + 1] - 1]. */
  readonly #starts: Int32Array;
  readonly #rows: Int32Array;
  readonly #scratch: Uint32Array;
  /** The slots a group counted, each once. */
  readonly #touched: Int32Array;

  constructor(slice: FleetSlice, counted: CountedComponents, groupCount: number, pairs: Int32Array, vmIds: Record<number, string[]>[] | null) {
    this.#slice = slice;
    this.#counted = counted;
    this.#vmIds = vmIds;
    const starts = (this.#starts = new Int32Array(groupCount + 1));
    for (let k = 0; k < pairs.length; k += 2) starts[pairs[k] + 1]++;
    for (let g = 0; g < groupCount; g++) starts[g + 1] += starts[g];
    const rows = (this.#rows = new Int32Array(pairs.length >> 1));
    const next = starts.slice(0, groupCount);
    for (let k = 0; k < pairs.length; k += 2) rows[next[pairs[k]]++] = pairs[k + 1];
    this.#scratch = new Uint32Array(pairs.length === 0 ? 0 : counted.componentOf.length);
    this.#touched = new Int32Array(this.#scratch.length);
  }

  /** Appends group g's [componentId, count, …] to `out`. */
  countInto(g: number, out: PairList): void {
    const { slotOf, componentOf } = this.#counted;
    const arena = this.#slice.componentArena;
    const scratch = this.#scratch;
    const touched = this.#touched;
    let length = 0;
    for (let r = this.#starts[g]; r < this.#starts[g + 1]; r++) {
      const row = this.#rows[r];
      const span = this.#slice.componentSpan(row);
      const vmId = this.#vmIds === null ? '' : this.#slice.vmId(row);
      for (let k = spanStart(span), end = k + spanLength(span); k < end; k++) {
        const c = arena[k];
        const slot = c < slotOf.length ? slotOf[c] : -1;
        if (slot < 0) continue;
        if (scratch[slot]++ === 0) touched[length++] = slot;
        if (this.#vmIds !== null) (this.#vmIds[g][c] ??= []).push(vmId);
      }
    }
    // Slots number the components in id order, and a VM's ids are ascending: a group of one VM touched
    // them in order already.
    let sorted = true;
    for (let t = 1; t < length && sorted; t++) sorted = touched[t - 1] < touched[t];
    if (!sorted) touched.subarray(0, length).sort();
    for (let t = 0; t < length; t++) {
      out.push(componentOf[touched[t]], scratch[touched[t]]);
      scratch[touched[t]] = 0;
    }
  }
}


export interface ComponentResult {
  /** Gives the items to `writer` in report order. */
  write(writer: ItemWriter): void;
  summary: { vmCount: number; componentCount: number };
}

function collationOf(field: string): Collation {
  if (field === 'componentVersion') return 'version';
  return field === 'count' || field === 'score' || ['year', 'month', 'week', 'day'].includes(field) ? 'number' : 'string';
}

/** groupBy fields that belong to the component rather than to the VM. */
const COMPONENT_FIELDS: readonly string[] = ['componentName', 'componentVersion', 'score'];

/** The highest CVE score of a component, null without CVEs (decisions §9). */
function highestScore(cves: readonly ComponentCve[] | undefined): number | null {
  const scores = (cves ?? []).map((cve) => cve.score).filter((score): score is number => score !== null);
  return scores.length === 0 ? null : Math.max(...scores);
}

function componentValue(store: Store, names: ComponentNames, c: number, field: string): GroupValue {
  if (field === 'score') return highestScore(store.componentCves.get(c));
  return field === 'componentName' ? names.name(c) : names.version(c);
}

/** The groups of all partitions, by index: values, counts (as in a partial) and with `detail` the VMs of each component. */
type MergedGroups = Pick<ComponentPartial, 'counts' | 'countEnds' | 'vmIds'> & { values: GroupValue[][] };

/** Where group g's pairs start in `counts`. */
function countStart(groups: Pick<ComponentPartial, 'countEnds'>, g: number): number {
  return g === 0 ? 0 : groups.countEnds[g - 1];
}

/**
 * One partition's groups as they are; those of several merged by their values, their counts added. Most
 * groups of a report by host come from one partition: their pairs are copied, and only a group met in
 * several gets a sum.
 */
function mergeGroups(partials: readonly ComponentPartial[]): MergedGroups {
  if (partials.length === 1) return { ...partials[0], values: partials[0].groups };
  // Groups of one field are told apart by the value itself (a Map keeps "null" and null apart).
  const keyOf = (groupValues: GroupValue[]): unknown => (groupValues.length === 1 ? groupValues[0] : tupleKey(groupValues));
  const indexOf = new Map<unknown, number>();
  const values: GroupValue[][] = [];
  // Each merged group's first (partition, group), and the sums of the groups met more than once.
  const firstPartial: number[] = [];
  const firstGroup: number[] = [];
  const sums = new Map<number, Map<number, number>>();
  const vmIds: Record<number, string[]>[] | null = partials.every((partial) => partial.vmIds !== null) ? [] : null;
  const add = (sum: Map<number, number>, partial: ComponentPartial, g: number): void => {
    for (let k = countStart(partial, g); k < partial.countEnds[g]; k += 2) sum.set(partial.counts[k], (sum.get(partial.counts[k]) ?? 0) + partial.counts[k + 1]);
  };
  partials.forEach((partial, p) => {
    partial.groups.forEach((groupValues, g) => {
      const key = keyOf(groupValues);
      let m = indexOf.get(key);
      if (m === undefined) {
        indexOf.set(key, (m = values.length));
        values.push(groupValues);
        firstPartial.push(p);
        firstGroup.push(g);
        vmIds?.push({});
      } else {
        let sum = sums.get(m);
        if (sum === undefined) {
          sums.set(m, (sum = new Map()));
          add(sum, partials[firstPartial[m]], firstGroup[m]);
        }
        add(sum, partial, g);
      }
      if (vmIds !== null) for (const [c, ids] of Object.entries(partial.vmIds![g])) (vmIds[m][Number(c)] ??= []).push(...ids);
    });
  });
  const counts = new PairList();
  const countEnds = new Uint32Array(values.length);
  for (let m = 0; m < values.length; m++) {
    const sum = sums.get(m);
    if (sum === undefined) {
      const partial = partials[firstPartial[m]];
      const g = firstGroup[m];
      for (let k = countStart(partial, g); k < partial.countEnds[g]; k += 2) counts.push(partial.counts[k], partial.counts[k + 1]);
    } else {
      for (const [c, n] of [...sum].sort((a, b) => a[0] - b[0])) counts.push(c, n);
    }
    countEnds[m] = counts.length;
  }
  return { values, counts: counts.written(), countEnds, vmIds };
}

/**
 * Merges partitions into innermost items in report order: groups first, then the requested and default keys.
 * `names`: the worker's kept component names, brought up to date here.
 */
export function componentFinalize(store: Store, names: ComponentNames, request: ReportRequest, partials: readonly ComponentPartial[]): ComponentResult {
  names.update(store);
  const components = new Set<number>();
  let vmCount = 0;
  for (const partial of partials) {
    vmCount += partial.vmCount;
    for (const c of partial.components) components.add(c);
  }
  const groups = mergeGroups(partials);
  const { sortBy } = request;
  const summary = { vmCount, componentCount: components.size };
  if (sortBy.length === 0 && !request.groupBy.some((field) => COMPONENT_FIELDS.includes(field))) {
    return { write: (writer) => writeInDefaultOrder(names, request, groups, writer), summary };
  }
  const items: Record<string, unknown>[] = [];
  groups.values.forEach((values, g) => {
    const pairs = groups.counts;
    for (let p = countStart(groups, g); p < groups.countEnds[g]; p += 2) {
      const c = pairs[p];
      const item: Record<string, unknown> = {};
      let k = 0;
      for (const field of request.groupBy) item[field] = COMPONENT_FIELDS.includes(field) ? componentValue(store, names, c, field) : values[k++];
      item.componentName = names.name(c);
      item.componentVersion = names.version(c);
      item.count = pairs[p + 1];
      if (request.detail) item.vmIds = (groups.vmIds?.[g][c] ?? []).sort(compareCodePoints);
      items.push(item);
    }
  });
  const direction = (field: string) => sortBy.find((key) => key.field === field)?.direction ?? 'ASC';
  const keys: OrderKey[] = [
    // Groups stay contiguous so pages can nest them (interface §2.4).
    ...request.groupBy.map((field) => ({ field, direction: direction(field), collation: collationOf(field) })),
    ...orderKeys(
      sortBy.filter((key) => !request.groupBy.includes(key.field)),
      [
        { field: 'componentName', direction: 'ASC', collation: 'string' },
        { field: 'componentVersion', direction: 'DESC', collation: 'version' },
      ],
      collationOf,
    ),
  ];
  sortItems(items, keys);
  return { write: (writer) => items.forEach((item) => writer.add(item)), summary };
}

/** Group indexes in the order of their values, field by field ascending. */
function groupOrder(values: readonly GroupValue[][], groupBy: readonly string[]): number[] {
  if (groupBy.length === 1 && collationOf(groupBy[0]) === 'string') {
    // One text field, as by host or by team: its values compared directly, twice as fast as item objects
    // (a report by host sorts a group per VM or two). Values are distinct: a group each.
    const strings = values.map((groupValues) => groupValues[0] as string | null);
    const compare = codePointComparator(strings);
    return Array.from(strings, (_, g) => g).sort((a, b) => {
      const x = strings[a];
      const y = strings[b];
      if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1;
      return compare(x, y);
    });
  }
  const keyed = values.map((groupValues, g) => {
    const entry: Record<string, unknown> = { g };
    groupBy.forEach((field, k) => (entry[field] = groupValues[k]));
    return entry;
  });
  sortItems(keyed, groupBy.map((field) => ({ field, direction: 'ASC', collation: collationOf(field) })));
  return keyed.map((entry) => entry.g as number);
}

/**
 * The default order (decisions §9) without comparing items: groups sorted by their values, and inside each
 * its components by their rank among all components (name ascending, version descending in Maven order).
 * Items go to the writer as JSON bytes, each of a group's fields and of a component's encoded once.
 */
function writeInDefaultOrder(names: ComponentNames, request: ReportRequest, groups: MergedGroups, writer: ItemWriter): void {
  const rankOf = names.ranks;
  // `"componentName":…,"componentVersion":…,"count":` by component id, as JSON.stringify writes an item.
  const componentJson: (Buffer | undefined)[] = [];
  const keys = request.groupBy.map((field) => Buffer.from(`${JSON.stringify(field)}:`));
  const item = new ByteSink(1 << 16);
  const writeItem = (g: number, pairs: Uint32Array, p: number): void => {
    const c = pairs[p];
    const component = (componentJson[c] ??= Buffer.from(`"componentName":${JSON.stringify(names.name(c))},"componentVersion":${JSON.stringify(names.version(c))},"count":`));
    item.reserve(component.length + 12);
    item.copy(component);
    item.latin1(String(pairs[p + 1]));
    if (groups.vmIds !== null) {
      const vmIds = `,"vmIds":${JSON.stringify((groups.vmIds[g][c] ?? []).sort(compareCodePoints))}`;
      item.reserve(vmIds.length * 3);
      item.utf8(vmIds);
    }
    item.reserve(1);
    item.byte(0x7d);
    writer.addBytes(item.written(), groups.values[g]);
  };
  for (const g of groupOrder(groups.values, request.groupBy)) {
    // The group's fields, as the item's first keys (JSON.stringify writes keys in the order they were set):
    // written once, each of the group's items then written after them.
    const values = groups.values[g];
    item.length = 0;
    item.reserve(1);
    item.byte(0x7b);
    for (let k = 0; k < keys.length; k++) {
      item.reserve(keys[k].length);
      item.copy(keys[k]);
      writeJsonValue(item, values[k]);
      item.reserve(1);
      item.byte(0x2c);
    }
    const head = item.length;
    const pairs = groups.counts;
    const first = countStart(groups, g);
    if (groups.countEnds[g] - first === 2) {
      // One component, as in a report for one library by host: no order to find.
      writeItem(g, pairs, first);
      continue;
    }
    const order: number[] = [];
    for (let p = first; p < groups.countEnds[g]; p += 2) order.push(p);
    order.sort((a, b) => rankOf[pairs[a]] - rankOf[pairs[b]]);
    for (const p of order) {
      item.length = head;
      writeItem(g, pairs, p);
    }
  }
}
