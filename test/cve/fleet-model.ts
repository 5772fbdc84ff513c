// A model of the test fleet built from the agent events a CVE test sends: it predicts GET /public/cve/events item by item.
import assert from 'node:assert/strict';
import { ingest } from '../helpers/events.ts';
import { codeEvent, componentsEvent, CVSS, cvesOf, GROUP, startEvent, walkEvents } from '../helpers/cve.ts';
import type { EventQuery, SyntheticCve, Walk } from '../helpers/cve.ts';
import type { RunningService } from '../helpers/service.ts';

type RawEvent = Record<string, any>;

/**
 * The advisories most CVE tests import: two CVEs on alpha-lib 1.0; CVE ids and versions that sort
 * differently by code point than by number; delta-lib listed under another groupId than the fleet reports.
 */
export const ADVISORIES: readonly SyntheticCve[] = [
  { osvId: 'GHSA-jvml-0001-aaaa', cveId: 'CVE-2099-1001', groupId: GROUP, artifactId: 'alpha-lib', versions: ['1.0'], severity: CVSS.score98 },
  { osvId: 'GHSA-jvml-0002-aaaa', cveId: 'CVE-2099-1002', groupId: GROUP, artifactId: 'alpha-lib', versions: ['1.0', '1.1'], severity: CVSS.score53 },
  { osvId: 'GHSA-jvml-0003-zzzz', cveId: 'CVE-2099-2001', groupId: GROUP, artifactId: 'Zeta-lib', versions: ['9.0', '10.0'], severity: CVSS.score10 },
  { osvId: 'GHSA-jvml-0004-zzzz', cveId: 'CVE-2099-10001', groupId: GROUP, artifactId: 'Zeta-lib', versions: ['10.0'], severity: CVSS.score75 },
  { osvId: 'GHSA-jvml-0005-bbbb', cveId: 'CVE-2099-3001', groupId: GROUP, artifactId: 'beta-lib', versions: ['3.2.1'], severity: CVSS.score61 },
  { osvId: 'GHSA-jvml-0006-dddd', cveId: 'CVE-2099-4001', groupId: 'org.jvmlens.other', artifactId: 'delta-lib', versions: ['0.1'], severity: CVSS.score33 },
  { osvId: 'GHSA-jvml-0007-eeee', cveId: 'CVE-2099-5001', groupId: GROUP, artifactId: 'epsilon-lib', versions: ['2.0'], severity: CVSS.score90 },
];

export interface Lib {
  componentName: string;
  componentVersion: string;
  groupId: string;
}

const lib = (componentName: string, componentVersion: string): Lib => ({ componentName, componentVersion, groupId: GROUP });

/** Components the synthetic fleet carries: vulnerable ones and clean ones (alpha 2.0, beta 3.3, gamma, delta of the wrong group). */
export const LIBS: readonly Lib[] = [
  lib('alpha-lib', '1.0'), lib('alpha-lib', '1.1'), lib('alpha-lib', '2.0'), lib('Zeta-lib', '9.0'), lib('Zeta-lib', '10.0'),
  lib('beta-lib', '3.2.1'), lib('beta-lib', '3.3'), lib('gamma-lib', '0.9'), lib('delta-lib', '0.1'), lib('epsilon-lib', '2.0'),
];

export const HOSTS = ['host-a', 'host-b', 'host-c'] as const;

/**
 * The events of synthetic VM number `i` (deterministic): a start `i` minutes after `base` on one of three hosts, tags
 * env/team except every fifth VM, about two thirds of `libs`, some with a sourceName whose code is loaded, and
 * a heartbeat hours later or a stop half an hour later.
 */
export function syntheticVm(i: number, vmId: string, base: number, libs: readonly Lib[] = LIBS): RawEvent[] {
  const startTime = base + i * 60_000;
  const tags: Record<string, string> = i % 5 === 4 ? {} : { env: i % 2 === 0 ? 'prod' : 'staging', team: Math.floor(i / 2) % 2 === 0 ? 'core' : 'edge' };
  const items: { componentName: string; componentVersion: string; groupId: string; sourceName?: string }[] = [];
  const used: string[] = [];
  libs.forEach((component, j) => {
    if ((i + j) % 3 === 0) return;
    const jar = `${component.componentName}-${component.componentVersion}.jar`;
    // Every fifth component comes without a sourceName: PRESENT even when code is loaded from a JAR of that name.
    items.push((i + j) % 5 === 0 ? { ...component } : { ...component, sourceName: jar });
    if ((i + j) % 4 === 0) used.push(jar);
  });
  const events: RawEvent[] = [startEvent(vmId, startTime, HOSTS[i % HOSTS.length], tags), componentsEvent(vmId, startTime + 1_000, items)];
  if (used.length > 0) events.push(codeEvent(vmId, startTime + 2_000, used));
  if (i % 6 === 5) events.push({ type: 'vm.stop', vmId, time: startTime + 1_800_000 });
  else events.push({ type: 'vm.heartbeat', vmId, time: startTime + (i % 4) * 3_600_000 + 3_000 });
  return events;
}

// ---- times in the forms GET /public/cve/events accepts ----

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** `yyyy-MM-ddTHH:mm:ss` (UTC, no zone) of a whole second; with an offset in minutes, the local time plus `±HH:MM` (or `±HHMM`). */
export function timeText(ms: number, form: 'plain' | 'Z' | 'offset' | 'compactOffset' | 'epoch', offsetMinutes = 120): string {
  if (form === 'epoch') return String(ms);
  assert.equal(ms % 1000, 0, 'second-precision forms need a whole second');
  const shift = form === 'offset' || form === 'compactOffset' ? offsetMinutes : 0;
  const d = new Date(ms + shift * 60_000);
  const text = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  if (form === 'plain') return text;
  if (form === 'Z') return `${text}Z`;
  const sign = shift < 0 ? '-' : '+';
  const hours = pad(Math.floor(Math.abs(shift) / 60));
  const minutes = pad(Math.abs(shift) % 60);
  return form === 'offset' ? `${text}${sign}${hours}:${minutes}` : `${text}${sign}${hours}${minutes}`;
}

export const TIME_FORMS = ['plain', 'Z', 'offset', 'compactOffset', 'epoch'] as const;

/** Waits until the wall clock is past the next whole second and returns that second (epoch ms). */
export async function nextWholeSecond(): Promise<number> {
  const second = Math.ceil((Date.now() + 1) / 1000) * 1000;
  while (Date.now() <= second) await new Promise((resolve) => setTimeout(resolve, Math.max(1, second - Date.now() + 1)));
  return second;
}

// ---- a model of the fleet, from the raw agent events the test sends ----

export interface ModelComponent {
  componentName: string;
  componentVersion: string;
  sourceName: string | null;
}

export interface ModelVm {
  vmId: string;
  hostName: string;
  startTime: number;
  lastHeardTime: number;
  terminated: boolean;
  tags: Record<string, string>;
  components: Map<string, ModelComponent>;
  usedSources: Set<string>;
}

/** The wall-clock window of the ingestion request in which the fleet first saw a component: its analysis time lies inside. */
export interface Window {
  from: number;
  to: number;
}

/** A CVE event as the model predicts it; `analysis` is the window its cveAnalysisTime must lie in (null without CVE). */
export interface ExpectedEvent {
  componentName: string;
  componentVersion: string;
  cveId: string | null;
  score: number | null;
  cveState: 'USED' | 'PRESENT' | null;
  hostName: string;
  startTime: number;
  lastHeardTime: number;
  vmId: string;
  tags: Record<string, string> | null;
  analysis: Window | null;
}

export interface ModelFilter {
  hostName?: string;
  vmId?: string;
  tags?: Record<string, string>;
  startTime?: number;
  endTime?: number;
  cveAnalysisStartTime?: number;
  cveAnalysisEndTime?: number;
  cveId?: string;
  showNotImpacted?: boolean;
}


const componentKey = (name: string, version: string) => `${name}\u0000${version}`;

/** Code-point order (not UTF-16 units, not locale). */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (a.charCodeAt(i) === b.charCodeAt(i)) continue;
    // At the first differing unit, whole code points (a shared high surrogate leaves the low ones to decide).
    return a.codePointAt(i)! - b.codePointAt(i)!;
  }
  return a.length - b.length;
}

export function compareEvents(a: { vmId: string; componentName: string; componentVersion: string; cveId: string | null }, b: typeof a): number {
  return compareCodePoints(a.vmId, b.vmId) || compareCodePoints(a.componentName, b.componentName) || compareCodePoints(a.componentVersion, b.componentVersion) || compareCodePoints(a.cveId ?? '', b.cveId ?? '');
}

export const eventKey = (e: { vmId: string; componentName: string; componentVersion: string; cveId: string | null }) => `${e.vmId}|${e.componentName}|${e.componentVersion}|${e.cveId}`;

/** The fleet as decisions §4 says the service stores it, plus each component's fleet-wide groupId and first sighting. */
export class CveFleetModel {
  readonly vms = new Map<string, ModelVm>();
  readonly groupIds = new Map<string, string | null>();
  readonly firstSeen = new Map<string, Window>();
  readonly advisories: readonly SyntheticCve[];
  /** The advisories never change: each component's CVEs are looked up once. */
  readonly #cves = new Map<string, { cveId: string; score: number }[]>();

  constructor(advisories: readonly SyntheticCve[]) {
    this.advisories = advisories;
  }

  /** Applies a batch the service accepted during `window`. */
  apply(events: readonly RawEvent[], window: Window): void {
    for (const event of events) this.#applyOne(event, window);
  }

  #applyOne(event: RawEvent, window: Window): void {
    const time = event.time as number;
    if (event.type === 'vm.start') {
      const existing = this.vms.get(event.vmId);
      if (existing !== undefined && time < existing.startTime) return;
      const vm: ModelVm = existing ?? { vmId: event.vmId, hostName: '', startTime: time, lastHeardTime: time, terminated: false, tags: {}, components: new Map(), usedSources: new Set() };
      vm.hostName = event.inventory.hostName;
      vm.startTime = time;
      vm.lastHeardTime = Math.max(vm.lastHeardTime, time);
      vm.terminated = false;
      Object.assign(vm.tags, event.tags ?? {});
      this.vms.set(vm.vmId, vm);
      return;
    }
    const vm = this.vms.get(event.vmId);
    assert.ok(vm !== undefined, `the model knows ${event.vmId}`);
    const wasTerminated = vm.terminated;
    if (event.type === 'vm.stop') {
      if (time >= vm.startTime) {
        vm.terminated = true;
        vm.lastHeardTime = Math.max(vm.lastHeardTime, time);
      }
      return;
    }
    if (event.type === 'code') {
      for (const item of event.items) if (item.sourceName !== '') vm.usedSources.add(item.sourceName);
    } else if (event.type === 'components') {
      for (const item of event.items) {
        const key = componentKey(item.componentName, item.componentVersion);
        if (!this.firstSeen.has(key)) this.firstSeen.set(key, window);
        if ((this.groupIds.get(key) ?? null) === null) this.groupIds.set(key, item.groupId ?? null);
        const sourceName = item.sourceName ?? null;
        const held = vm.components.get(key);
        if (held === undefined) vm.components.set(key, { componentName: item.componentName, componentVersion: item.componentVersion, sourceName });
        else if (held.sourceName === null) held.sourceName = sourceName;
      }
    }
    if (!wasTerminated) vm.lastHeardTime = Math.max(vm.lastHeardTime, time);
  }

  /** PUT /public/instance/{vmId}/tags: replaces every tag. */
  setTags(vmId: string, tags: Record<string, string>): void {
    this.vms.get(vmId)!.tags = { ...tags };
  }

  /** The CVEs of a component, with the fleet-wide groupId the service matches on. */
  cves(component: ModelComponent): { cveId: string; score: number }[] {
    const groupId = this.groupIds.get(componentKey(component.componentName, component.componentVersion)) ?? null;
    const key = `${componentKey(component.componentName, component.componentVersion)}\u0000${groupId}`;
    let cves = this.#cves.get(key);
    if (cves === undefined) {
      cves = cvesOf(this.advisories, { ...component, groupId }).sort((a, b) => compareCodePoints(a.cveId, b.cveId));
      this.#cves.set(key, cves);
    }
    return cves;
  }

  /** The events GET /public/cve/events should return for the filter, in the order of decisions §11. */
  expected(filter: ModelFilter = {}): ExpectedEvent[] {
    const rows: ExpectedEvent[] = [];
    for (const vm of this.vms.values()) {
      if (filter.hostName !== undefined && vm.hostName !== filter.hostName) continue;
      if (filter.vmId !== undefined && vm.vmId !== filter.vmId) continue;
      if (filter.tags !== undefined && Object.entries(filter.tags).some(([key, value]) => vm.tags[key] !== value)) continue;
      if (filter.startTime !== undefined && vm.startTime < filter.startTime) continue;
      if (filter.endTime !== undefined && vm.lastHeardTime > filter.endTime) continue;
      // A filter on CVEs leaves out components without CVEs, even with showNotImpacted.
      const analysisFiltered = filter.cveAnalysisStartTime !== undefined || filter.cveAnalysisEndTime !== undefined || filter.cveId !== undefined;
      const base = { hostName: vm.hostName, startTime: vm.startTime, lastHeardTime: vm.lastHeardTime, vmId: vm.vmId, tags: Object.keys(vm.tags).length === 0 ? null : { ...vm.tags } };
      for (const component of vm.components.values()) {
        const cves = this.cves(component);
        const window = this.firstSeen.get(componentKey(component.componentName, component.componentVersion))!;
        if (cves.length === 0) {
          if (filter.showNotImpacted === true && !analysisFiltered) {
            rows.push({ componentName: component.componentName, componentVersion: component.componentVersion, cveId: null, score: null, cveState: null, ...base, analysis: null });
          }
          continue;
        }
        if (filter.cveAnalysisStartTime !== undefined) {
          assert.ok(window.to < filter.cveAnalysisStartTime || window.from >= filter.cveAnalysisStartTime, 'the analysis boundary falls between ingestions');
          if (window.to < filter.cveAnalysisStartTime) continue;
        }
        if (filter.cveAnalysisEndTime !== undefined) {
          assert.ok(window.to <= filter.cveAnalysisEndTime || window.from > filter.cveAnalysisEndTime, 'the analysis boundary falls between ingestions');
          if (window.from > filter.cveAnalysisEndTime) continue;
        }
        const cveState = component.sourceName !== null && vm.usedSources.has(component.sourceName) ? 'USED' : 'PRESENT';
        for (const { cveId, score } of cves) if (filter.cveId === undefined || cveId === filter.cveId) rows.push({ componentName: component.componentName, componentVersion: component.componentVersion, cveId, score, cveState, ...base, analysis: window });
      }
    }
    return rows.sort(compareEvents);
  }
}

/** Sends a batch through the gateway, expects 200, and applies it to the model with the request's wall-clock window. */
export async function ingestInto(service: RunningService, model: CveFleetModel, events: RawEvent[]): Promise<void> {
  const from = Date.now();
  const result = await ingest(service.gatewayUrl, service.apiKey, events);
  assert.equal(result.status, 200, `ingestion refused: ${JSON.stringify(result.body)}`);
  model.apply(events, { from, to: Date.now() });
}

/** Items without cveAnalysisTime, for comparison with the model; each analysis time is checked against its window. */
export function withoutAnalysisTime(items: readonly any[], expected: readonly ExpectedEvent[], label: string): unknown[] {
  const windows = new Map(expected.map((e) => [eventKey(e), e.analysis]));
  return items.map((item) => {
    const { cveAnalysisTime, ...rest } = item;
    const window = windows.get(eventKey(item));
    // An item the model does not expect at all is reported by the caller's comparison.
    if (window === null) assert.equal(cveAnalysisTime, null, `${label}: no analysis time without CVE`);
    else if (window !== undefined) assert.ok(cveAnalysisTime >= window.from && cveAnalysisTime <= window.to, `${label}: cveAnalysisTime ${cveAnalysisTime} of ${eventKey(item)} lies in [${window.from}, ${window.to}]`);
    return rest;
  });
}

export function stripWindows(expected: readonly ExpectedEvent[]): unknown[] {
  return expected.map(({ analysis: _analysis, ...rest }) => rest);
}

/** Walks the query and compares every item, in order, with the model's prediction; checks totalCount on each page. */
export async function checkQuery(service: RunningService, model: CveFleetModel, query: EventQuery, filter: ModelFilter, label = JSON.stringify(query)): Promise<Walk> {
  const expected = model.expected(filter);
  const walk = await walkEvents(service, query);
  assert.deepEqual(withoutAnalysisTime(walk.items, expected, label), stripWindows(expected), label);
  for (const page of walk.pages) {
    assert.equal(page.body.summary.totalCount, Math.min(expected.length, 10_000), `totalCount of ${label}`);
    assert.deepEqual(page.body.summary.warnings, [], `warnings of ${label}`);
  }
  return walk;
}
