// Component report items in the default order written as JSON bytes (decisions §9, interface §2.4): a report
// by host has a group per VM or two, and its items would otherwise cost an object and strings each.
import { compareCodePoints } from '../../../collation.ts';
import { sortedIndexes } from '../item-order.ts';
import type { Collation } from '../item-order.ts';
import type { GroupValue, ReportRequest } from '../report-types.ts';
import type { ItemWriter } from '../pages.ts';
import { ByteSink } from '../../byte-sink.ts';
import { writeJsonValue } from '../encoded-items.ts';
import type { ComponentNames } from './component-names.ts';
import { countStart } from './component-counts.ts';

/** The groups of all partitions, by index: values, counts (as in a partial) and with `detail` the VMs of each component. */
export interface MergedGroups {
  values: GroupValue[][];
  /** Every group's [componentId, count, …], ids ascending, group after group, as a partition gives them. */
  counts: Uint32Array;
  countEnds: Uint32Array;
  vmIds: Record<number, string[]>[] | null;
}

/** How the component report orders a field's values. */
export function collationOf(field: string): Collation {
  if (field === 'componentVersion') return 'version';
  return field === 'count' || field === 'score' || ['year', 'month', 'week', 'day'].includes(field) ? 'number' : 'string';
}

/** Group indexes in the order of their values, field by field ascending. */
function groupOrder(values: readonly GroupValue[][], groupBy: readonly string[]): number[] {
  return sortedIndexes(
    values.length,
    groupBy.map((_, k) => values.map((groupValues) => groupValues[k])),
    groupBy.map((field) => ({ field, direction: 'ASC', collation: collationOf(field) })),
  );
}

/**
 * The default order (decisions §9) without comparing items: groups sorted by their values, and inside each
 * its components by their rank among all components (name ascending, version descending in Maven order).
 * Items go to the writer as JSON bytes, each of a group's fields and of a component's encoded once.
 */
export async function writeInDefaultOrder(names: ComponentNames, request: ReportRequest, groups: MergedGroups, writer: ItemWriter): Promise<void> {
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
    if (writer.mustSettle) await writer.settle();
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
      if (writer.mustSettle) await writer.settle();
    }
  }
}
