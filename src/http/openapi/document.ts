// The OpenAPI 3.1 document of the service (GET /public/openapi.json): every route of both listeners, its
// parameters, body and each status it answers. Error responses come from the error registry: an operation
// names the codes it can give, and their statuses and descriptions are the registry's.
import { ERROR_CODES } from '../../errors.ts';
import type { ErrorCode } from '../../errors.ts';
import { CONSISTENCIES } from '../types.ts';
import { SCHEMAS } from './schemas.ts';
import type { Schema } from './schemas.ts';

type Json = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

/** Every route behind a key can answer these. */
const KEYED: ErrorCode[] = ['UNAUTHORIZED', 'FORBIDDEN', 'NOT_READY', 'CLUSTER_UNAVAILABLE'];
/** A route that reads a JSON body can also answer these. */
const BODY: ErrorCode[] = ['MALFORMED_JSON', 'MALFORMED_BODY', 'BAD_REQUEST', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'];
/** A route that writes can also find storage full. */
const WRITE: ErrorCode[] = ['INSUFFICIENT_STORAGE'];

interface Operation {
  summary: string;
  tags: string[];
  scope?: 'read' | 'write' | 'ingest';
  parameters?: Json[];
  body?: { schema: Schema; example: unknown; contentTypes?: string[] };
  /** Success status → schema (null: no body), with an example. */
  success: Record<number, { description: string; schema: Schema | null; example?: unknown; contentType?: string; alsoAs?: string[] }>;
  errors: ErrorCode[];
  /** The gateway's paths are served on their own port. */
  gateway?: boolean;
}

const pathParameter = (name: string, description: string): Json => ({ name, in: 'path', required: true, schema: { type: 'string' }, description });
const queryParameter = (name: string, description: string, schema: Schema = { type: 'string' }): Json => ({ name, in: 'query', required: false, schema, description });
const VM_ID = pathParameter('vmId', 'the VM id the agent reported');
const REPORT_ID = pathParameter('reportId', 'the id the report was created with');
const PAGE_QUERY = [queryParameter('page', '0-based page number (default 0)', { type: 'integer', minimum: 0 }), queryParameter('afterToken', 'the afterToken of the previous page')];
const LIST_QUERY = [
  queryParameter('userId', 'reports of this user'),
  queryParameter('reportName', 'names containing this text'),
  queryParameter('state', 'reports in this state'),
  queryParameter('from', 'requested at or after (time expression)'),
  queryParameter('to', 'requested at or before (time expression)'),
  queryParameter('limit', 'at most this many (default 100, at most 1,000)', { type: 'integer', minimum: 1 }),
  queryParameter('afterToken', 'the afterToken of the previous list page'),
];
const TAG_QUERY = { name: 'tags', in: 'query', required: false, style: 'form', explode: true, schema: { type: 'object', additionalProperties: { type: 'string' } }, description: '`tags.K=V` (one parameter per tag key): VMs with that tag value' };
const SAMPLE_VM = '005bcfe9-4153-4131-929f-09ee5516f926';
const SAMPLE_REPORT = '8b8f6a82-f5c5-4954-b215-551ddfd96078';
const SAMPLE_TIME = 1795539159576;

/** Examples taken from a running service (interface §2): what each family's POST and GET answer. */
const EXAMPLES = {
  vm: {
    vmId: SAMPLE_VM, agentVersion: '1.5.1', agentRevision: 'a1b2c3d',
    inventory: {
      systemProperties: { 'java.version': '11.0.22', 'java.runtime.version': '11.0.22+7-LTS', 'java.vm.vendor': 'Azul Systems, Inc.' },
      hostName: 'checkout-eu-west-1-0282', osEnvironment: {}, mainMethod: 'com.acme.checkout.Main',
      cpuInfo: { 'Number of Processors': 4, 'Number of Assigned Logical Cores': 4, 'CPU Vendor': 'GenuineIntel', 'CPU Model Name': 'Intel(R) Xeon(R)', 'Number of Physical Cores': 2 },
    },
    startTime: 1794226135086, lastHeardTime: 1795535702230, mailbox: 'mailbox-eu-west-1', state: 'RUNNING',
    jvmInfo: { vmName: 'OpenJDK 64-Bit Server VM' }, tags: { AppEnv: 'checkout', env: 'prod' },
  },
  Jvm: {
    created: { reportId: SAMPLE_REPORT, state: 'PROCESSING', userId: 'admin', params: { groupBy: ['state'], resolvedFrom: '2026-10-25T00:00:00.000Z', resolvedTo: '2026-11-24T16:52:36.519Z' }, requestTime: '2026-11-24T16:52:36.519Z', stateMessages: ['report generation is queued'] },
    page: {
      reportId: SAMPLE_REPORT, state: 'SUCCEEDED', stateMessages: ['report generated'], userId: 'admin', params: { groupBy: ['state'] },
      requestTime: '2026-11-24T16:52:36.519Z', startTime: '2026-11-24T16:52:36.522Z', finishTime: '2026-11-24T16:52:36.540Z',
      from: '2026-10-25T00:00:00.000Z', to: '2026-11-24T16:52:36.519Z', totalCount: 2, totalPages: 1, page: 0,
      data: [{ state: 'RUNNING', count: 275 }, { state: 'TERMINATED', count: 25 }],
    },
  },
  Code: {
    created: { reportId: SAMPLE_REPORT, state: 'PROCESSING', userId: 'admin', params: { groupBy: ['sourceName'] }, requestTime: '2026-11-24T16:52:37.977Z', stateMessages: ['report generation is queued'] },
    page: {
      reportId: SAMPLE_REPORT, state: 'SUCCEEDED', stateMessages: ['report generated'], userId: 'admin', params: { groupBy: ['sourceName'] },
      requestTime: '2026-11-24T16:52:37.977Z', startTime: '2026-11-24T16:52:37.978Z', finishTime: '2026-11-24T16:52:38.149Z',
      from: '2026-10-25T00:00:00.000Z', to: '2026-11-24T16:52:37.977Z', totalCount: 1, totalPages: 1, page: 0,
      data: [{ sourceName: 'log4j-core-2.14.1.jar', firstSeen: '2026-10-25T18:02:52.371', lastSeen: '2026-11-24T11:47:43.903', count: 2500 }],
    },
  },
  Component: {
    created: { reportId: SAMPLE_REPORT, state: 'PROCESSING', userId: 'admin', parameters: { groupBy: ['tags.env'], resolvedStartTime: 1787529600000, resolvedEndTime: null }, requestTime: SAMPLE_TIME },
    page: {
      reportId: SAMPLE_REPORT, state: 'SUCCEEDED', summary: { vmCount: 300, componentCount: 109 }, errors: [], userId: 'admin',
      parameters: { groupBy: ['tags.env'], resolvedStartTime: 1787529600000, resolvedEndTime: null }, requestTime: SAMPLE_TIME, startTime: SAMPLE_TIME + 1, finishTime: SAMPLE_TIME + 34,
      totalCount: 1, totalPages: 1, page: 0,
      data: [{ 'tags.env': 'prod', data: [{ 'tags.env': 'prod', componentName: 'log4j-core', componentVersion: '2.14.1', count: 3 }] }],
    },
  },
  cvePage: {
    limit: 1, afterToken: 'WyIwMDViY2ZlOS00MTUzIl0',
    data: [{ componentName: 'log4j-core', componentVersion: '2.14.1', cveId: 'CVE-2021-44228', score: 10, cveState: 'USED', cveAnalysisTime: 1795535706248, hostName: 'checkout-eu-west-1-0282', startTime: 1794226135086, lastHeardTime: 1795535702230, vmId: SAMPLE_VM, tags: { env: 'prod' } }],
    summary: { warnings: [], totalCount: 332 }, size: 1, hasNext: true,
  },
  cveSummary: {
    data: [{ cveId: 'CVE-2021-44228', score: 10, usedVmCount: 12, presentVmCount: 3, components: [{ componentName: 'log4j-core', componentVersion: '2.14.1' }], severity: 'critical' }],
    summary: { vmCount: 300, cveCount: 1 },
  },
};

function reportFamily(name: string, family: 'Jvm' | 'Code' | 'Component', create: string, base: string, requestExample: Json): Record<string, Record<string, Operation>> {
  const tags = [`${name} reports`];
  return {
    [create]: {
      post: {
        summary: `Create a ${name} report`, tags, scope: 'write',
        body: { schema: ref(`${family}ReportRequest`), example: requestExample },
        success: { 202: { description: 'queued; Location names the report', schema: ref(`${family}ReportCreated`), example: EXAMPLES[family].created } },
        errors: [...KEYED, ...BODY, ...WRITE, 'UNKNOWN_FIELD', 'BAD_FILTER', 'BAD_GROUP_BY', 'BAD_SORT_BY', 'BAD_TIME', 'QUEUE_FULL'],
      },
      ...(create === base ? { get: listOperation(name, family, tags) } : {}),
    },
    ...(create === base ? {} : { [base]: { get: listOperation(name, family, tags) } }),
    [`${base}/{reportId}`]: {
      get: {
        summary: `Get a page of a ${name} report`, tags, scope: 'read', parameters: [REPORT_ID, ...PAGE_QUERY],
        success: { 200: { description: 'the report and one page of its items (`data: []` while PROCESSING); `Accept: application/msgpack` gives the same as MessagePack', schema: ref(`${family}Report`), example: EXAMPLES[family].page, alsoAs: ['application/msgpack'] } },
        errors: [...KEYED, 'BAD_PARAMETER', 'BAD_AFTER_TOKEN', 'REPORT_NOT_FOUND', 'PAGE_NOT_FOUND'],
      },
      delete: {
        summary: `Delete a ${name} report (cancels it while PROCESSING)`, tags, scope: 'write', parameters: [REPORT_ID],
        success: { 204: { description: 'deleted', schema: null } },
        errors: [...KEYED, ...WRITE, 'REPORT_NOT_FOUND'],
      },
    },
  };
}

function listOperation(name: string, family: 'Jvm' | 'Code' | 'Component', tags: string[]): Operation {
  return {
    summary: `List ${name} reports, newest first`, tags, scope: 'read', parameters: LIST_QUERY,
    success: { 200: { description: 'one page of the list', schema: ref(`${family}ReportList`), example: { data: [EXAMPLES[family].created] } } },
    errors: [...KEYED, 'BAD_PARAMETER', 'BAD_TIME', 'BAD_AFTER_TOKEN'],
  };
}

const OPERATIONS: Record<string, Record<string, Operation>> = {
  '/opthub-health': {
    get: {
      summary: 'Health for load balancers (on the gateway port)', tags: ['Health'], gateway: true,
      success: {
        200: { description: 'UP', schema: ref('HealthValue'), example: { healthState: 'UP', code: 200, message: 'jvmlens is ready', note: '' } },
        503: { description: 'DOWN: starting, shutting down, or storage cannot be written (the note says which)', schema: ref('HealthValue'), example: { healthState: 'DOWN', code: 503, message: 'jvmlens is not ready', note: 'starting: workers' } },
      },
      // The gateway's routes are not served on the API port: there they are 404 NOT_FOUND.
      errors: ['NOT_FOUND'],
    },
  },
  '/agent/v1/events': {
    post: {
      summary: 'Ingest a batch of agent events (on the gateway port)', tags: ['Agents'], scope: 'ingest', gateway: true,
      body: { schema: ref('AgentEvents'), example: [{ type: 'vm.heartbeat', vmId: SAMPLE_VM, time: 1795535702230 }], contentTypes: ['application/json', 'application/x-ndjson', 'application/msgpack'] },
      success: { 200: { description: 'stored durably', schema: ref('Accepted'), example: { accepted: 1 } } },
      errors: [...KEYED, ...BODY, ...WRITE, 'INVALID_EVENTS', 'UNKNOWN_VM', 'NOT_FOUND'],
    },
  },
  '/metrics': {
    get: {
      summary: 'Prometheus metrics (on the gateway port)', tags: ['Health'], gateway: true,
      success: { 200: { description: 'Prometheus text format', schema: { type: 'string' }, contentType: 'text/plain; version=0.0.4' } },
      errors: ['NOT_FOUND'],
    },
  },
  '/public/instance/{vmId}': {
    get: {
      summary: 'A VM instance', tags: ['Explorer'], scope: 'read', parameters: [VM_ID],
      success: { 200: { description: 'the VM (interface §2.2) with its tags', schema: ref('VmInstance'), example: EXAMPLES.vm } },
      errors: [...KEYED, 'VM_NOT_FOUND'],
    },
  },
  '/public/instance/{vmId}/annotations': {
    get: {
      summary: "A VM's annotations", tags: ['Explorer'], scope: 'read', parameters: [VM_ID],
      success: { 200: { description: 'annotations, by key', schema: { type: 'array', items: ref('Annotation') }, example: [{ key: 'jvmlens.lastStart', value: '2026-11-09T12:08:55.086Z', time: 1794226135086 }] } },
      errors: [...KEYED, 'VM_NOT_FOUND'],
    },
  },
  '/public/instance/{vmId}/tags': {
    get: {
      summary: "A VM's tags", tags: ['Explorer'], scope: 'read', parameters: [VM_ID],
      success: { 200: { description: 'tags by key', schema: ref('Tags'), example: [{ key: 'env', value: 'prod' }] } },
      errors: [...KEYED, 'VM_NOT_FOUND'],
    },
    post: {
      summary: 'Add or change one tag', tags: ['Explorer'], scope: 'write', parameters: [VM_ID],
      body: { schema: ref('Tag'), example: { key: 'team', value: 'payments' } },
      success: { 200: { description: 'all tags after the change', schema: ref('Tags') } },
      errors: [...KEYED, ...BODY, ...WRITE, 'BAD_TAGS', 'VM_NOT_FOUND'],
    },
    put: {
      summary: 'Replace all tags', tags: ['Explorer'], scope: 'write', parameters: [VM_ID],
      body: { schema: ref('Tags'), example: [{ key: 'env', value: 'prod' }] },
      success: { 200: { description: 'the tags now', schema: ref('Tags') } },
      errors: [...KEYED, ...BODY, ...WRITE, 'BAD_TAGS', 'VM_NOT_FOUND'],
    },
    delete: {
      summary: 'Delete all tags', tags: ['Explorer'], scope: 'write', parameters: [VM_ID],
      success: { 204: { description: 'deleted', schema: null } },
      errors: [...KEYED, ...WRITE, 'VM_NOT_FOUND'],
    },
  },
  '/public/instance/{vmId}/tags/{tag}': {
    delete: {
      summary: 'Delete one tag', tags: ['Explorer'], scope: 'write', parameters: [VM_ID, pathParameter('tag', 'the tag key')],
      success: { 204: { description: 'deleted', schema: null } },
      errors: [...KEYED, ...WRITE, 'VM_NOT_FOUND', 'TAG_NOT_FOUND'],
    },
  },
  '/public/instance/{vmId}/sbom': {
    get: {
      summary: "A VM's CycloneDX 1.6 SBOM with runtime VEX", tags: ['SBOM'], scope: 'read', parameters: [VM_ID],
      success: { 200: { description: 'USED components in_triage, PRESENT ones not_affected (code_not_reachable)', schema: ref('CycloneDx'), contentType: 'application/vnd.cyclonedx+json; version=1.6' } },
      errors: [...KEYED, 'VM_NOT_FOUND'],
    },
  },
  '/public/sbom': {
    get: {
      summary: 'One CycloneDX 1.6 SBOM of the VMs a selection matches', tags: ['SBOM'], scope: 'read',
      parameters: [queryParameter('AppEnv', 'VMs of this AppEnv'), TAG_QUERY],
      success: { 200: { description: 'components de-duplicated, with VM counts', schema: ref('CycloneDx'), contentType: 'application/vnd.cyclonedx+json; version=1.6' } },
      errors: [...KEYED, 'BAD_PARAMETER'],
    },
  },
  ...reportFamily('JVM inventory', 'Jvm', '/public/report/jvmInventory', '/public/report/jvmInventory', { filter: ["tags.env = 'prod'"], groupBy: ['javaVendor', 'javaVersion'], from: '30d' }),
  ...reportFamily('code inventory', 'Code', '/public/report/codeInventory', '/public/report/codeInventory', { filter: ['sourceName:log4j-core'], groupBy: ['sourceName', 'className'], from: '90d' }),
  ...reportFamily('component inventory', 'Component', '/public/component/report/schedule', '/public/component/report', { filter: ["componentName = 'log4j-core'"], groupBy: ['tags.env'] }),
  '/public/cve/events': {
    get: {
      summary: 'Detected CVEs per component per VM, keyset-paged', tags: ['CVE events'], scope: 'read',
      parameters: [
        queryParameter('hostName', 'VMs on this host'),
        queryParameter('vmId', 'this VM'),
        queryParameter('cveId', 'the items of this CVE only'),
        queryParameter('startTime', 'VMs started at or after (time expression)'),
        queryParameter('endTime', 'VMs last heard at or before'),
        queryParameter('cveAnalysisStartTime', 'CVEs analysed at or after'),
        queryParameter('cveAnalysisEndTime', 'CVEs analysed at or before'),
        queryParameter('afterToken', 'the afterToken of the previous page'),
        queryParameter('limit', 'items per page (default 100, at most 1,000)', { type: 'integer', minimum: 1 }),
        queryParameter('showNotImpacted', 'also components without CVEs', { type: 'boolean' }),
        TAG_QUERY,
      ],
      success: { 200: { description: 'one page (interface §2.5)', schema: ref('CveEventsPage'), example: EXAMPLES.cvePage } },
      errors: [...KEYED, 'BAD_PARAMETER', 'BAD_TIME', 'BAD_AFTER_TOKEN'],
    },
  },
  '/public/cve/summary': {
    get: {
      summary: 'Every CVE of the selected VMs once, highest score first, with how many VMs loaded its code (USED) or only carry it (PRESENT)', tags: ['CVE events'], scope: 'read',
      parameters: [
        queryParameter('hostName', 'VMs on this host'),
        queryParameter('startTime', 'VMs started at or after (time expression)'),
        queryParameter('endTime', 'VMs last heard at or before'),
        TAG_QUERY,
      ],
      success: { 200: { description: 'the CVEs and the number of VMs selected', schema: ref('CveSummary'), example: EXAMPLES.cveSummary } },
      errors: [...KEYED, 'BAD_PARAMETER', 'BAD_TIME'],
    },
  },
  '/public/me': {
    get: {
      summary: 'The user and scopes of the key that asks', tags: ['Explorer'], scope: 'read',
      success: { 200: { description: 'the key\'s user and scopes', schema: ref('Me'), example: { userId: 'admin', scopes: ['read', 'write', 'ingest'] } } },
      errors: KEYED,
    },
  },
  '/public/openapi.json': {
    get: {
      summary: 'This document', tags: ['Documentation'],
      success: { 200: { description: 'OpenAPI 3.1', schema: { type: 'object' } } },
      errors: [],
    },
  },
  '/docs': { get: page('The reference page of this document', 'Documentation') },
  '/docs/assets/{file}': { get: staticFile('A file of the reference page, from swagger-ui-dist', 'Documentation', ['text/css; charset=utf-8', 'text/javascript; charset=utf-8', 'image/png']) },
  '/': {
    get: {
      summary: 'The web console', tags: ['Console'],
      success: { 302: { description: 'Location: /console/', schema: null } },
      // Served on the API port only: on the gateway, / is 404 NOT_FOUND.
      errors: ['NOT_FOUND'],
    },
  },
  '/console': { get: page('The web console', 'Console') },
  '/console/{file}': { get: staticFile("A script, style or image of the web console's own", 'Console', ['text/javascript; charset=utf-8', 'text/css; charset=utf-8', 'text/html; charset=utf-8', 'image/svg+xml']) },
  '/console/vendor/{file}': { get: staticFile('A library the web console runs on, from its npm package', 'Console', ['text/javascript; charset=utf-8']) },
};

/** An HTML page served without a key. */
function page(summary: string, tag: string): Operation {
  return {
    summary, tags: [tag],
    success: { 200: { description: 'the page', schema: { type: 'string' }, contentType: 'text/html; charset=utf-8', example: '<!doctype html>…' } },
    errors: [],
  };
}

/** A file a page loads, served without a key; `types`: the content types it can have. */
function staticFile(summary: string, tag: string, [type, ...others]: string[]): Operation {
  return {
    summary, tags: [tag], parameters: [pathParameter('file', 'the file name')],
    success: { 200: { description: 'the file', schema: { type: 'string' }, contentType: type, example: '…', alsoAs: others } },
    errors: ['NOT_FOUND'],
  };
}

/** One response per error status the operation can give; `error` lists the registry's codes for it. */
function errorResponses(codes: readonly ErrorCode[]): Record<string, Json> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const { status } = ERROR_CODES[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, Json> = {};
  for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    responses[String(status)] = {
      description: list.map((code) => `${code}: ${ERROR_CODES[code].description}`).join('; '),
      content: {
        'application/json': {
          schema: { allOf: [ref('Error'), { properties: { error: { enum: list } } }] },
          example: { error: list[0], message: ERROR_CODES[list[0]].description },
        },
      },
    };
  }
  return responses;
}

function operationJson(path: string, method: string, operation: Operation): Json {
  const responses: Record<string, Json> = {};
  for (const [status, success] of Object.entries(operation.success)) {
    responses[status] = success.schema === null
      ? { description: success.description }
      : {
        description: success.description,
        content: {
          [success.contentType ?? 'application/json']: { schema: success.schema, ...(success.example === undefined ? {} : { example: success.example }) },
          ...Object.fromEntries((success.alsoAs ?? []).map((type) => [type, { schema: success.schema }])),
        },
      };
  }
  const read = method === 'get' && operation.scope !== undefined;
  // What src/http/server.ts answers before or around any handler, whatever the operation lists: 405 for a
  // method the path does not take, 414 for an overlong path, 503 from a closed server, 500 for a bug. Where
  // it reads the headers (behind a key, or a method with a body), a repeated x-api-key or Content-Length and
  // an unknown x-jvmlens-consistency are 400; a method with a body is 413 past the limit, though the route
  // never reads it. A success status (health's 503) keeps its own description.
  const sendsBody = method === 'post' || method === 'put' || method === 'delete';
  const server: ErrorCode[] = ['METHOD_NOT_ALLOWED', 'URI_TOO_LONG', 'NOT_READY', 'INTERNAL'];
  if (operation.scope !== undefined || sendsBody) server.push('BAD_REQUEST');
  if (sendsBody) server.push('PAYLOAD_TOO_LARGE');
  for (const [status, response] of Object.entries(errorResponses([...operation.errors, ...server]))) responses[status] ??= response;
  const json: Json = {
    operationId: `${method}${path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_, next: string | undefined) => (next ?? '').toUpperCase())}`,
    summary: operation.summary,
    tags: operation.tags,
    responses,
  };
  if (operation.scope !== undefined) {
    json.security = [{ apiKey: [operation.scope] }];
    json.description = `Needs a key with the ${operation.scope} scope (\`x-api-key\`).`;
  } else json.security = [];
  const parameters = [...(operation.parameters ?? []), ...(read ? [{ $ref: '#/components/parameters/Consistency' }] : [])];
  if (parameters.length > 0) json.parameters = parameters;
  if (operation.body !== undefined) {
    const { schema, example, contentTypes = ['application/json'] } = operation.body;
    json.requestBody = { required: true, content: Object.fromEntries(contentTypes.map((type) => [type, type === 'application/json' ? { schema, example } : { schema }])) };
  }
  if (operation.gateway === true) json.servers = [{ url: 'http://localhost:8080', description: 'the gateway (health, agents, metrics)' }];
  return json;
}

/** The whole document; `version` is the service's. */
export function openApiDocument(version: string): Json {
  const paths: Record<string, Json> = {};
  for (const [path, methods] of Object.entries(OPERATIONS)) {
    paths[path] = Object.fromEntries(Object.entries(methods).map(([method, operation]) => [method, operationJson(path, method, operation)]));
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'jvmlens',
      version,
      summary: 'Runtime inventory of a Java fleet: VMs, loaded code, components and their CVEs',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    // Relative: the reference page's "try it out" calls the service that served it.
    servers: [{ url: '/', description: 'this service (the public API port)' }],
    security: [{ apiKey: [] }],
    tags: ['Explorer', 'SBOM', 'JVM inventory reports', 'code inventory reports', 'component inventory reports', 'CVE events', 'Health', 'Agents', 'Documentation', 'Console'].map((name) => ({ name })),
    paths,
    components: {
      schemas: SCHEMAS,
      parameters: {
        Consistency: {
          name: 'x-jvmlens-consistency', in: 'header', required: false,
          schema: { type: 'string', enum: [...CONSISTENCIES], default: CONSISTENCIES[0] },
          description: 'Cluster mode: `read-your-writes` (the default) answers with every write acknowledged before the request, through any node, first asking the cluster log how far it goes; `local` answers at once with what this node has applied, which may lack writes acknowledged through other nodes in the last moments (a node more than about 5 s behind is DOWN for load balancers). A single node answers alike either way.',
        },
      },
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'A key from `jvmlens keys create --scopes read,write,ingest` (or the static --api-key). Scopes: read (explorer GETs, reports, CVE events, SBOM), write (tag changes), ingest (agent events).' },
      },
    },
  };
}
