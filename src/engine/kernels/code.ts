// Code inventory kernel (decisions §8): class records scanned in key order, merged across AppEnvs, windowed.
import { compileFilter } from '../../parser/filter.ts';
import type { Condition } from '../../parser/filter.ts';
import { parseSortBy } from '../../parser/order.ts';
import type { ClassCode } from '../../storage/records.ts';
import type { Store } from '../../storage/store.ts';
import { compareCodePoints } from '../../collation.ts';
import { itemComparator, orderKeys } from '../order.ts';
import type { Collation } from '../order.ts';
import { CATALOGS, sortableFields } from '../report-request.ts';
import type { ReportRequest } from '../report-types.ts';
import type { KernelContext } from './context.ts';

/** The methods of one class that passed the filter and the window, merged across AppEnvs. */
export interface ClassMethods extends ClassCode {
  sourceName: string;
  className: string;
}

/** Caches a condition's outcome for the last value: sourceName and className repeat over consecutive records. */
function lastValueTest(condition: Condition): (value: string | null) => boolean {
  let last: string | null | undefined;
  let outcome = false;
  return (value) => {
    if (value !== last) {
      last = value;
      outcome = condition.test(value);
    }
    return outcome;
  };
}

function mergeInto(target: ClassCode, source: ClassCode, keep: (i: number) => boolean): ClassCode {
  const merged: ClassCode = { methods: [], firstSeen: [], lastSeen: [] };
  let i = 0;
  let j = 0;
  while (i < target.methods.length || j < source.methods.length) {
    if (j < source.methods.length && !keep(j)) {
      j++;
      continue;
    }
    const order = i === target.methods.length ? 1 : j === source.methods.length ? -1 : compareCodePoints(target.methods[i], source.methods[j]);
    if (order < 0) {
      merged.methods.push(target.methods[i]);
      merged.firstSeen.push(target.firstSeen[i]);
      merged.lastSeen.push(target.lastSeen[i++]);
    } else if (order > 0) {
      merged.methods.push(source.methods[j]);
      merged.firstSeen.push(source.firstSeen[j]);
      merged.lastSeen.push(source.lastSeen[j++]);
    } else {
      merged.methods.push(target.methods[i]);
      merged.firstSeen.push(Math.min(target.firstSeen[i], source.firstSeen[j]));
      merged.lastSeen.push(Math.max(target.lastSeen[i++], source.lastSeen[j++]));
    }
  }
  return merged;
}

export function codePartition(context: KernelContext, request: ReportRequest, start: string[] | null, end: string[] | null): ClassMethods[] {
  const { conditions } = compileFilter(request.filter, CATALOGS.codeInventory, request.now);
  const onSource = conditions.filter((c) => c.field.name === 'sourceName').map(lastValueTest);
  const onClass = conditions.filter((c) => c.field.name === 'className').map(lastValueTest);
  const onAppEnv = conditions.filter((c) => c.field.name === 'AppEnv').map(lastValueTest);
  const onMethod = conditions.filter((c) => c.field.name === 'methodName');
  const to = request.to ?? request.now;
  const classes: ClassMethods[] = [];
  let current: ClassMethods | null = null;
  const flush = () => {
    if (current === null) return;
    const kept: ClassMethods = { sourceName: current.sourceName, className: current.className, methods: [], firstSeen: [], lastSeen: [] };
    for (let m = 0; m < current.methods.length; m++) {
      // decisions §8: kept when lastSeen >= from and firstSeen <= to, after merging AppEnvs.
      if (current.lastSeen[m] < request.from || current.firstSeen[m] > to) continue;
      kept.methods.push(current.methods[m]);
      kept.firstSeen.push(current.firstSeen[m]);
      kept.lastSeen.push(current.lastSeen[m]);
    }
    if (kept.methods.length > 0) classes.push(kept);
    current = null;
  };
  const range = context.store.code.getRange({ ...(start === null ? {} : { start }), ...(end === null ? {} : { end }) });
  for (const { key, value } of range) {
    const [sourceName, className, appEnv] = key;
    if (!onSource.every((test) => test(sourceName)) || !onClass.every((test) => test(className)) || !onAppEnv.every((test) => test(appEnv === '' ? null : appEnv))) continue;
    const keep = onMethod.length === 0 ? () => true : (m: number) => onMethod.every((c) => c.test(value.methods[m]));
    if (current !== null && (current.sourceName !== sourceName || current.className !== className)) flush();
    const base: ClassCode = current ?? { methods: [], firstSeen: [], lastSeen: [] };
    current = { sourceName, className, ...mergeInto(base, value, keep) };
  }
  flush();
  return classes;
}

/** Splits the code records into about `count` key ranges on class boundaries. */
export function codePartitions(store: Store, count: number): { start: string[] | null; end: string[] | null }[] {
  const total = store.code.getKeysCount();
  const bounds: string[][] = [];
  for (let k = 1; k < count; k++) {
    for (const key of store.code.getKeys({ offset: Math.floor((k * total) / count), limit: 1 })) {
      const bound = [key[0], key[1]];
      const previous = bounds[bounds.length - 1];
      if (previous === undefined || previous[0] !== bound[0] || previous[1] !== bound[1]) bounds.push(bound);
    }
  }
  const ranges: { start: string[] | null; end: string[] | null }[] = [];
  for (let k = 0; k <= bounds.length; k++) ranges.push({ start: k === 0 ? null : bounds[k - 1], end: k === bounds.length ? null : bounds[k] });
  return ranges;
}

/** `yyyy-MM-ddTHH:mm:ss.SSS`, no zone (interface §2.4). */
function codeTime(time: number): string {
  return new Date(time).toISOString().slice(0, 23);
}

function collationOf(field: string): Collation {
  return field === 'count' || field === 'firstSeen' || field === 'lastSeen' ? 'number' : 'string';
}

/** Items in report order; partitions arrive in key order, which is the default order. */
export function codeFinalize(request: ReportRequest, partials: readonly ClassMethods[][]): Record<string, unknown>[] {
  const depth = request.groupBy.length;
  const items: Record<string, unknown>[] = [];
  let last: Record<string, unknown> | null = null;
  for (const partial of partials) {
    for (const cls of partial) {
      for (let m = 0; m < cls.methods.length; m++) {
        if (depth === 0 || depth === 3) {
          const item: Record<string, unknown> = { sourceName: cls.sourceName, className: cls.className, methodName: cls.methods[m], firstSeen: cls.firstSeen[m], lastSeen: cls.lastSeen[m] };
          if (depth === 3) item.count = 1;
          items.push(item);
          continue;
        }
        // Grouped by sourceName or by class: consecutive methods of one group merge, across partitions too.
        if (last !== null && last.sourceName === cls.sourceName && (depth === 1 || last.className === cls.className)) {
          last.firstSeen = Math.min(last.firstSeen as number, cls.firstSeen[m]);
          last.lastSeen = Math.max(last.lastSeen as number, cls.lastSeen[m]);
          (last.count as number)++;
        } else {
          last = depth === 1 ? { sourceName: cls.sourceName } : { sourceName: cls.sourceName, className: cls.className };
          Object.assign(last, { firstSeen: cls.firstSeen[m], lastSeen: cls.lastSeen[m], count: 1 });
          items.push(last);
        }
      }
    }
  }
  const sortBy = parseSortBy(request.sortBy, sortableFields('codeInventory', request.groupBy));
  if (sortBy.length > 0) {
    const path = ['sourceName', 'className', 'methodName'].slice(0, depth === 0 ? 3 : depth);
    items.sort(itemComparator(orderKeys(sortBy, path.map((field) => ({ field, direction: 'ASC', collation: 'string' })), collationOf)));
  }
  for (const item of items) {
    item.firstSeen = codeTime(item.firstSeen as number);
    item.lastSeen = codeTime(item.lastSeen as number);
  }
  return items;
}
