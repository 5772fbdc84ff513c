// Expected report results per family (decisions §7, §8, §9), computed with plain loops over the FleetModel.
import { compareMavenVersions } from '../../src/versions/maven.ts';
import { iso } from '../helpers/reports.ts';
import { asc, compareCodePoints, countGroups, desc, javaVersion, lifeEnd, sortItems, vmField, vmGroups, vmState } from './fleet-model.ts';
import type { FleetModel, Item, ModelCode, ModelVm, SortKey, Value } from './fleet-model.ts';

export interface Window {
  from: number;
  to: number;
  /** The report's request time: VM states and running lives are taken at it. */
  now: number;
  offlineAfterMs: number;
}

export type VmTest = (vm: ModelVm, state: string) => boolean;

// ---- JVM inventory (decisions §7) ----

/** VMs whose life [startTime, end] overlaps [from, to] and that pass `keep`. */
export function jvmPopulation(model: FleetModel, window: Window, keep: VmTest = () => true): ModelVm[] {
  return [...model.vms.values()].filter(
    (vm) => vm.startTime <= window.to && lifeEnd(vm, window.now, window.offlineAfterMs) >= window.from && keep(vm, vmState(vm, window.now, window.offlineAfterMs)),
  );
}

/** One item per VM, sorted by `keys` then hostName, vmId; `tags.K` keys read the VM's tags. */
export function jvmItems(vms: readonly ModelVm[], window: Window, keys: readonly SortKey[] = []): Item[] {
  const rows = vms.map((vm) => ({
    item: {
      vmId: vm.vmId, hostName: vm.hostName, state: vmState(vm, window.now, window.offlineAfterMs), agentVersion: vm.agentVersion,
      javaVersion: javaVersion(vm), javaVendor: vm.systemProperties['java.vm.vendor'] ?? null,
      startTime: iso(vm.startTime), lastHeardTime: iso(vm.lastHeardTime), tags: vm.tags,
    } as Item,
    // Sort values: times as numbers, tags by key.
    ...Object.fromEntries(keys.map((key) => [key.field, vmField(vm, key.field, window.now, window.offlineAfterMs)])),
    hostName: vm.hostName,
    vmId: vm.vmId,
  }));
  return sortItems(rows, [...keys, asc('hostName'), asc('vmId')]).map((row) => row.item);
}

/** Group items `{field: value…, count}` over the population (unsorted). */
export function jvmGroups(vms: readonly ModelVm[], groupBy: readonly string[], window: Window): Item[] {
  return countGroups(vms.flatMap((vm) => vmGroups(vm, groupBy, window)), groupBy);
}

// ---- code inventory (decisions §8) ----

/** `yyyy-MM-ddTHH:mm:ss.SSS`, UTC, no zone (interface §2.4). */
export const codeTime = (time: number): string => new Date(time).toISOString().slice(0, 23);

export interface CodeRow {
  sourceName: string;
  className: string;
  methodName: string;
  firstSeen: number;
  lastSeen: number;
}

/** Methods over the records that pass `keep`, merged across AppEnvs, then kept when they touch [from, to]. */
export function codeRows(model: FleetModel, from: number, to: number, keep: (record: ModelCode) => boolean = () => true): CodeRow[] {
  const merged = new Map<string, CodeRow>();
  for (const record of model.code.values()) {
    if (!keep(record)) continue;
    const key = JSON.stringify([record.sourceName, record.className, record.methodName]);
    const row = merged.get(key);
    if (row === undefined) merged.set(key, { sourceName: record.sourceName, className: record.className, methodName: record.methodName, firstSeen: record.firstSeen, lastSeen: record.lastSeen });
    else {
      row.firstSeen = Math.min(row.firstSeen, record.firstSeen);
      row.lastSeen = Math.max(row.lastSeen, record.lastSeen);
    }
  }
  return [...merged.values()].filter((row) => row.lastSeen >= from && row.firstSeen <= to);
}

const CODE_PATH = ['sourceName', 'className', 'methodName'];

/**
 * Code items: per method, or per group of a prefix of the path with firstSeen min, lastSeen max and
 * count; ordered by `keys`, then the path ascending; times formatted last.
 */
export function codeItems(rows: readonly CodeRow[], groupBy: readonly string[] = [], keys: readonly SortKey[] = []): Item[] {
  let items: Item[];
  const path = groupBy.length === 0 ? CODE_PATH : groupBy;
  if (groupBy.length === 0) items = rows.map((row) => ({ ...row }));
  else {
    const groups = new Map<string, Item>();
    for (const row of rows) {
      const key = JSON.stringify(groupBy.map((field) => row[field as keyof CodeRow]));
      const group = groups.get(key);
      if (group === undefined) groups.set(key, { ...Object.fromEntries(groupBy.map((field) => [field, row[field as keyof CodeRow]])), firstSeen: row.firstSeen, lastSeen: row.lastSeen, count: 1 });
      else {
        group.firstSeen = Math.min(group.firstSeen as number, row.firstSeen);
        group.lastSeen = Math.max(group.lastSeen as number, row.lastSeen);
        (group.count as number)++;
      }
    }
    items = [...groups.values()];
  }
  const order = [...keys, ...path.filter((field) => !keys.some((key) => key.field === field)).map((field) => asc(field))];
  return sortItems(items, order).map((item) => ({ ...item, firstSeen: codeTime(item.firstSeen as number), lastSeen: codeTime(item.lastSeen as number) }));
}

// ---- component inventory (decisions §9) ----

export interface ComponentWindow {
  startTime: number;
  endTime: number | null;
  now: number;
  offlineAfterMs: number;
}

export interface ModelComponent {
  componentName: string;
  componentVersion: string;
}

export interface ComponentExpectation {
  /** Innermost items in report order, each with its group values. */
  items: Item[];
  summary: { vmCount: number; componentCount: number };
}

const COMPONENT_FIELDS = ['componentName', 'componentVersion'];

const kindOf = (field: string): SortKey['kind'] => (field === 'componentVersion' ? 'version' : ['count', 'year', 'month', 'week', 'day'].includes(field) ? 'number' : 'string');

/**
 * Counts distinct VMs per (group, component) over the (VM, component) pairs whose VM was heard from
 * since startTime and started by endTime, and that pass the tests. Order: the group fields (their
 * sortBy direction, else ascending) so groups stay contiguous, then the other sortBy keys, then
 * componentName ascending and componentVersion descending in Maven order.
 */
export function componentReport(
  model: FleetModel,
  window: ComponentWindow,
  options: { groupBy?: string[]; sortBy?: [string, 'ASC' | 'DESC'][]; detail?: boolean; keepVm?: VmTest; keepComponent?: (component: ModelComponent) => boolean } = {},
): ComponentExpectation {
  const { groupBy = [], sortBy = [], detail = false, keepVm = () => true, keepComponent = () => true } = options;
  const to = window.endTime ?? window.now;
  const cells = new Map<string, { values: Value[]; component: ModelComponent; vmIds: Set<string> }>();
  const vms = new Set<string>();
  const components = new Set<string>();
  for (const vm of model.vms.values()) {
    if (vm.lastHeardTime < window.startTime || (window.endTime !== null && vm.startTime > window.endTime)) continue;
    if (!keepVm(vm, vmState(vm, window.now, window.offlineAfterMs))) continue;
    // Group fields of the component itself (componentName, componentVersion) come from the pair, the others from the VM.
    const vmGroupBy = groupBy.filter((field) => !COMPONENT_FIELDS.includes(field));
    const vmTuples = vmGroups(vm, vmGroupBy, { from: window.startTime, to, now: window.now, offlineAfterMs: window.offlineAfterMs });
    for (const [key, component] of vm.components) {
      if (!keepComponent(component)) continue;
      vms.add(vm.vmId);
      components.add(key);
      const groups = vmTuples.map((tuple) => {
        let v = 0;
        return groupBy.map((field) => (COMPONENT_FIELDS.includes(field) ? component[field as keyof ModelComponent] : tuple[v++]));
      });
      for (const values of groups) {
        const cell = JSON.stringify([values, key]);
        let entry = cells.get(cell);
        if (entry === undefined) cells.set(cell, (entry = { values, component, vmIds: new Set() }));
        entry.vmIds.add(vm.vmId);
      }
    }
  }
  const items = [...cells.values()].map(({ values, component, vmIds }) => {
    const item: Item = { ...Object.fromEntries(groupBy.map((field, k) => [field, values[k]])), ...component, count: vmIds.size };
    if (detail) item.vmIds = [...vmIds].sort(compareCodePoints);
    return item;
  });
  const direction = (field: string) => sortBy.find(([name]) => name === field)?.[1] ?? 'ASC';
  const keys: SortKey[] = groupBy.map((field) => ({ field, dir: direction(field), kind: kindOf(field) }));
  for (const [field, dir] of sortBy) if (!groupBy.includes(field)) keys.push({ field, dir, kind: kindOf(field) });
  if (!keys.some((key) => key.field === 'componentName')) keys.push(asc('componentName'));
  if (!keys.some((key) => key.field === 'componentVersion')) keys.push(desc('componentVersion', 'version'));
  return { items: sortItems(items, keys, compareMavenVersions), summary: { vmCount: vms.size, componentCount: components.size } };
}

/** Items nested per groupBy level (interface §2.4): consecutive items of one value share a level. */
export function nest(items: readonly Item[], groupBy: readonly string[]): unknown[] {
  if (groupBy.length === 0) return [...items];
  const [field, ...rest] = groupBy;
  const levels: Item[] = [];
  let run: Item[] = [];
  const close = () => {
    if (run.length > 0) levels.push({ [field]: run[0][field], data: nest(run, rest) });
    run = [];
  };
  for (const item of items) {
    if (run.length > 0 && run[0][field] !== item[field]) close();
    run.push(item);
  }
  close();
  return levels;
}
