// CVE test kit: synthetic OSV records with known scores, `cve import`, agent event builders, and a client for GET /public/cve/events.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { vmStart } from './events.ts';
import { request, runCli, tempDir } from './service.ts';
import type { JsonResponse, RunningService } from './service.ts';

type RawEvent = Record<string, any>;

/** CVSS v3.1 vectors and their published base scores (FIRST / NVD calculator). */
export const CVSS = {
  score10: { vector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H', score: 10 },
  score98: { vector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H', score: 9.8 },
  score90: { vector: 'CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:C/C:H/I:H/A:H', score: 9 },
  score81: { vector: 'CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:H/I:H/A:H', score: 8.1 },
  score75: { vector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H', score: 7.5 },
  score61: { vector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:C/C:L/I:L/A:N', score: 6.1 },
  score53: { vector: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:L/I:N/A:N', score: 5.3 },
  score33: { vector: 'CVSS:3.1/AV:L/AC:L/PR:L/UI:N/S:U/C:L/I:N/A:N', score: 3.3 },
} as const;

export type Severity = (typeof CVSS)[keyof typeof CVSS];

/** One synthetic advisory: an OSV id, the CVE it is about, and the versions of one Maven artifact it lists. */
export interface SyntheticCve {
  osvId: string;
  cveId: string;
  groupId: string;
  artifactId: string;
  versions: readonly string[];
  severity: Severity;
}

/** The OSV JSON of a synthetic advisory (explicit `versions`; range evaluation is tested in test/vuln). */
export function osvRecord(cve: SyntheticCve, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schema_version: '1.4.0',
    id: cve.osvId,
    modified: '2026-01-01T00:00:00Z',
    aliases: [cve.cveId],
    summary: `synthetic ${cve.cveId} in ${cve.artifactId}`,
    severity: [{ type: 'CVSS_V3', score: cve.severity.vector }],
    affected: [{ package: { ecosystem: 'Maven', name: `${cve.groupId}:${cve.artifactId}` }, versions: [...cve.versions] }],
    ...extra,
  };
}

/** The groupId of the synthetic advisories and of the components tests report. */
export const GROUP = 'org.jvmlens.test';

/** What the test expects of a component: its CVEs with scores, looked up by plain loops over the advisories. */
export function cvesOf(advisories: readonly SyntheticCve[], component: { componentName: string; componentVersion: string; groupId: string | null }): { cveId: string; score: number }[] {
  const found = new Map<string, number>();
  for (const cve of advisories) {
    if (cve.artifactId !== component.componentName) continue;
    if (component.groupId !== null && component.groupId !== cve.groupId) continue;
    if (!cve.versions.includes(component.componentVersion)) continue;
    found.set(cve.cveId, cve.severity.score);
  }
  return [...found].map(([cveId, score]) => ({ cveId, score }));
}

/** Writes advisories as one OSV file each into a new folder; returns the folder. */
export function writeAdvisories(advisories: readonly SyntheticCve[], folder = tempDir('jvmlens-osv-')): string {
  mkdirSync(folder, { recursive: true });
  for (const cve of advisories) writeFileSync(join(folder, `${cve.osvId}.json`), JSON.stringify(osvRecord(cve)));
  return folder;
}

/** `jvmlens cve import PATH... --data-dir DIR`, expected to succeed; returns its output. */
export async function cveImport(dataDir: string, paths: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const result = await runCli(['cve', 'import', ...paths, '--data-dir', dataDir]);
  assert.equal(result.code, 0, `cve import: ${result.stdout}${result.stderr}`);
  return result;
}

/** A vm.start with a chosen host and tags (decisions §4). */
export function startEvent(vmId: string, time: number, hostName: string, tags: Record<string, string> = {}): RawEvent {
  const event = vmStart(vmId, time, { tags });
  (event.inventory as Record<string, unknown>).hostName = hostName;
  return event;
}

export function componentsEvent(vmId: string, time: number, items: { componentName: string; componentVersion: string; groupId?: string; sourceName?: string }[]): RawEvent {
  return { type: 'components', vmId, time, items };
}

export function codeEvent(vmId: string, time: number, sourceNames: readonly string[]): RawEvent {
  return { type: 'code', vmId, time, items: sourceNames.map((sourceName) => ({ sourceName, className: 'com/acme/Used', methodName: 'run()' })) };
}

// ---- the events client ----

export type EventQuery = Record<string, string | number | boolean>;

/** What the client needs of a service (a test's RunningService). */
export type Api = Pick<RunningService, 'apiUrl' | 'apiKey'>;

export function eventsUrl(service: Api, query: EventQuery = {}): string {
  const params = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
  const search = params.size > 0 ? `?${params}` : '';
  return `${service.apiUrl}/public/cve/events${search}`;
}

export function getEvents(service: Api, query: EventQuery = {}, key: string | null = service.apiKey): Promise<JsonResponse<any>> {
  return request(eventsUrl(service, query), { key });
}

export interface Walk {
  items: any[];
  pages: JsonResponse<any>[];
}

/** Checks one page's envelope (interface §2.5) and that it answered 200. */
export function checkEnvelope(page: JsonResponse<any>, label: string): void {
  assert.equal(page.status, 200, `${label}: ${page.text.slice(0, 500)}`);
  const body = page.body;
  assert.ok(Array.isArray(body.data), `${label}: data is an array`);
  assert.equal(body.size, body.data.length, `${label}: size counts data`);
  assert.ok(body.data.length <= body.limit, `${label}: a page holds at most limit items`);
  assert.equal(typeof body.hasNext, 'boolean');
  assert.equal(body.afterToken !== undefined, body.hasNext, `${label}: afterToken is there exactly when hasNext`);
  assert.ok(Array.isArray(body.summary.warnings) && Number.isInteger(body.summary.totalCount), `${label}: summary`);
}

/**
 * Reads every page of a query by following afterToken with the returned limit (interface §6.2).
 * `between` runs after each page, before the next is asked for (e.g. another client ingesting).
 */
export async function walkEvents(service: Api, query: EventQuery, between?: (page: number, lastItem: any) => Promise<void>): Promise<Walk> {
  const pages: JsonResponse<any>[] = [];
  const items: any[] = [];
  let next: EventQuery = query;
  for (;;) {
    const page = await getEvents(service, next);
    checkEnvelope(page, `page ${pages.length} of ${JSON.stringify(query)}`);
    pages.push(page);
    items.push(...page.body.data);
    if (!page.body.hasNext) return { items, pages };
    assert.ok(page.body.size > 0, 'a page that says hasNext is not empty');
    assert.ok(pages.length < 100_000, 'the walk ends');
    if (between !== undefined) await between(pages.length, page.body.data[page.body.data.length - 1]);
    next = { ...query, limit: page.body.limit, afterToken: page.body.afterToken };
  }
}

/**
 * Polls a query (first page, limit 1000) every `intervalMs` until `until` accepts its items; resolves with the items
 * and when they were first seen, or rejects after `timeoutMs` with the last answer.
 */
export async function pollEvents(service: Api, query: EventQuery, until: (items: any[]) => boolean, timeoutMs: number, intervalMs = 50): Promise<{ items: any[]; seenAt: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const page = await getEvents(service, { limit: 1000, ...query });
    assert.equal(page.status, 200, page.text);
    if (until(page.body.data)) return { items: page.body.data, seenAt: Date.now() };
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${JSON.stringify(query)} answered ${page.text.slice(0, 1000)}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
