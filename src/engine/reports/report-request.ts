// Validates a report POST body once, at the edge, into a ReportRequest (decisions §6, §7, §8, §9).
import { ApiError } from '../../errors.ts';
import { planFilter } from '../../parser/filter.ts';
import { parseGroupBy, parseSortBy } from '../../parser/group-sort.ts';
import { resolveTime } from '../../parser/time.ts';
import { CATALOGS, sortableFields } from './family-fields.ts';
import type { ReportFamily, ReportRequest } from './report-types.ts';

const BODY_FIELDS: Record<ReportFamily, readonly string[]> = {
  jvmInventory: ['filter', 'from', 'to', 'groupBy', 'sortBy', 'reportName'],
  codeInventory: ['filter', 'from', 'to', 'groupBy', 'sortBy', 'reportName'],
  component: ['filter', 'groupBy', 'sortBy', 'startTime', 'endTime', 'detail', 'reportName'],
};

function stringArray(body: Record<string, unknown>, field: string): string[] {
  const value = body[field];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((entry) => typeof entry !== 'string')) {
    throw new ApiError('BAD_REQUEST', `'${field}' must be an array of strings`, [{ parameter: field }]);
  }
  return value as string[];
}

/**
 * A request stored by a version before the plan (filter and sortBy kept as text), planned now: a report
 * left PROCESSING across an upgrade re-runs like any other. Parses, so only the job queue's start calls it.
 */
export function plannedRequest(request: ReportRequest): ReportRequest {
  const legacy = request as unknown as { filter?: unknown; sortBy: unknown[] };
  if (Array.isArray(request.conditions) && legacy.sortBy.every((key) => typeof key === 'object')) return request;
  const { filter, ...rest } = legacy as ReportRequest & { filter?: unknown };
  return {
    ...rest,
    conditions: planFilter(filter ?? [], CATALOGS[request.family], request.now),
    sortBy: parseSortBy(legacy.sortBy, sortableFields(request.family, request.groupBy)),
  };
}

export interface ParsedReportRequest {
  request: ReportRequest;
  reportName: string | null;
  /** The body echoed back with the resolved times (decisions §6). */
  params: Record<string, unknown>;
}

export function parseReportRequest(family: ReportFamily, body: unknown, now: number, offlineAfterMs: number): ParsedReportRequest {
  if (body === undefined) body = {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ApiError('BAD_REQUEST', 'the body must be a JSON object');
  const fields = body as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (!BODY_FIELDS[family].includes(key)) {
      throw new ApiError('UNKNOWN_FIELD', `unknown field '${key}'; fields: ${BODY_FIELDS[family].join(', ')}`, [{ parameter: key, expected: BODY_FIELDS[family] }]);
    }
  }
  const reportName = fields.reportName;
  if (reportName !== undefined && reportName !== null && typeof reportName !== 'string') throw new ApiError('BAD_REQUEST', "'reportName' must be a string");
  if (fields.detail !== undefined && typeof fields.detail !== 'boolean') throw new ApiError('BAD_REQUEST', "'detail' must be a boolean");

  const catalog = CATALOGS[family];
  const conditions = planFilter(stringArray(fields, 'filter'), catalog, now);
  const groupFields = parseGroupBy(stringArray(fields, 'groupBy'), catalog).map((field) => field.name);
  const sortBy = parseSortBy(stringArray(fields, 'sortBy'), sortableFields(family, groupFields));

  let from: number;
  let to: number | null;
  const params: Record<string, unknown> = { ...fields };
  if (family === 'component') {
    from = resolveTime(fields.startTime ?? '3m', 'open', now, 'startTime');
    to = fields.endTime === undefined || fields.endTime === null ? null : resolveTime(fields.endTime, 'close', now, 'endTime');
    params.resolvedStartTime = from;
    params.resolvedEndTime = to;
  } else {
    from = resolveTime(fields.from ?? '30d', 'open', now, 'from');
    to = fields.to === undefined || fields.to === null ? now : resolveTime(fields.to, 'close', now, 'to');
    params.resolvedFrom = new Date(from).toISOString();
    params.resolvedTo = new Date(to).toISOString();
  }
  if (to !== null && from > to) {
    throw new ApiError('BAD_TIME', `the window is empty: ${family === 'component' ? 'startTime' : 'from'} is after ${family === 'component' ? 'endTime' : 'to'}`, [
      { parameter: family === 'component' ? 'startTime' : 'from', from: new Date(from).toISOString(), to: new Date(to).toISOString() },
    ]);
  }
  return {
    request: { family, conditions, groupBy: groupFields, sortBy, from, to, detail: fields.detail === true, now, offlineAfterMs },
    reportName: typeof reportName === 'string' ? reportName : null,
    params,
  };
}
