// GET /public/cve/events (interface §4.6, decisions §11): detected CVEs per component per VM, keyset-paged;
// GET /public/cve/summary: each CVE of the selected VMs once, with its USED and PRESENT VM counts.
import { ApiError } from '../../errors.ts';
import { COUNT_CAP } from '../../engine/cve/events-index.ts';
import type { CveCursor, CveEventFilter, CveIndex } from '../../engine/cve/events-index.ts';
import { eventsPage } from '../../engine/cve/event-items.ts';
import { responseBuffer } from '../server.ts';
import { resolveTime } from '../../parser/time.ts';
import { severityBand } from '../../vuln/cvss.ts';
import type { ServiceContext } from '../service-context.ts';
import type { ApiRequest, Route } from '../types.ts';

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;
const PARAMETERS = ['hostName', 'vmId', 'cveId', 'startTime', 'endTime', 'cveAnalysisStartTime', 'cveAnalysisEndTime', 'afterToken', 'limit', 'showNotImpacted'];
/** The summary selects VMs only: by host, tags and times. */
const SUMMARY_PARAMETERS = ['hostName', 'startTime', 'endTime'];

function parseCursor(token: string): CveCursor {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    value = null;
  }
  const valid = Array.isArray(value) && value.length === 4 && value.slice(0, 3).every((v) => typeof v === 'string') && (value[3] === null || typeof value[3] === 'string');
  if (!valid) throw new ApiError('BAD_AFTER_TOKEN', 'afterToken is not a token of this query; use the afterToken of the previous page', [{ parameter: 'afterToken' }]);
  return value as CveCursor;
}

function parseQuery(request: ApiRequest, now: number, parameters: readonly string[] = PARAMETERS): { filter: CveEventFilter; cursor: CveCursor | null; limit: number; warnings: string[] } {
  const query = request.query;
  const warnings: string[] = [];
  const tags: [string, string][] = [];
  for (const [name, value] of query) {
    if (name.startsWith('tags.') && name.length > 5) tags.push([name.slice(5), value]);
    else if (!parameters.includes(name)) throw new ApiError('BAD_PARAMETER', `unknown parameter '${name}'; parameters: ${parameters.join(', ')}, tags.<key>`, [{ parameter: name }]);
  }
  const time = (name: string, role: 'open' | 'close'): number | null => {
    const raw = query.get(name);
    return raw === null ? null : resolveTime(raw, role, now, name);
  };
  const rawLimit = query.get('limit');
  let limit = DEFAULT_LIMIT;
  if (rawLimit !== null) {
    if (!/^\d+$/.test(rawLimit) || Number(rawLimit) < 1) throw new ApiError('BAD_PARAMETER', `'limit' must be a whole number of at least 1, not '${rawLimit}'`, [{ parameter: 'limit', text: rawLimit }]);
    limit = Number(rawLimit);
    if (limit > MAX_LIMIT) {
      warnings.push(`limit ${limit} was lowered to the maximum, ${MAX_LIMIT}`);
      limit = MAX_LIMIT;
    }
  }
  const rawShow = query.get('showNotImpacted');
  if (rawShow !== null && rawShow !== 'true' && rawShow !== 'false') throw new ApiError('BAD_PARAMETER', "'showNotImpacted' must be true or false", [{ parameter: 'showNotImpacted', text: rawShow }]);
  const token = query.get('afterToken');
  return {
    filter: {
      vmId: query.get('vmId'),
      hostName: query.get('hostName'),
      tags,
      startTime: time('startTime', 'open'),
      endTime: time('endTime', 'close'),
      analysisFrom: time('cveAnalysisStartTime', 'open'),
      analysisTo: time('cveAnalysisEndTime', 'close'),
      cveId: query.get('cveId'),
      showNotImpacted: rawShow === 'true',
    },
    cursor: token === null || token === '' ? null : parseCursor(token),
    limit,
    warnings,
  };
}

/** The route reads only the context's clock. */
export function cveRoutes(context: Pick<ServiceContext, 'clock'>, index: CveIndex): Route[] {
  return [
    {
      method: 'GET',
      pattern: '/public/cve/events',
      scope: 'read',
      needsReady: true,
      handler: (request) => {
        const { filter, cursor, limit, warnings } = parseQuery(request, context.clock());
        const { items, last, hasNext, totalCount, capped } = index.query(filter, cursor, limit);
        if (capped) warnings.push(`the exact count is unknown and not less than ${COUNT_CAP}`);
        const afterToken = hasNext ? Buffer.from(JSON.stringify(last)).toString('base64url') : undefined;
        // Items come encoded from the index: the body is joined, not serialised again.
        return { status: 200, raw: eventsPage(limit, afterToken, items, warnings, totalCount, hasNext, responseBuffer), contentType: 'application/json' };
      },
    },
    {
      method: 'GET',
      pattern: '/public/cve/summary',
      scope: 'read',
      needsReady: true,
      handler: (request) => {
        const { filter } = parseQuery(request, context.clock(), SUMMARY_PARAMETERS);
        const { items, vmCount } = index.summary(filter);
        const data = items.map((item) => ({ ...item, severity: severityBand(item.score) }));
        return { status: 200, body: { data, summary: { vmCount, cveCount: data.length } } };
      },
    },
  ];
}
