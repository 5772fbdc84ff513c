// Component inventory kernel (decisions §9): (VM, component) pairs counted per group in dense integer arrays.
import { evaluateConditions } from '../../../parser/columns.ts';
import type { Column } from '../../../parser/columns.ts';
import type { FieldDef } from '../../../parser/fields.ts';
import { bindFilter } from '../../../parser/filter.ts';
import type { Condition } from '../../../parser/filter.ts';
import { compareCodePoints } from '../../../collation.ts';
import { orderKeys, sortItems } from '../item-order.ts';
import type { Collation, OrderKey } from '../item-order.ts';
import type { ComponentCve, ComponentRecord } from '../../../storage/records.ts';
import type { Store } from '../../../storage/store.ts';
import { FleetSlice } from '../fleet-slice.ts';
import { spanLength, spanStart } from '../../../storage/fleet-columns.ts';
import { CATALOGS } from '../family-fields.ts';
import type { GroupValue, ReportRequest } from '../report-types.ts';
import type { KernelContext } from './kernel-context.ts';
import type { ComponentNames } from './component-names.ts';
import { groupFields, Grouper, tupleKey } from './groups.ts';

export interface ComponentPartial {
  groups: GroupValue[][];
  /** Per group: [componentId, count, componentId, count, …]. */
  counts: Uint32Array[];
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

/** Beyond this many counters a group keeps a Map instead of a dense array. */
const DENSE_LIMIT = 1 << 25;
/**
 * Dense counters come in lanes, one per step of the unrolled loop (counter of id c, lane l at c * LANES + l):
 * consecutive ids then never wait on the same counter's store. Summed when the partition ends. An id newer
 * than this task's snapshot of the component table lands past the end and is not counted.
 */
const LANES = 4;

export function componentPartition(context: KernelContext, request: ReportRequest, start: number, end: number): ComponentPartial {
  const slice = new FleetSlice(context.fleet, context.store, context.dict, start, end, request.now, request.offlineAfterMs);
  const catalog = CATALOGS.component;
  const { conditions } = bindFilter(request.conditions, catalog);
  const vmConditions = conditions.filter((c) => c.field.scope === 'vm');
  const mask = evaluateConditions(vmConditions, (field: FieldDef): Column => slice.column(field), slice.count);
  const componentConditions = conditions.filter((c) => c.field.scope === 'component');
  // Without component conditions every component counts: no need to read the component table.
  const componentCount = (context.store.meta.get('componentNext') as number | undefined) ?? 0;
  const allowed = componentConditions.length === 0 ? new Uint8Array(componentCount).fill(1) : componentMask(readComponentTable(context.store), componentConditions);
  const to = request.to ?? request.now;
  // Component fields in groupBy come from the component itself (componentFinalize): partitions group on the rest.
  const grouper = new Grouper(slice, groupFields(request.groupBy, catalog).filter((field) => field.scope !== 'component'), request.from, to);

  // Group id → index into `groups` (-1: not met yet); group ids are small dense integers.
  let groupIndex = new Int32Array(64).fill(-1);
  const groups: GroupValue[][] = [];
  const dense: (Uint32Array | null)[] = [];
  const sparse: (Map<number, number> | null)[] = [];
  const vmIds: Record<number, string[]>[] | null = request.detail ? [] : null;
  let vmCount = 0;
  let denseUsed = 0;
  const rowGroupIndexes: number[] = [];
  const arena = slice.componentArena;
  const { states, scan } = slice;
  const { from } = request;
  const until = request.to ?? Number.POSITIVE_INFINITY;
  const countEvery = vmIds === null && componentConditions.length === 0;
  const oneGroup = [0];
  /** The index into `groups` of a grouper's group id, creating its counters the first time. */
  const indexOf = (group: number): number => {
    if (group >= groupIndex.length) {
      const grown = new Int32Array(Math.max(group + 1, groupIndex.length * 2)).fill(-1);
      grown.set(groupIndex);
      groupIndex = grown;
    }
    let g = groupIndex[group];
    if (g === -1) {
      g = groupIndex[group] = groups.length;
      groups.push(grouper.values(group));
      if (denseUsed + LANES * componentCount <= DENSE_LIMIT) {
        dense.push(new Uint32Array(LANES * componentCount));
        sparse.push(null);
        denseUsed += LANES * componentCount;
      } else {
        dense.push(null);
        sparse.push(new Map());
      }
      vmIds?.push({});
    }
    return g;
  };

  for (let i = 0; i < slice.count; i++) {
    // Population (decisions §9): heard from since startTime, started by endTime.
    if (mask[i] === 0 || states[i] === 0 || scan.lastHeardTime[i] < from || scan.startTime[i] > until) continue;
    let rowGroups: readonly number[];
    if (grouper.timeless) {
      // One group per VM: no list to build (resetting an array's length per VM showed in profiles).
      oneGroup[0] = indexOf(grouper.groupOf(i));
      rowGroups = oneGroup;
    } else {
      rowGroupIndexes.length = 0;
      for (const group of grouper.groupsOf(i, request.from, to)) rowGroupIndexes.push(indexOf(group));
      if (rowGroupIndexes.length === 0) continue;
      rowGroups = rowGroupIndexes;
    }
    const span = slice.componentSpan(i);
    const first = spanStart(span);
    const last = first + spanLength(span);
    if (first === last) continue;
    const vmId = vmIds === null ? '' : slice.vmId(i);
    let counted = false;
    for (const g of rowGroups) {
      const counts = dense[g];
      if (counts !== null && countEvery) {
        // The common case, and the hot loop: every component of the VM counts.
        let k = first;
        for (; k + 3 < last; k += 4) {
          counts[arena[k] * LANES]++;
          counts[arena[k + 1] * LANES + 1]++;
          counts[arena[k + 2] * LANES + 2]++;
          counts[arena[k + 3] * LANES + 3]++;
        }
        for (; k < last; k++) counts[arena[k] * LANES]++;
        counted = true;
        continue;
      }
      const map = sparse[g];
      for (let k = first; k < last; k++) {
        const c = arena[k];
        if (allowed[c] === 0) continue;
        if (counts !== null) counts[c * LANES]++;
        else map!.set(c, (map!.get(c) ?? 0) + 1);
        counted = true;
        if (vmIds !== null) (vmIds[g][c] ??= []).push(vmId);
      }
    }
    if (counted) vmCount++;
  }

  const counts = groups.map((_, g) => {
    const pairs: number[] = [];
    const array = dense[g];
    if (array !== null) {
      for (let c = 0; c < componentCount; c++) {
        const n = array[c * LANES] + array[c * LANES + 1] + array[c * LANES + 2] + array[c * LANES + 3];
        if (n !== 0) pairs.push(c, n);
      }
    } else {
      for (const [c, n] of [...sparse[g]!].sort((a, b) => a[0] - b[0])) pairs.push(c, n);
    }
    return Uint32Array.from(pairs);
  });
  const seen = new Uint8Array(componentCount);
  for (const pairs of counts) for (let k = 0; k < pairs.length; k += 2) seen[pairs[k]] = 1;
  const components: number[] = [];
  for (let c = 0; c < componentCount; c++) if (seen[c] === 1) components.push(c);
  return { groups, counts, vmIds, vmCount, components: Uint32Array.from(components) };
}

export interface ComponentResult {
  items: Record<string, unknown>[];
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

/**
 * Merges partitions into innermost items in report order: groups first, then the requested and default keys.
 * `names`: the worker's kept component names, brought up to date here.
 */
export function componentFinalize(store: Store, names: ComponentNames, request: ReportRequest, partials: readonly ComponentPartial[]): ComponentResult {
  names.update(store);
  const merged = new Map<string, { values: GroupValue[]; counts: Map<number, number>; vmIds: Map<number, string[]> }>();
  const components = new Set<number>();
  let vmCount = 0;
  for (const partial of partials) {
    vmCount += partial.vmCount;
    for (const c of partial.components) components.add(c);
    partial.groups.forEach((values, g) => {
      const key = tupleKey(values);
      let entry = merged.get(key);
      if (entry === undefined) merged.set(key, (entry = { values, counts: new Map(), vmIds: new Map() }));
      const pairs = partial.counts[g];
      for (let k = 0; k < pairs.length; k += 2) entry.counts.set(pairs[k], (entry.counts.get(pairs[k]) ?? 0) + pairs[k + 1]);
      if (partial.vmIds !== null) {
        for (const [c, ids] of Object.entries(partial.vmIds[g])) {
          const list = entry.vmIds.get(Number(c));
          if (list === undefined) entry.vmIds.set(Number(c), [...ids]);
          else list.push(...ids);
        }
      }
    });
  }
  const { sortBy } = request;
  const summary = { vmCount, componentCount: components.size };
  if (sortBy.length === 0 && !request.groupBy.some((field) => COMPONENT_FIELDS.includes(field))) {
    return { items: inDefaultOrder(names, request, [...merged.values()]), summary };
  }
  const items: Record<string, unknown>[] = [];
  for (const { values, counts, vmIds } of merged.values()) {
    for (const [c, count] of counts) {
      const item: Record<string, unknown> = {};
      let k = 0;
      for (const field of request.groupBy) item[field] = COMPONENT_FIELDS.includes(field) ? componentValue(store, names, c, field) : values[k++];
      item.componentName = names.name(c);
      item.componentVersion = names.version(c);
      item.count = count;
      if (request.detail) item.vmIds = (vmIds.get(c) ?? []).sort(compareCodePoints);
      items.push(item);
    }
  }
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
  return { items, summary };
}

interface MergedGroup {
  values: GroupValue[];
  counts: Map<number, number>;
  vmIds: Map<number, string[]>;
}

/**
 * The default order (decisions §9) without comparing items: groups sorted by their values, and inside each
 * its components in the ranking of all components (name ascending, version descending in Maven order),
 * walked once per group rather than sorted per group.
 */
function inDefaultOrder(names: ComponentNames, request: ReportRequest, groups: MergedGroup[]): Record<string, unknown>[] {
  const { groupBy } = request;
  const keyed = groups.map((group) => Object.fromEntries([...groupBy.map((field, k) => [field, group.values[k]]), ['group', group]]) as Record<string, unknown>);
  sortItems(keyed, groupBy.map((field) => ({ field, direction: 'ASC', collation: collationOf(field) })));
  const present = new Set<number>();
  for (const group of groups) for (const c of group.counts.keys()) present.add(c);
  const ranked = [...names.ranked].filter((c) => present.has(c));
  const items: Record<string, unknown>[] = [];
  for (const entry of keyed) {
    const { counts, vmIds } = entry.group as MergedGroup;
    for (const c of ranked) {
      const count = counts.get(c);
      if (count === undefined) continue;
      const item: Record<string, unknown> = {};
      for (const field of groupBy) item[field] = entry[field];
      item.componentName = names.name(c);
      item.componentVersion = names.version(c);
      item.count = count;
      if (request.detail) item.vmIds = (vmIds.get(c) ?? []).sort(compareCodePoints);
      items.push(item);
    }
  }
  return items;
}
