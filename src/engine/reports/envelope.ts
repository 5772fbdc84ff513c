// The report envelopes of interface §2.3 per family: what POST, GET and the list return around the data.
import { pack } from 'msgpackr';
import { ApiError } from '../../errors.ts';
import { isoTime } from '../../iso-time.ts';
import type { ReportMeta } from './report-types.ts';

/** decisions §9: no population was counted yet (PROCESSING) or at all (FAILED). */
const NO_SUMMARY = { vmCount: 0, componentCount: 0 };

const iso = (time: number | null): string | null => (time === null ? null : isoTime(time));

/** Report times: ISO strings for JVM and code reports, epoch ms for component reports (decisions §6). */
function times(meta: ReportMeta): Record<string, unknown> {
  if (meta.family === 'component') return { requestTime: meta.requestTime, startTime: meta.startTime, finishTime: meta.finishTime };
  return { requestTime: iso(meta.requestTime), startTime: iso(meta.startTime), finishTime: iso(meta.finishTime) };
}

function paramsField(meta: ReportMeta): Record<string, unknown> {
  return meta.family === 'component' ? { parameters: meta.params } : { params: meta.params };
}

/** The POST answer: state PROCESSING and the echo of the request. */
export function creationBody(meta: ReportMeta): Record<string, unknown> {
  const body: Record<string, unknown> = { reportId: meta.reportId, state: meta.state, userId: meta.userId, ...paramsField(meta), requestTime: times(meta).requestTime };
  if (meta.family !== 'component') body.stateMessages = meta.stateMessages;
  if (meta.reportName !== null) body.reportName = meta.reportName;
  return body;
}

/** One item of a report list. */
export function listItem(meta: ReportMeta): Record<string, unknown> {
  const item: Record<string, unknown> = { reportId: meta.reportId, state: meta.state };
  if (meta.family === 'component') item.summary = meta.summary ?? NO_SUMMARY;
  else item.stateMessages = meta.stateMessages;
  Object.assign(item, { userId: meta.userId, ...paramsField(meta), ...times(meta) });
  if (meta.reportName !== null) item.reportName = meta.reportName;
  return item;
}

/** Every envelope field of a GET page but `data`, in the order they are written. */
export function pageEnvelope(meta: ReportMeta, page: number, afterToken: string | null): [string, unknown][] {
  const fields: [string, unknown][] = [['reportId', meta.reportId], ['state', meta.state]];
  if (meta.reportName !== null) fields.push(['reportName', meta.reportName]);
  if (meta.family === 'component') {
    fields.push(['summary', meta.summary ?? NO_SUMMARY], ['errors', meta.errors]);
  } else {
    fields.push(['stateMessages', meta.stateMessages]);
    if (meta.errors.length > 0) fields.push(['errors', meta.errors]);
  }
  fields.push(['userId', meta.userId], ...Object.entries(paramsField(meta)), ...Object.entries(times(meta)));
  if (meta.family !== 'component') fields.push(['from', iso(meta.request.from)], ['to', iso(meta.request.to ?? meta.request.now)]);
  fields.push(['totalCount', meta.totalCount], ['totalPages', meta.totalPages], ['page', page]);
  if (afterToken !== null) fields.push(['afterToken', afterToken]);
  return fields;
}

const EMPTY_DATA = Buffer.from('[]');

/** A page as JSON: the envelope with the stored JSON of the page's items spliced in unchanged. */
export function pageJson(fields: readonly [string, unknown][], storedData: Uint8Array = EMPTY_DATA): Buffer {
  const envelope = JSON.stringify(Object.fromEntries(fields));
  return Buffer.concat([Buffer.from(`${envelope.slice(0, -1)},"data":`), storedData, Buffer.from('}')]);
}

/** A page as msgpack: the envelope's map with the stored data bytes spliced in unchanged. */
export function pageMsgpack(fields: readonly [string, unknown][], storedData: Buffer): Buffer {
  const header = Buffer.alloc(3);
  header[0] = 0xde; // map16
  header.writeUInt16BE(fields.length + 1, 1);
  const parts: Buffer[] = [header];
  for (const [key, value] of fields) parts.push(pack(key), pack(value));
  parts.push(pack('data'), storedData);
  return Buffer.concat(parts);
}

/**
 * JSON bytes of the envelope around a page, as an upper bound: the report's final state, messages and
 * errors are known when pages are written; counts, page numbers, the token, finishTime and the summary
 * take their widest values.
 */
export function envelopeReserve(meta: ReportMeta): number {
  const widest = 1e12;
  const fields = pageEnvelope(
    { ...meta, totalCount: widest, totalPages: widest, finishTime: 9_999_999_999_999, summary: meta.family === 'component' ? { vmCount: widest, componentCount: widest } : meta.summary },
    widest,
    afterTokenFor(meta.reportId, widest),
  );
  return pageJson(fields).length;
}

export function afterTokenFor(reportId: string, page: number): string {
  return Buffer.from(JSON.stringify({ r: reportId, p: page })).toString('base64url');
}

/** The page an afterToken points to; 400 when it is not a token of this report. */
export function pageOfAfterToken(reportId: string, token: string): number {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    decoded = null;
  }
  const value = decoded as { r?: unknown; p?: unknown } | null;
  if (value === null || typeof value !== 'object' || value.r !== reportId || typeof value.p !== 'number' || !Number.isSafeInteger(value.p) || value.p < 0) {
    throw new ApiError('BAD_AFTER_TOKEN', 'afterToken is not a token of this report; use the afterToken of the previous page', [{ parameter: 'afterToken' }]);
  }
  return value.p;
}
