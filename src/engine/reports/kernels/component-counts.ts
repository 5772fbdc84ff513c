// The component kernel's counting (decisions §9): which VMs count in which groups (the plan), the counting
// kernel over dense integer arrays, the groups counted one by one past their limit, and the flat lists of
// (componentId, count) pairs they give.
import type { FleetSlice } from '../fleet-slice.ts';
import { spanLength, spanStart } from '../../../storage/fleet-columns.ts';
import type { IdArray } from '../../../storage/fleet-columns.ts';
import type { GroupValue } from '../report-types.ts';
import type { Grouper } from './groups.ts';

/**
 * Beyond this many dense counters in all (16 MiB), further groups are counted one at a time after the scan
 * (GroupByGroup): a report grouped by host has a group per VM or two, and a dense array each would
 * take gigabytes to fill and to read back.
 */
export const DENSE_LIMIT = 1 << 22;
/**
 * Dense counters of the unfiltered count come in lanes, one per step of the unrolled loop (counter of id c,
 * lane l at c * LANES + l): consecutive ids then never wait on the same counter's store. Summed when the
 * partition ends.
 */
export const LANES = 4;

/**
 * Which components a report counts, numbered densely: with component conditions (`componentName =
 * 'log4j-core'`) a group's counters cover the few that pass, not the whole component table.
 */
export interface CountedComponents {
  /** Component id → its counter, -1 for one that does not count. */
  slotOf: Int32Array;
  /** Counter → component id. */
  componentOf: Uint32Array;
}

export function countedComponents(allowed: Uint8Array): CountedComponents {
  const slotOf = new Int32Array(allowed.length).fill(-1);
  const componentOf: number[] = [];
  for (let c = 0; c < allowed.length; c++) {
    if (allowed[c] === 0) continue;
    slotOf[c] = componentOf.length;
    componentOf.push(c);
  }
  return { slotOf, componentOf: Uint32Array.from(componentOf) };
}

/** A partition's groups in the order met: the grouper's group ids numbered densely, with their values. */
export class GroupIndex {
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
export interface CountPlan {
  memberships: Int32Array;
  rowFrom: Int32Array;
  rowTo: Int32Array;
  vmCount: number;
}

/**
 * Which groups each counted VM is in, and where its counted components are in the arena. The rows come from
 * `countedRows`, whose loop over every VM takes typed arrays only; this one calls the grouper for the rows
 * it kept.
 */
export function planCounts(slice: FleetSlice, mask: Uint8Array, grouper: Grouper, groups: GroupIndex, slotOf: Int32Array | null, componentCount: number, from: number, until: number, to: number): CountPlan {
  const rows = new Int32Array(slice.count);
  const rowFrom = new Int32Array(slice.count);
  const rowTo = new Int32Array(slice.count);
  const kept = countedRows(mask, slice.states, slice.scan.startTime, slice.scan.lastHeardTime, slice.componentSpans, slice.componentArena, slotOf, componentCount, from, until, rows, rowFrom, rowTo);
  if (grouper.timeless) {
    const groupIds = grouper.rowGroups(rows.subarray(0, kept));
    const pairs = new Int32Array(2 * kept);
    for (let k = 0; k < kept; k++) {
      pairs[2 * k] = groups.of(groupIds[k]);
      pairs[2 * k + 1] = rows[k];
    }
    return { memberships: pairs, rowFrom, rowTo, vmCount: kept };
  }
  const memberships = new Memberships();
  let vmCount = 0;
  for (let k = 0; k < kept; k++) {
    const i = rows[k];
    let any = false;
    for (const group of grouper.groupsOf(i, from, to)) {
      memberships.add(groups.of(group), i);
      any = true;
    }
    if (any) vmCount++;
  }
  return { memberships: memberships.written(), rowFrom, rowTo, vmCount };
}

/**
 * The rows of the population (decisions §9: heard from since `from`, started by `until`) in the mask that
 * have a counted component, written to `rows`, with where those components are in the arena: arena[rowFrom[i],
 * rowTo[i]) for row i. Gives back how many rows it wrote. Typed arrays and numbers only, so that V8 compiles
 * its loop once, in the first report, and keeps it compiled (with the grouper's calls in the same loop it
 * was compiled and thrown away for the first four reports of a fresh service).
 */
export function countedRows(mask: Uint8Array, states: Uint8Array, startTime: Float64Array, lastHeardTime: Float64Array, spans: Float64Array, arena: IdArray, slotOf: Int32Array | null, componentCount: number, from: number, until: number, rows: Int32Array, rowFrom: Int32Array, rowTo: Int32Array): number {
  let kept = 0;
  for (let i = 0; i < states.length; i++) {
    if (mask[i] === 0 || states[i] === 0 || lastHeardTime[i] < from || startTime[i] > until) continue;
    const span = spans[i];
    const first = spanStart(span);
    let last = first + spanLength(span);
    // Ids ascend: those newer than this task's snapshot of the component table (the columns are live) end
    // the list, and are not counted (their counters would be another group's).
    while (last > first && arena[last - 1] >= componentCount) last--;
    // A VM without a counted component makes no group: a filter for one library grouped by host creates
    // the hosts that have it, not every host.
    let countFrom = first;
    if (slotOf !== null) while (countFrom < last && (arena[countFrom] >= slotOf.length || slotOf[arena[countFrom]] < 0)) countFrom++;
    if (countFrom === last) continue;
    rowFrom[i] = countFrom;
    rowTo[i] = last;
    rows[kept++] = i;
  }
  return kept;
}

/**
 * The counting kernel: each membership's counted components, arena[rowFrom[row], rowTo[row]), added to its
 * group's dense counters. Typed arrays only, apart from the plan, so that it compiles once and stays
 * compiled. `slotOf` null: every component counts, each in its own lane (counter c * LANES + lane), so
 * consecutive ids never wait on the same counter's store. The memberships of groups without dense
 * counters are copied to `rest`; gives back how many values it wrote there (nothing after the loop but a
 * number: V8 compiles the loop while it runs, and code it has not yet seen run would undo that).
 */
export function countDense(memberships: Int32Array, denseAt: Int32Array, rowFrom: Int32Array, rowTo: Int32Array, arena: IdArray, counters: Uint32Array, slotOf: Int32Array | null, rest: Int32Array): number {
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
export class PairList {
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
export class GroupByGroup {
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
    const spans = this.#slice.componentSpans;
    const scratch = this.#scratch;
    const touched = this.#touched;
    let length = 0;
    for (let r = this.#starts[g]; r < this.#starts[g + 1]; r++) {
      const row = this.#rows[r];
      const span = spans[row];
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

/** Where group g's pairs start in `counts`. */
export function countStart(groups: { countEnds: ArrayLike<number> }, g: number): number {
  return g === 0 ? 0 : groups.countEnds[g - 1];
}
