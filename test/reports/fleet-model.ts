// What the service should hold after a test's raw agent events, rebuilt with plain loops (decisions §4): the reports' oracle.

export const DAY = 86_400_000;

export type Value = string | number | null;
export type Item = Record<string, unknown>;
type RawEvent = Record<string, unknown>;

export interface ModelVm {
  vmId: string;
  startTime: number;
  lastHeardTime: number;
  terminated: boolean;
  tags: Record<string, string>;
  agentVersion: string | null;
  agentRevision: string | null;
  mailbox: string | null;
  hostName: string | null;
  mainMethod: string | null;
  systemProperties: Record<string, string>;
  /** `componentName\u0000componentVersion` → the component. */
  components: Map<string, { componentName: string; componentVersion: string }>;
}

/** One code record: a method seen by the VMs of one AppEnv ('' when the VM has none). */
export interface ModelCode {
  appEnv: string;
  sourceName: string;
  className: string;
  methodName: string;
  firstSeen: number;
  lastSeen: number;
}

export type VmState = 'RUNNING' | 'OFFLINE' | 'TERMINATED';

export class FleetModel {
  readonly vms = new Map<string, ModelVm>();
  readonly code = new Map<string, ModelCode>();

  apply(events: readonly RawEvent[]): void {
    for (const event of events) this.#applyOne(event);
  }

  #applyOne(event: RawEvent): void {
    const vmId = event.vmId as string;
    const time = event.time as number;
    if (event.type === 'vm.start') {
      const inventory = (event.inventory ?? {}) as Record<string, unknown>;
      const previous = this.vms.get(vmId);
      this.vms.set(vmId, {
        vmId,
        startTime: time,
        lastHeardTime: Math.max(previous?.lastHeardTime ?? time, time),
        terminated: false,
        tags: { ...previous?.tags, ...(event.tags as Record<string, string> | undefined) },
        agentVersion: (event.agentVersion as string | undefined) ?? null,
        agentRevision: (event.agentRevision as string | undefined) ?? null,
        mailbox: (event.mailbox as string | undefined) ?? null,
        hostName: (inventory.hostName as string | undefined) ?? null,
        mainMethod: (inventory.mainMethod as string | undefined) ?? null,
        systemProperties: { ...(inventory.systemProperties as Record<string, string> | undefined) },
        components: previous?.components ?? new Map(),
      });
      return;
    }
    const vm = this.vms.get(vmId);
    if (vm === undefined) throw new Error(`model: ${String(event.type)} for unknown VM ${vmId}`);
    const wasTerminated = vm.terminated;
    if (event.type === 'vm.stop') {
      vm.terminated = true;
      vm.lastHeardTime = Math.max(vm.lastHeardTime, time);
      return;
    }
    if (event.type === 'code') {
      const appEnv = vm.tags.AppEnv ?? '';
      for (const item of event.items as { sourceName: string; className: string; methodName: string }[]) {
        const key = JSON.stringify([appEnv, item.sourceName, item.className, item.methodName]);
        const record = this.code.get(key);
        if (record === undefined) this.code.set(key, { appEnv, ...item, firstSeen: time, lastSeen: time });
        else {
          record.firstSeen = Math.min(record.firstSeen, time);
          record.lastSeen = Math.max(record.lastSeen, time);
        }
      }
    } else if (event.type === 'components') {
      for (const item of event.items as { componentName: string; componentVersion: string }[]) {
        vm.components.set(`${item.componentName}\u0000${item.componentVersion}`, { componentName: item.componentName, componentVersion: item.componentVersion });
      }
    }
    // Events after a stop are stored but do not make the VM heard from (decisions §4).
    if (!wasTerminated) vm.lastHeardTime = Math.max(vm.lastHeardTime, time);
  }
}

export function vmState(vm: ModelVm, now: number, offlineAfterMs: number): VmState {
  if (vm.terminated) return 'TERMINATED';
  return now - vm.lastHeardTime > offlineAfterMs ? 'OFFLINE' : 'RUNNING';
}

/** End of a VM's life (decisions §7): now while RUNNING, else when it was last heard. */
export function lifeEnd(vm: ModelVm, now: number, offlineAfterMs: number): number {
  return vmState(vm, now, offlineAfterMs) === 'RUNNING' ? now : vm.lastHeardTime;
}

/** `java.runtime.version`, else `java.version` (decisions §7). */
export function javaVersion(vm: ModelVm): string | null {
  return vm.systemProperties['java.runtime.version'] ?? vm.systemProperties['java.version'] ?? null;
}

/** The value of a VM field as filters and groups see it. */
export function vmField(vm: ModelVm, field: string, now: number, offlineAfterMs: number): Value {
  if (field.startsWith('tags.')) return vm.tags[field.slice(5)] ?? null;
  if (field.startsWith('systemProperties.')) return vm.systemProperties[field.slice(17)] ?? null;
  switch (field) {
    case 'vmId': return vm.vmId;
    case 'state': return vmState(vm, now, offlineAfterMs);
    case 'startTime': return vm.startTime;
    case 'lastHeardTime': return vm.lastHeardTime;
    case 'javaVersion': return javaVersion(vm);
    case 'javaVendor': return vm.systemProperties['java.vm.vendor'] ?? null;
    case 'osName': return vm.systemProperties['os.name'] ?? null;
    case 'osArch': return vm.systemProperties['os.arch'] ?? null;
    case 'AppEnv': return vm.tags.AppEnv ?? null;
    case 'hostName': case 'agentVersion': case 'agentRevision': case 'mailbox': case 'mainMethod':
      return vm[field];
    default: throw new Error(`model: no VM field ${field}`);
  }
}

// ---- time buckets (decisions §6.3) ----

export const TIME_FIELDS = ['year', 'month', 'week', 'day'];

/** ISO-8601 week of a UTC day: the week holding that week's Thursday, counted in the Thursday's year. */
export function isoWeek(dayStart: number): number {
  const mondayBased = (new Date(dayStart).getUTCDay() + 6) % 7;
  const thursday = dayStart + (3 - mondayBased) * DAY;
  const january1 = Date.UTC(new Date(thursday).getUTCFullYear(), 0, 1);
  return Math.floor((thursday - january1) / DAY / 7) + 1;
}

function bucket(field: string, dayStart: number): number {
  const date = new Date(dayStart);
  if (field === 'year') return date.getUTCFullYear();
  if (field === 'month') return date.getUTCMonth() + 1;
  if (field === 'week') return isoWeek(dayStart);
  return date.getUTCDate();
}

/** The distinct tuples of the time fields over the UTC days of [start, end] ∩ [from, to]. */
export function timeTuples(fields: readonly string[], start: number, end: number, from: number, to: number): number[][] {
  const first = Math.max(start, from);
  const last = Math.min(end, to);
  const tuples = new Map<string, number[]>();
  for (let day = first - (first % DAY); day <= last; day += DAY) {
    const tuple = fields.map((field) => bucket(field, day));
    tuples.set(tuple.join(','), tuple);
  }
  return [...tuples.values()];
}

/** Every group a VM falls in: its field values crossed with the time buckets it was alive in. */
export function vmGroups(vm: ModelVm, groupBy: readonly string[], window: { from: number; to: number; now: number; offlineAfterMs: number }): Value[][] {
  const timeFields = groupBy.filter((field) => TIME_FIELDS.includes(field));
  const tuples = timeFields.length === 0 ? [[]] : timeTuples(timeFields, vm.startTime, lifeEnd(vm, window.now, window.offlineAfterMs), window.from, window.to);
  return tuples.map((tuple) => {
    let t = 0;
    return groupBy.map((field) => (TIME_FIELDS.includes(field) ? tuple[t++] : vmField(vm, field, window.now, window.offlineAfterMs)));
  });
}

// ---- order (decisions §6.3) ----

export type Kind = 'string' | 'number' | 'version';
export interface SortKey {
  field: string;
  dir: 'ASC' | 'DESC';
  kind: Kind;
}

/** Strings by code point, not by UTF-16 unit. */
export function compareCodePoints(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0)!);
  const y = Array.from(b, (c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

/** Sorts a copy by the keys in order; null sorts last whatever the direction. */
export function sortItems<T extends Item>(items: readonly T[], keys: readonly SortKey[], compareVersions: (a: string, b: string) => number = () => 0): T[] {
  return [...items].sort((a, b) => {
    for (const key of keys) {
      const x = a[key.field] as Value | undefined;
      const y = b[key.field] as Value | undefined;
      const nullX = x === null || x === undefined;
      const nullY = y === null || y === undefined;
      if (nullX && nullY) continue;
      if (nullX || nullY) return nullX ? 1 : -1;
      const order = key.kind === 'number' ? (x as number) - (y as number) : key.kind === 'version' ? compareVersions(String(x), String(y)) : compareCodePoints(String(x), String(y));
      if (order !== 0) return key.dir === 'ASC' ? order : -order;
    }
    return 0;
  });
}

export const asc = (field: string, kind: Kind = 'string'): SortKey => ({ field, dir: 'ASC', kind });
export const desc = (field: string, kind: Kind = 'string'): SortKey => ({ field, dir: 'DESC', kind });

/** Counts per distinct tuple of values: `{field: value…, count}` items in first-seen order. */
export function countGroups(rows: Iterable<Value[]>, fields: readonly string[]): Item[] {
  const counts = new Map<string, { values: Value[]; count: number }>();
  for (const values of rows) {
    const key = JSON.stringify(values);
    const entry = counts.get(key);
    if (entry === undefined) counts.set(key, { values, count: 1 });
    else entry.count++;
  }
  return [...counts.values()].map(({ values, count }) => ({ ...Object.fromEntries(fields.map((field, k) => [field, values[k]])), count }));
}

/** The UTC day start of a time. */
export const dayStart = (time: number): number => time - (time % DAY);
