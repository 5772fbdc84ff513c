// JVM inventory kernel (decisions §7): VMs overlapping the window, filtered, counted per group or listed.
import { isoTime } from '../../../iso-time.ts';
import { evaluateConditions } from '../../../parser/columns.ts';
import { bindFilter } from '../../../parser/filter.ts';
import { FleetSlice } from '../fleet-slice.ts';
import { orderKeys, sortItems } from '../item-order.ts';
import type { Collation, OrderKey } from '../item-order.ts';
import { CATALOGS, JVM_ITEM_FIELDS } from '../family-fields.ts';
import type { GroupValue, ReportRequest } from '../report-types.ts';
import type { KernelContext } from './kernel-context.ts';
import { groupFields, Grouper, tupleKey } from './groups.ts';
import { JvmItems } from './jvm-items.ts';
import type { EncodedJvmItems } from './jvm-items.ts';

export type JvmPartial =
  | { kind: 'groups'; groups: GroupValue[][]; counts: number[] }
  | { kind: 'items'; items: Record<string, unknown>[] }
  | EncodedJvmItems;

/** The rows of the slice in the population (life overlaps the window) that pass the filter. */
function selectRows(context: KernelContext, request: ReportRequest, start: number, end: number): { slice: FleetSlice; mask: Uint8Array } {
  const slice = new FleetSlice(context.fleet, context.store, context.dict, start, end, request.now, request.offlineAfterMs, context.shards);
  const { conditions } = bindFilter(request.conditions, CATALOGS.jvmInventory);
  const mask = evaluateConditions(conditions, (field) => slice.column(field), slice.count);
  const to = request.to ?? request.now;
  for (let i = 0; i < slice.count; i++) {
    if (mask[i] === 1 && (slice.states[i] === 0 || slice.scan.startTime[i] > to || slice.lifeEnd(i) < request.from)) mask[i] = 0;
  }
  return { slice, mask };
}

const ITEM_FIELDS = Object.fromEntries(JVM_ITEM_FIELDS.map((name) => [name, CATALOGS.jvmInventory.lookup(name)!]));

function itemsInDefaultOrder(context: KernelContext, slice: FleetSlice, mask: Uint8Array): JvmItems {
  return new JvmItems(slice, mask, ITEM_FIELDS, context.rowOrder.rows(context.fleet, context.dict.lookupFunction));
}

/** Whether the report lists VMs in the default order: its items are encoded as bytes by the partitions. */
export function jvmItemsInDefaultOrder(request: ReportRequest): boolean {
  return request.groupBy.length === 0 && request.sortBy.length === 0;
}

/** The items of such a report's partition, to encode run by run (a report's only partition writes pages meanwhile). */
export function jvmItemRuns(context: KernelContext, request: ReportRequest, start: number, end: number): JvmItems {
  const { slice, mask } = selectRows(context, request, start, end);
  return itemsInDefaultOrder(context, slice, mask);
}

export function jvmPartition(context: KernelContext, request: ReportRequest, start: number, end: number): JvmPartial {
  const { slice, mask } = selectRows(context, request, start, end);
  const to = request.to ?? request.now;
  if (request.groupBy.length > 0) {
    const grouper = new Grouper(slice, groupFields(request.groupBy, CATALOGS.jvmInventory), request.from, to);
    // Group ids are small dense integers: counted in a typed array, not a Map (a VM may fall in 30 day buckets).
    let counts = new Uint32Array(256);
    for (let i = 0; i < slice.count; i++) {
      if (mask[i] === 0) continue;
      for (const group of grouper.groupsOf(i, request.from, to)) {
        if (group >= counts.length) {
          const grown = new Uint32Array(Math.max(group + 1, counts.length * 2));
          grown.set(counts);
          counts = grown;
        }
        counts[group]++;
      }
    }
    const groups: GroupValue[][] = [];
    const groupCounts: number[] = [];
    counts.forEach((count, group) => {
      if (count === 0) return;
      groups.push(grouper.values(group));
      groupCounts.push(count);
    });
    return { kind: 'groups', groups, counts: groupCounts };
  }
  // The default order is the common case: items go out as bytes, in order, and partitions merge by key.
  if (request.sortBy.length === 0) return itemsInDefaultOrder(context, slice, mask).all();
  const items: Record<string, unknown>[] = [];
  for (let i = 0; i < slice.count; i++) {
    if (mask[i] === 0) continue;
    const item: Record<string, unknown> = {};
    for (const name of JVM_ITEM_FIELDS) item[name] = slice.groupValue(ITEM_FIELDS[name], i);
    item.tags = slice.tags(i);
    items.push(item);
  }
  return { kind: 'items', items };
}

function collationOf(field: string): Collation {
  return field === 'count' || field === 'startTime' || field === 'lastHeardTime' || ['year', 'month', 'week', 'day'].includes(field) ? 'number' : 'string';
}

/** Merges the partitions' results into the report's items in their final order. */
export function jvmFinalize(request: ReportRequest, partials: readonly JvmPartial[]): Record<string, unknown>[] {
  const { sortBy } = request;
  let items: Record<string, unknown>[];
  let defaults: OrderKey[];
  if (request.groupBy.length > 0) {
    const merged = new Map<string, { values: GroupValue[]; count: number }>();
    for (const partial of partials) {
      if (partial.kind !== 'groups') continue;
      partial.groups.forEach((values, g) => {
        const key = tupleKey(values);
        const entry = merged.get(key);
        if (entry === undefined) merged.set(key, { values, count: partial.counts[g] });
        else entry.count += partial.counts[g];
      });
    }
    items = [...merged.values()].map(({ values, count }) => {
      const item: Record<string, unknown> = {};
      request.groupBy.forEach((field, k) => (item[field] = values[k]));
      item.count = count;
      return item;
    });
    defaults = request.groupBy.map((field) => ({ field, direction: 'ASC', collation: collationOf(field) }));
  } else {
    items = partials.flatMap((partial) => (partial.kind === 'items' ? partial.items : []));
    for (const item of items) {
      // Tag sort keys (tags.K) read the item's tag map.
      for (const { field } of sortBy) if (field.startsWith('tags.')) item[field] = (item.tags as Record<string, string>)[field.slice(5)] ?? null;
    }
    defaults = [{ field: 'hostName', direction: 'ASC', collation: 'string' }, { field: 'vmId', direction: 'ASC', collation: 'string' }];
  }
  sortItems(items, orderKeys(sortBy, defaults, collationOf));
  if (request.groupBy.length === 0) {
    for (const item of items) {
      for (const { field } of sortBy) if (field.startsWith('tags.')) delete item[field];
      item.startTime = isoTime(item.startTime as number);
      item.lastHeardTime = isoTime(item.lastHeardTime as number);
    }
  }
  return items;
}
