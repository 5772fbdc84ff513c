// Validates a report POST body once, at the edge, into a ReportRequest (decisions §6, §7, §8, §9).
import { ApiError } from '../../errors.ts';
import { codeInventoryFields, componentFields, jvmInventoryFields } from '../../parser/fields.ts';
import type { FieldCatalog } from '../../parser/fields.ts';
import { compileFilter } from '../../parser/filter.ts';
import { parseGroupBy, parseSortBy } from '../../parser/group-sort.ts';
import { resolveTime } from '../../parser/time.ts';
import type { ReportFamily, ReportRequest } from './report-types.ts';

const BODY_FIELDS: Record<ReportFamily, readonly string[]> = {
  jvmInventory: ['filter', 'from', 'to', 'groupBy', 'sortBy', 'reportName'],
  codeInventory: ['filter', 'from', 'to', 'groupBy', 'sortBy', 'reportName'],
  component: ['filter', 'groupBy', 'sortBy', 'startTime', 'endTime', 'detail', 'reportName'],
};

export const CATALOGS: Record<ReportFamily, FieldCatalog> = {
  jvmInventory: jvmInventoryFields,
  codeInventory: codeInventoryFields,
  component: componentFields,
};

/** The fields of an ungrouped JVM inventory item (decisions §7). */
export const JVM_ITEM_FIELDS = ['vmId', 'hostName', 'state', 'agentVersion', 'javaVersion', 'javaVendor', 'startTime', 'lastHeardTime'] as const;
export const CODE_ITEM_FIELDS = ['sourceName', 'className', 'methodName', 'firstSeen', 'lastSeen'] as const;

/** The fields sortBy may name, given the groupBy fields (decisions §6.3, §7, §8, §9). */
export function sortableFields(family: ReportFamily, groupBy: readonly string[]): string[] {
  if (family === 'component') return [...groupBy, 'componentName', 'componentVersion', 'count'];
  if (family === 'jvmInventory') return groupBy.length > 0 ? [...groupBy, 'count'] : [...JVM_ITEM_FIELDS, 'tags.<key>'];
  return groupBy.length > 0 ? [...groupBy, 'firstSeen', 'lastSeen', 'count'] : [...CODE_ITEM_FIELDS];
}

function stringArray(body: Record<string, unknown>, field: string): string[] {
  const value = body[field];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((entry) => typeof entry !== 'string')) {
    throw new ApiError('BAD_REQUEST', `'${field}' must be an array of strings`, [{ parameter: field }]);
  }
  return value as string[];
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
  const filter = stringArray(fields, 'filter');
  compileFilter(filter, catalog, now);
  const groupBy = stringArray(fields, 'groupBy');
  const groupFields = parseGroupBy(groupBy, catalog).map((field) => field.name);
  const sortBy = stringArray(fields, 'sortBy');
  parseSortBy(sortBy, sortableFields(family, groupFields));

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
    request: { family, filter, groupBy: groupFields, sortBy, from, to, detail: fields.detail === true, now, offlineAfterMs },
    reportName: typeof reportName === 'string' ? reportName : null,
    params,
  };
}
