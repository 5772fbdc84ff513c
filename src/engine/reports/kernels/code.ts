// Code inventory kernel (decisions §8): class records scanned in key order (fleet-wide ones, or with an AppEnv
// filter the AppEnv ones merged per class), windowed.
import { bindFilter } from '../../../parser/filter.ts';
import type { Condition } from '../../../parser/filter.ts';
import type { ClassCode, FleetClassCode, MethodTimes } from '../../../storage/records.ts';
import type { Store } from '../../../storage/store.ts';
import { compareCodePoints } from '../../../collation.ts';
import { orderKeys, sortItems } from '../item-order.ts';
import type { Collation } from '../item-order.ts';
import { CATALOGS } from '../family-fields.ts';
import type { ReportRequest } from '../report-types.ts';
import type { KernelContext } from './kernel-context.ts';
import type { SlotTimes } from '../../../storage/code-times.ts';
import { decodeFleetClassCode, fleetRecordLayout } from '../../../storage/class-code.ts';
import type { Database } from 'lmdb';
import type { ClassMethods } from './class-methods.ts';
import { codeTime } from '../time-bytes.ts';
import type { KeptRecords, RecordCollector } from './class-records.ts';
import { TimedClassesBuilder } from './timed-classes.ts';
import type { TimedClasses } from './timed-classes.ts';

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

/** The methods of both, in code-point order; a method in both keeps the widest span. */
function merge(target: MethodTimes, source: MethodTimes): MethodTimes {
  const merged: MethodTimes = { methods: [], firstSeen: [], lastSeen: [] };
  let i = 0;
  let j = 0;
  while (i < target.methods.length || j < source.methods.length) {
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

/**
 * The methods of one record with their times, those `keep` passes; with `window`, only the methods seen in
 * it (decisions §8: lastSeen >= from and firstSeen <= to).
 */
function recordTimes(code: ClassCode | FleetClassCode, times: SlotTimes, keep: ((method: string) => boolean) | null, window: { from: number; to: number } | null): MethodTimes {
  const kept: MethodTimes = { methods: [], firstSeen: [], lastSeen: [] };
  for (let m = 0; m < code.methods.length; m++) {
    const method = code.methods[m];
    if (keep !== null && !keep(method)) continue;
    const slots = code.slots[m];
    const firstSeen = typeof slots === 'number' ? times.firstSeen(slots) : times.earliest(slots);
    const lastSeen = typeof slots === 'number' ? times.lastSeen(slots) : times.latest(slots);
    if (window !== null && (lastSeen < window.from || firstSeen > window.to)) continue;
    kept.methods.push(method);
    kept.firstSeen.push(firstSeen);
    kept.lastSeen.push(lastSeen);
  }
  return kept;
}

/** The methods of merged records seen in the window. */
function inWindow(code: MethodTimes, window: { from: number; to: number }): MethodTimes {
  const kept: MethodTimes = { methods: [], firstSeen: [], lastSeen: [] };
  for (let m = 0; m < code.methods.length; m++) {
    if (code.lastSeen[m] < window.from || code.firstSeen[m] > window.to) continue;
    kept.methods.push(code.methods[m]);
    kept.firstSeen.push(code.firstSeen[m]);
    kept.lastSeen.push(code.lastSeen[m]);
  }
  return kept;
}

/** The code report's conditions by field. */
function codeConditions(request: ReportRequest): Record<'sourceName' | 'className' | 'AppEnv' | 'methodName', Condition[]> {
  const { conditions } = bindFilter(request.conditions, CATALOGS.codeInventory);
  const on = (field: string) => conditions.filter((c) => c.field.name === field);
  return { sourceName: on('sourceName'), className: on('className'), AppEnv: on('AppEnv'), methodName: on('methodName') };
}

/**
 * Whether the fleet-wide class records answer the request: without an AppEnv condition, a method's times
 * are its times in every AppEnv, which those records hold.
 */
function readsFleetRecords(request: ReportRequest): boolean {
  return codeConditions(request).AppEnv.length === 0;
}

/** The class records a request reads: fleet-wide ones, or one per AppEnv that a filter picks from. */
function classRecords(store: Store, request: ReportRequest): Database<ClassCode, string[]> | Database<FleetClassCode, string[]> {
  return readsFleetRecords(request) ? store.fleetCode : store.code;
}

function keyRange(start: string[] | null, end: string[] | null): { start?: string[]; end?: string[] } {
  return { ...(start === null ? {} : { start }), ...(end === null ? {} : { end }) };
}

/**
 * Calls `emit` with each class of the key range that has methods passing the filter and the window,
 * in key order. With an AppEnv condition, the records of one class (one per AppEnv) are consecutive keys
 * and merge before the window. With `resume`, it starts after the class `resume.after` (when not null)
 * and stops at the end of the first class that brings the methods emitted to `resume.methods`, giving
 * that class's key; null once the range is done.
 */
export function scanCode(store: Store, request: ReportRequest, times: SlotTimes, start: string[] | null, end: string[] | null, emit: (cls: ClassMethods) => void, resume?: { after: string[] | null; methods: number }): string[] | null {
  const conditions = codeConditions(request);
  const onSource = conditions.sourceName.map(lastValueTest);
  const onClass = conditions.className.map(lastValueTest);
  const onAppEnv = conditions.AppEnv.map(lastValueTest);
  const onMethod = conditions.methodName;
  const keep = onMethod.length === 0 ? null : (method: string) => onMethod.every((c) => c.test(method));
  const window = { from: request.from, to: request.to ?? request.now };
  const after = resume?.after ?? null;
  let emitted = 0;
  // The records of the class being read, one per AppEnv.
  const records: (ClassCode | FleetClassCode)[] = [];
  let sourceName = '';
  let className = '';
  const flush = () => {
    const merged = records.length === 1 ? recordTimes(records[0], times, keep, window) : inWindow(records.map((code) => recordTimes(code, times, keep, null)).reduce(merge), window);
    records.length = 0;
    if (merged.methods.length === 0) return;
    emit({ sourceName, className, ...merged });
    emitted += merged.methods.length;
  };
  for (const { key, value } of classRecords(store, request).getRange(keyRange(after ?? start, end))) {
    const [source, cls, appEnv] = key;
    if (after !== null && source === after[0] && cls === after[1]) continue;
    if (!onSource.every((test) => test(source)) || !onClass.every((test) => test(cls)) || !onAppEnv.every((test) => test(appEnv === '' ? null : appEnv))) continue;
    if (records.length > 0 && (source !== sourceName || cls !== className)) {
      flush();
      if (resume !== undefined && emitted >= resume.methods) return [sourceName, className];
    }
    sourceName = source;
    className = cls;
    records.push(value);
  }
  if (records.length > 0) flush();
  return null;
}

/**
 * Class records a resumable scan encodes before it returns: its caller yields a turn then, in which the
 * page writes in flight take their next step (about 1.5 ms of encoding).
 */
const RECORDS_PER_STEP = 500;

/** The request's sourceName and className tests: consecutive records share a source, so each keeps its last outcome. */
function classTest(request: ReportRequest): (sourceName: string, className: string) => boolean {
  const conditions = codeConditions(request);
  const onSource = conditions.sourceName.map(lastValueTest);
  const onClass = conditions.className.map(lastValueTest);
  return (sourceName, className) => onSource.every((test) => test(sourceName)) && onClass.every((test) => test(className));
}

/**
 * What takes a scan's classes: each as its methods, or as a fleet-wide record read in place when it can be.
 * `ready`: output is waiting, so a scan that resumes returns.
 */
export interface ClassSink {
  add(cls: ClassMethods): void;
  addRecord(sourceName: string, className: string, record: Uint8Array, times: SlotTimes, window: { from: number; to: number }): boolean;
  readonly ready: boolean;
}

/** A fleet-wide class record's methods seen in the window: from its bytes when its names are ASCII, else decoded. */
function encodeRecord(encoder: ClassSink, sourceName: string, className: string, record: Uint8Array, times: SlotTimes, window: { from: number; to: number }): void {
  if (encoder.addRecord(sourceName, className, record, times, window)) return;
  const methods = recordTimes(decodeFleetClassCode(record), times, null, window);
  if (methods.methods.length > 0) encoder.add({ sourceName, className, ...methods });
}

/**
 * A record read as a view, which lives until the next LMDB read: copied when the times of a slot must be
 * read first (its block was written after the table was read).
 */
function stableRecord(view: Uint8Array, times: SlotTimes): Uint8Array {
  const layout = fleetRecordLayout(view);
  return times.holds(view, layout.slots, layout.lengths) ? view : Uint8Array.from(view);
}

/**
 * The key-order fast path: each fleet-wide class record of the range passing the filter is encoded
 * straight from its bytes. For a request without AppEnv and methodName conditions (`readsWholeRecords`).
 * With `resume`, it starts after the key `resume.after` (when not null) and stops once the encoder is
 * ready or RECORDS_PER_STEP records are encoded, giving the last key it read; null once the range is
 * done. A `collector` gets every record read, in key order.
 */
export function encodeCode(store: Store, request: ReportRequest, times: SlotTimes, start: string[] | null, end: string[] | null, encoder: ClassSink, resume?: { after: string[] | null }, collector: RecordCollector | null = null): string[] | null {
  const passes = classTest(request);
  const window = { from: request.from, to: request.to ?? request.now };
  const after = resume?.after ?? null;
  let read = 0;
  for (const { key, value: view } of store.fleetCodeViews.getRange(keyRange(after ?? start, end))) {
    const [sourceName, className] = key;
    if (after !== null && sourceName === after[0] && className === after[1]) continue;
    const copy = collector === null ? null : collector.add(sourceName, className, view);
    if (!passes(sourceName, className)) continue;
    encodeRecord(encoder, sourceName, className, copy ?? stableRecord(view, times), times, window);
    if (resume !== undefined && (encoder.ready || ++read === RECORDS_PER_STEP)) return [sourceName, className];
  }
  return null;
}

/**
 * encodeCode over the whole key range from records a worker kept (ClassRecords): from record `from`, until
 * the encoder is ready or RECORDS_PER_STEP records are read; gives the next record to read, -1 once all are.
 */
export function encodeKeptCode(request: ReportRequest, times: SlotTimes, kept: KeptRecords, encoder: ClassSink, from: number): number {
  const passes = classTest(request);
  const window = { from: request.from, to: request.to ?? request.now };
  const { sourceNames, classNames, bytes, starts } = kept;
  const count = sourceNames.length;
  const end = Math.min(count, from + RECORDS_PER_STEP);
  for (let k = from; k < end; k++) {
    if (passes(sourceNames[k], classNames[k])) encodeRecord(encoder, sourceNames[k], classNames[k], bytes.subarray(starts[k], starts[k + 1]), times, window);
    if (encoder.ready) return k + 1 === count ? -1 : k + 1;
  }
  return end === count ? -1 : end;
}

/** Whether the fleet-wide records answer the request as they are: no per-method or AppEnv test. */
export function readsWholeRecords(request: ReportRequest): boolean {
  const conditions = codeConditions(request);
  return conditions.AppEnv.length === 0 && conditions.methodName.length === 0;
}

/** Whether encodeCode answers the request: items in key order, every method its own, no per-method or AppEnv test. */
export function encodesRecords(request: ReportRequest): boolean {
  return codeItemsInKeyOrder(request) && readsWholeRecords(request);
}

/**
 * The classes of the key range with the methods that pass the filter and the window, as bytes (a code
 * group's partition): read in place from the fleet-wide records where the request allows, else from
 * scanCode. With `resume`, as scanCode's: `last` is the key of the class to resume after, null once the
 * range is done. A `collector` gets every record read, as encodeCode's.
 */
export function timedCode(store: Store, request: ReportRequest, times: SlotTimes, start: string[] | null, end: string[] | null, resume?: { after: string[] | null; methods: number }, collector: RecordCollector | null = null): { classes: TimedClasses; last: string[] | null } {
  const builder = new TimedClassesBuilder(resume?.methods);
  if (!readsWholeRecords(request)) {
    const last = scanCode(store, request, times, start, end, (cls) => builder.add(cls), resume);
    return { classes: builder.finish(), last };
  }
  let after = resume?.after ?? null;
  do after = encodeCode(store, request, times, start, end, builder, { after }, collector);
  while (after !== null && !builder.ready);
  if (after === null) collector?.done();
  return { classes: builder.finish(), last: after };
}

export function codePartition(context: KernelContext, request: ReportRequest, times: SlotTimes, start: string[] | null, end: string[] | null): ClassMethods[] {
  const classes: ClassMethods[] = [];
  scanCode(context.store, request, times, start, end, (cls) => classes.push(cls));
  return classes;
}

/** The class records the request reads, from LMDB's statistics: counting the keys would walk them all. */
export function codeRecordCount(store: Store, request: ReportRequest): number {
  return (classRecords(store, request).getStats() as { entryCount: number }).entryCount;
}

/**
 * Splits the class records the request reads into about `count` key ranges on class boundaries. LMDB skips
 * `offset` entries inside its cursor, without decoding them: a bound costs a step's worth of native
 * skipping, not a JS iteration over every key.
 */
export function codePartitions(store: Store, request: ReportRequest, count: number): { start: string[] | null; end: string[] | null }[] {
  const records = classRecords(store, request);
  const step = Math.max(1, Math.floor(codeRecordCount(store, request) / count));
  const bounds: string[][] = [];
  let from: string[] | undefined;
  while (bounds.length < count - 1) {
    let next: string[] | undefined;
    for (const key of records.getKeys({ ...(from === undefined ? {} : { start: from }), offset: step, limit: 1 })) next = key;
    if (next === undefined) break;
    const bound = [next[0], next[1]];
    const previous = bounds[bounds.length - 1];
    if (previous === undefined || previous[0] !== bound[0] || previous[1] !== bound[1]) bounds.push(bound);
    // The next step counts from this key: a class's records (one per AppEnv) sort right after [source, class].
    from = next;
  }
  const ranges: { start: string[] | null; end: string[] | null }[] = [];
  for (let k = 0; k <= bounds.length; k++) ranges.push({ start: k === 0 ? null : bounds[k - 1], end: k === bounds.length ? null : bounds[k] });
  return ranges;
}

/**
 * With no sortBy and every method its own item (no groupBy, or all three levels), the items come out of
 * the partitions in key order, which is the report order: partitions encode their items themselves.
 */
export function codeItemsInKeyOrder(request: ReportRequest): boolean {
  return request.sortBy.length === 0 && (request.groupBy.length === 0 || request.groupBy.length === 3);
}

function collationOf(field: string): Collation {
  return field === 'count' || field === 'firstSeen' || field === 'lastSeen' ? 'number' : 'string';
}

/**
 * The classes of every partial in key order, each partial being in key order: key ranges follow one another;
 * a cluster's code groups (src/storage/code-groups.ts) interleave. Keys compare as LMDB orders them, by
 * code point (its keys are UTF-8), the first name then the second.
 */
export function* classesInKeyOrder<Class extends { sourceName: string; className: string }>(partials: readonly Class[][]): Generator<Class> {
  const next = partials.map(() => 0);
  for (;;) {
    let lowest = -1;
    for (let p = 0; p < partials.length; p++) {
      if (next[p] === partials[p].length) continue;
      if (lowest < 0) {
        lowest = p;
        continue;
      }
      const cls = partials[p][next[p]];
      const other = partials[lowest][next[lowest]];
      if ((compareCodePoints(cls.sourceName, other.sourceName) || compareCodePoints(cls.className, other.className)) < 0) lowest = p;
    }
    if (lowest < 0) return;
    yield partials[lowest][next[lowest]++];
  }
}

/** Items in report order; the partials' classes merge in key order, which is the default order. */
export function codeFinalize(request: ReportRequest, partials: readonly ClassMethods[][]): Record<string, unknown>[] {
  const depth = request.groupBy.length;
  const items: Record<string, unknown>[] = [];
  let last: Record<string, unknown> | null = null;
  for (const cls of classesInKeyOrder(partials)) {
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
  const { sortBy } = request;
  if (sortBy.length > 0) {
    const path = ['sourceName', 'className', 'methodName'].slice(0, depth === 0 ? 3 : depth);
    sortItems(items, orderKeys(sortBy, path.map((field) => ({ field, direction: 'ASC', collation: 'string' })), collationOf));
  }
  for (const item of items) {
    item.firstSeen = codeTime(item.firstSeen as number);
    item.lastSeen = codeTime(item.lastSeen as number);
  }
  return items;
}
