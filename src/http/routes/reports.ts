// The three report families (interface §4.3–§4.5, decisions §6): create, get a page, list, delete.
import { ApiError } from '../../errors.ts';
import { afterTokenFor, creationBody, listItem, pageEnvelope, pageJson, pageMsgpack, pageOfAfterToken } from '../../engine/reports/envelope.ts';
import { JobRefused } from '../../engine/reports/jobs.ts';
import { msgpackPage } from '../../engine/reports/pages.ts';
import type { Reports } from '../../engine/reports/jobs.ts';
import { parseReportRequest } from '../../engine/reports/report-request.ts';
import type { ReportFamily, ReportMeta, ReportState } from '../../engine/reports/report-types.ts';
import { FINAL_STATES } from '../../engine/reports/report-types.ts';
import { resolveTime } from '../../parser/time.ts';
import { readJson } from '../body.ts';
import type { ServiceContext } from '../service-context.ts';
import type { ApiRequest, ApiResponse, Route } from '../types.ts';

const FAMILIES: { family: ReportFamily; base: string; create: string }[] = [
  { family: 'jvmInventory', base: '/public/report/jvmInventory', create: '/public/report/jvmInventory' },
  { family: 'codeInventory', base: '/public/report/codeInventory', create: '/public/report/codeInventory' },
  { family: 'component', base: '/public/component/report', create: '/public/component/report/schedule' },
];

const STATES: readonly ReportState[] = ['PROCESSING', ...FINAL_STATES];

function nonNegativeInteger(request: ApiRequest, name: string, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = request.query.get(name);
  if (raw === null) return fallback;
  if (!/^\d{1,15}$/.test(raw)) throw new ApiError('BAD_PARAMETER', `'${name}' must be a whole number ≥ 0`, [{ parameter: name, text: raw }]);
  return Math.min(Number(raw), max);
}

function reportNotFound(family: ReportFamily, reportId: string): ApiError {
  return new ApiError('REPORT_NOT_FOUND', `no ${family} report with id '${reportId.slice(0, 64)}'`);
}

/** decisions §6: a refused job is a 503 while stopping, a 429 when the queue is full. */
async function queue(jobs: Reports, family: ReportFamily, parsed: ReturnType<typeof parseReportRequest>, userId: string): Promise<ReportMeta> {
  try {
    return await jobs.create(family, parsed, userId);
  } catch (error) {
    if (!(error instanceof JobRefused)) throw error;
    if (error.reason === 'full') throw new ApiError('QUEUE_FULL', error.message, undefined, { 'Retry-After': '5' });
    throw new ApiError('NOT_READY', error.message, undefined, { 'Retry-After': '1' });
  }
}

async function getPage(context: ServiceContext, jobs: Reports, family: ReportFamily, request: ApiRequest): Promise<ApiResponse> {
  const meta = jobs.find(request.params.reportId, family);
  if (meta === undefined) throw reportNotFound(family, request.params.reportId);
  const token = request.query.get('afterToken');
  if (token !== null && request.query.get('page') !== null) throw new ApiError('BAD_PARAMETER', "give 'page' or 'afterToken', not both");
  const page = token !== null ? pageOfAfterToken(meta.reportId, token) : nonNegativeInteger(request, 'page', 0);
  const wantsMsgpack = (request.headers.accept ?? '').includes('application/msgpack');
  if (meta.state === 'PROCESSING') {
    // decisions §6: while PROCESSING, 200 with no data and no pages yet.
    const fields = pageEnvelope({ ...meta, totalPages: 0 }, page, null);
    return wantsMsgpack ? { status: 200, raw: pageMsgpack(fields, Buffer.from([0x90])), contentType: 'application/msgpack' } : { status: 200, raw: pageJson(fields), contentType: 'application/json' };
  }
  if (page >= meta.totalPages) throw new ApiError('PAGE_NOT_FOUND', `report '${meta.reportId}' has ${meta.totalPages} page(s), numbered from 0; there is no page ${page}`);
  const stored = wantsMsgpack ? await msgpackPage(context.store, meta.reportId, page) : await context.store.pageFiles.json(meta.reportId, page);
  if (stored === undefined) throw new ApiError('PAGE_NOT_FOUND', `page ${page} of report '${meta.reportId}' is gone`);
  const fields = pageEnvelope(meta, page, page + 1 < meta.totalPages ? afterTokenFor(meta.reportId, page + 1) : null);
  if (wantsMsgpack) return { status: 200, raw: pageMsgpack(fields, stored), contentType: 'application/msgpack' };
  return { status: 200, raw: pageJson(fields, stored), contentType: 'application/json' };
}

interface ListCursor {
  t: number;
  id: string;
}

function listReports(jobs: Reports, family: ReportFamily, request: ApiRequest, now: number): ApiResponse {
  const limit = nonNegativeInteger(request, 'limit', 100, 1000);
  if (limit < 1) throw new ApiError('BAD_PARAMETER', "'limit' must be at least 1", [{ parameter: 'limit' }]);
  const userId = request.query.get('userId');
  const name = request.query.get('reportName');
  const state = request.query.get('state');
  if (state !== null && !STATES.includes(state as ReportState)) throw new ApiError('BAD_PARAMETER', `'state' must be one of ${STATES.join(', ')}`, [{ parameter: 'state', text: state }]);
  const fromRaw = request.query.get('from');
  const toRaw = request.query.get('to');
  const from = fromRaw === null ? -Infinity : resolveTime(fromRaw, 'open', now, 'from');
  const to = toRaw === null ? Infinity : resolveTime(toRaw, 'close', now, 'to');
  const tokenRaw = request.query.get('afterToken');
  let cursor: ListCursor | null = null;
  if (tokenRaw !== null) {
    try {
      cursor = JSON.parse(Buffer.from(tokenRaw, 'base64url').toString('utf8')) as ListCursor;
      if (typeof cursor.t !== 'number' || typeof cursor.id !== 'string') throw new Error('bad cursor');
    } catch {
      throw new ApiError('BAD_AFTER_TOKEN', 'afterToken is not a token of this list', [{ parameter: 'afterToken' }]);
    }
  }
  // Newest first; ties by reportId so the order is total and the cursor exact.
  const newestFirst = (a: ReportMeta, b: ReportMeta) => b.requestTime - a.requestTime || (a.reportId < b.reportId ? -1 : a.reportId > b.reportId ? 1 : 0);
  const after = (meta: ReportMeta) => cursor === null || meta.requestTime < cursor.t || (meta.requestTime === cursor.t && meta.reportId > cursor.id);
  const matching = jobs
    .list(family)
    .filter((meta) => (userId === null || meta.userId === userId) && (name === null || (meta.reportName ?? '').includes(name)) && (state === null || meta.state === state))
    .filter((meta) => meta.requestTime >= from && meta.requestTime <= to && after(meta))
    .sort(newestFirst);
  const page = matching.slice(0, limit);
  const body: Record<string, unknown> = { data: page.map(listItem) };
  if (matching.length > limit) {
    const last = page[page.length - 1];
    body.afterToken = Buffer.from(JSON.stringify({ t: last.requestTime, id: last.reportId })).toString('base64url');
  }
  return { status: 200, body };
}

export function reportRoutes(context: ServiceContext, jobs: Reports): Route[] {
  const routes: Route[] = [];
  for (const { family, base, create } of FAMILIES) {
    routes.push(
      {
        method: 'POST',
        pattern: create,
        scope: 'write',
        needsReady: true,
        handler: async (request) => {
          const parsed = parseReportRequest(family, readJson(request), context.clock(), context.config.offlineAfterMs);
          const meta = await queue(jobs, family, parsed, request.principal!.userId);
          return { status: 202, body: creationBody(meta), headers: { Location: `${base}/${meta.reportId}` } };
        },
      },
      { method: 'GET', pattern: `${base}/:reportId`, scope: 'read', needsReady: true, handler: (request) => getPage(context, jobs, family, request) },
      { method: 'GET', pattern: base, scope: 'read', needsReady: true, handler: (request) => listReports(jobs, family, request, context.clock()) },
      {
        method: 'DELETE',
        pattern: `${base}/:reportId`,
        scope: 'write',
        needsReady: true,
        handler: async (request) => {
          if (!(await jobs.delete(request.params.reportId, family))) throw reportNotFound(family, request.params.reportId);
          return { status: 204 };
        },
      },
    );
  }
  return routes;
}
