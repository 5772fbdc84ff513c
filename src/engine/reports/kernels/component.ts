// Component inventory kernel (decisions §9): a partition counts (VM, component) pairs per group
// (component-counts.ts); the report's partitions merge into items in report order (component-items.ts).
import { evaluateConditions } from '../../../parser/columns.ts';
import type { Column } from '../../../parser/columns.ts';
import type { FieldDef } from '../../../parser/fields.ts';
import { bindFilter } from '../../../parser/filter.ts';
import type { Condition } from '../../../parser/filter.ts';
import { compareCodePoints } from '../../../collation.ts';
import { orderKeys, sortItems } from '../item-order.ts';
import type { OrderKey } from '../item-order.ts';
import type { ComponentCve, ComponentRecord } from '../../../storage/records.ts';
import type { Store } from '../../../storage/store.ts';
import { FleetSlice } from '../fleet-slice.ts';
import { CATALOGS } from '../family-fields.ts';
import type { GroupValue, ReportRequest } from '../report-types.ts';
import type { KernelContext } from './kernel-context.ts';
import type { ItemWriter } from '../pages.ts';
import type { ComponentNames } from './component-names.ts';
import { groupFields, Grouper, tupleKey } from './groups.ts';
import { countDense, countedComponents, countStart, DENSE_LIMIT, GroupByGroup, GroupIndex, LANES, PairList, planCounts } from './component-counts.ts';
import { collationOf, writeInDefaultOrder } from './component-items.ts';
import type { MergedGroups } from './component-items.ts';

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

/** `denseLimit`: counters held in dense arrays before groups are counted one by one (tests lower it to reach that path). */
export function componentPartition(context: KernelContext, request: ReportRequest, start: number, end: number, denseLimit = DENSE_LIMIT): ComponentPartial {
  const slice = new FleetSlice(context.fleet, context.store, context.dict, start, end, request.now, request.offlineAfterMs, context.shards);
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

export interface ComponentResult {
  /** Gives the items to `writer` in report order. */
  write(writer: ItemWriter): Promise<void>;
  summary: { vmCount: number; componentCount: number };
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
  const write = async (writer: ItemWriter): Promise<void> => {
    for (const item of items) {
      writer.add(item);
      if (writer.mustSettle) await writer.settle();
    }
  };
  return { write, summary };
}

