// Report client for tests: create a report, wait for its final state, read every page by the afterToken chain.
import assert from 'node:assert/strict';
import { unpack } from 'msgpackr';
import { ingest } from './events.ts';
import { request } from './service.ts';
import type { JsonResponse, RunningService } from './service.ts';

export type Family = 'jvmInventory' | 'codeInventory' | 'component';
export type Item = Record<string, unknown>;

/** Where each family is created and read (interface §4.3–§4.5, decisions §6). */
export const PATHS: Record<Family, { create: string; base: string }> = {
  jvmInventory: { create: '/public/report/jvmInventory', base: '/public/report/jvmInventory' },
  codeInventory: { create: '/public/report/codeInventory', base: '/public/report/codeInventory' },
  component: { create: '/public/component/report/schedule', base: '/public/component/report' },
};

export const FAMILIES = Object.keys(PATHS) as Family[];

/** Sends raw agent events through the gateway in batches, as agents would. */
export async function ingestAll(service: RunningService, batches: Iterable<unknown[]>): Promise<void> {
  for (const batch of batches) {
    const result = await ingest(service.gatewayUrl, service.apiKey, batch);
    assert.equal(result.status, 200, `ingestion refused: ${JSON.stringify(result.body)}`);
  }
}

export function createReport(service: RunningService, family: Family, body: unknown, key: string = service.apiKey): Promise<JsonResponse<any>> {
  return request(`${service.apiUrl}${PATHS[family].create}`, { method: 'POST', key, body });
}

export function reportUrl(service: RunningService, family: Family, reportId: string, query: { page?: number; afterToken?: string } = {}): string {
  const params = new URLSearchParams();
  if (query.page !== undefined) params.set('page', String(query.page));
  if (query.afterToken !== undefined) params.set('afterToken', query.afterToken);
  const search = params.size > 0 ? `?${params}` : '';
  return `${service.apiUrl}${PATHS[family].base}/${encodeURIComponent(reportId)}${search}`;
}

export function getPage(service: RunningService, family: Family, reportId: string, query: { page?: number; afterToken?: string } = {}): Promise<JsonResponse<any>> {
  return request(reportUrl(service, family, reportId, query), { key: service.apiKey });
}

/** A page as msgpack (`Accept: application/msgpack`), decoded, with its raw bytes. */
export async function getPageMsgpack(service: RunningService, family: Family, reportId: string, query: { page?: number; afterToken?: string } = {}): Promise<{ status: number; contentType: string; body: any; bytes: Buffer }> {
  const response = await fetch(reportUrl(service, family, reportId, query), { headers: { 'x-api-key': service.apiKey, accept: 'application/msgpack' } });
  const bytes = Buffer.from(await response.arrayBuffer());
  return { status: response.status, contentType: response.headers.get('content-type') ?? '', body: response.status === 200 ? unpack(bytes) : undefined, bytes };
}

/** Polls page 0 until the report leaves PROCESSING; returns that page. */
export async function waitFinal(service: RunningService, family: Family, reportId: string, timeoutMs = 60_000): Promise<JsonResponse<any>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await getPage(service, family, reportId);
    assert.equal(response.status, 200, `GET report ${reportId}: ${response.text}`);
    if (response.body.state !== 'PROCESSING') return response;
    if (Date.now() > deadline) throw new Error(`report ${reportId} still PROCESSING after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Every page of a finished report, read by following afterToken from page 0 until it is absent. */
export async function readPages(service: RunningService, family: Family, reportId: string): Promise<JsonResponse<any>[]> {
  const pages: JsonResponse<any>[] = [];
  let query: { afterToken?: string } = {};
  for (;;) {
    const page = await getPage(service, family, reportId, query);
    assert.equal(page.status, 200, `page ${pages.length} of ${reportId}: ${page.text}`);
    assert.equal(page.body.page, pages.length, 'the afterToken chain visits pages in order');
    pages.push(page);
    if (page.body.afterToken === undefined) return pages;
    query = { afterToken: page.body.afterToken };
    assert.ok(pages.length <= page.body.totalPages, 'the afterToken chain ends at totalPages');
  }
}

/**
 * The innermost items of a component page (interface §2.4): each level is `{field: value, data}`;
 * checks that every item carries the group values of the levels around it.
 */
export function flattenNested(data: unknown[], groupBy: readonly string[], outer: Item = {}): Item[] {
  if (groupBy.length === 0) {
    for (const item of data as Item[]) for (const [field, value] of Object.entries(outer)) assert.deepEqual(item[field], value, `item carries its group value ${field}`);
    return data as Item[];
  }
  const [field, ...rest] = groupBy;
  return (data as Item[]).flatMap((level) => {
    assert.deepEqual(Object.keys(level).sort(), [field, 'data'].sort(), `a nesting level holds ${field} and data`);
    return flattenNested(level.data as unknown[], rest, { ...outer, [field]: level[field] });
  });
}

export interface ReportRun {
  reportId: string;
  /** The POST answer. */
  created: JsonResponse<any>;
  /** Page 0 once final. */
  first: JsonResponse<any>;
  pages: JsonResponse<any>[];
  /** Every item of every page in order; component items flattened out of their nesting. */
  items: Item[];
}

/** Creates a report, expects 202, waits for it to finish and reads all its items. */
export async function runReport(service: RunningService, family: Family, body: Record<string, unknown>, expectedState = 'SUCCEEDED'): Promise<ReportRun> {
  const created = await createReport(service, family, body);
  assert.equal(created.status, 202, `POST ${family} ${JSON.stringify(body)}: ${created.text}`);
  const reportId = created.body.reportId as string;
  const first = await waitFinal(service, family, reportId);
  assert.equal(first.body.state, expectedState, `state of ${family} ${JSON.stringify(body)}: ${first.text.slice(0, 2000)}`);
  const pages = await readPages(service, family, reportId);
  const groupBy = family === 'component' ? ((body.groupBy as string[] | undefined) ?? []) : [];
  const items = pages.flatMap((page) => flattenNested(page.body.data, groupBy));
  assert.equal(items.length, first.body.totalCount, 'totalCount counts the items of all pages');
  return { reportId, created, first, pages, items };
}

/** JVM and code reports: ISO 8601 UTC with milliseconds (decisions §6). */
export const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export const iso = (time: number): string => new Date(time).toISOString();
