// JSON Schemas (2020-12, as OpenAPI 3.1 takes them) of what the API reads and answers: interface §2, decisions
// §5–§11. The tests validate every response they receive against these, so they describe the real shapes.
export type Schema = Record<string, unknown>;

/** An object schema's property names in their order, which is the order the service writes the fields in. */
export function propertyNames(schema: Schema): string[] {
  return Object.keys(schema.properties as Schema);
}

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const nullable = (schema: Schema): Schema => ({ anyOf: [schema, { type: 'null' }] });
const stringMap: Schema = { type: 'object', additionalProperties: { type: 'string' } };
const isoTime: Schema = { type: 'string', format: 'date-time', description: 'ISO 8601, UTC, milliseconds' };
const epochMs: Schema = { type: 'integer', description: 'epoch milliseconds' };
/** A code report time: ISO 8601 without a zone (interface §2.4). */
const codeTime: Schema = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}$' };
const REPORT_STATES = ['PROCESSING', 'SUCCEEDED', 'FAILED', 'PARTIALLY_FAILED', 'TIMED_OUT'];
const stringArray: Schema = { type: 'array', items: { type: 'string' } };
const groupValue: Schema = { type: ['string', 'number', 'null'] };

const reportError: Schema = {
  type: 'object',
  required: ['code', 'message'],
  properties: { code: { type: 'string' }, message: { type: 'string' } },
};

/** Fields every report envelope has, by family (times are ISO text for JVM and code, epoch ms for component). */
function envelope(family: 'jvm' | 'code' | 'component', item: Schema, get: boolean): Schema {
  const time = family === 'component' ? epochMs : isoTime;
  const properties: Schema = {
    reportId: { type: 'string', format: 'uuid' },
    state: { enum: REPORT_STATES },
    reportName: { type: 'string' },
    userId: { type: 'string' },
    requestTime: time,
    startTime: nullable(time),
    finishTime: nullable(time),
  };
  const required = ['reportId', 'state', 'userId', 'requestTime'];
  if (family === 'component') {
    Object.assign(properties, { parameters: { type: 'object', description: 'the request echoed, with resolvedStartTime and resolvedEndTime (epoch ms)' }, summary: ref('ComponentSummary'), errors: { type: 'array', items: reportError } });
    required.push('parameters');
  } else {
    Object.assign(properties, { params: { type: 'object', description: 'the request echoed, with resolvedFrom and resolvedTo (ISO times)' }, stateMessages: stringArray, errors: { type: 'array', items: reportError } });
    required.push('params', 'stateMessages');
  }
  if (get) {
    Object.assign(properties, {
      totalCount: { type: 'integer', minimum: 0 },
      totalPages: { type: 'integer', minimum: 0 },
      page: { type: 'integer', minimum: 0 },
      afterToken: { type: 'string', description: 'absent on the last page' },
      data: { type: 'array', items: item },
    });
    if (family !== 'component') Object.assign(properties, { from: nullable(isoTime), to: nullable(isoTime) });
    required.push('startTime', 'finishTime', 'totalCount', 'totalPages', 'page', 'data');
  }
  return { type: 'object', required, properties, additionalProperties: false };
}

export const SCHEMAS: Record<string, Schema> = {
  Error: {
    type: 'object',
    description: 'decisions §10: a stable code from the registry, a message for people, and details (positions, expected values) where they help',
    required: ['error', 'message'],
    properties: { error: { type: 'string' }, message: { type: 'string' }, details: { type: 'array', items: { type: 'object' } } },
    additionalProperties: false,
  },
  HealthValue: {
    type: 'object',
    required: ['healthState', 'code', 'message', 'note'],
    properties: { healthState: { enum: ['UP', 'DOWN'] }, code: { type: 'integer' }, message: { type: 'string' }, note: { type: 'string' } },
    additionalProperties: false,
  },
  AgentEvents: {
    description: 'A batch of agent events (decisions §4): JSON array, NDJSON (application/x-ndjson) or MessagePack (application/msgpack). Each event has type vm.start, vm.heartbeat, vm.stop, code or components, a vmId and a time (epoch ms).',
    type: 'array',
    minItems: 1,
    items: {
      type: 'object',
      required: ['type', 'vmId', 'time'],
      properties: { type: { enum: ['vm.start', 'vm.heartbeat', 'vm.stop', 'code', 'components'] }, vmId: { type: 'string' }, time: { type: 'integer' } },
    },
  },
  Accepted: { type: 'object', required: ['accepted'], properties: { accepted: { type: 'integer', minimum: 1 } }, additionalProperties: false },
  VmInstance: {
    type: 'object',
    required: ['vmId', 'agentVersion', 'agentRevision', 'inventory', 'startTime', 'lastHeardTime', 'mailbox', 'state', 'jvmInfo', 'tags'],
    properties: {
      vmId: { type: 'string' },
      agentVersion: { type: 'string' },
      agentRevision: { type: 'string' },
      inventory: {
        type: 'object',
        required: ['systemProperties', 'hostName', 'osEnvironment', 'mainMethod', 'cpuInfo'],
        properties: { systemProperties: stringMap, hostName: { type: 'string' }, osEnvironment: { type: 'object' }, mainMethod: { type: 'string' }, cpuInfo: { type: 'object' } },
      },
      startTime: epochMs,
      lastHeardTime: epochMs,
      mailbox: { type: 'string' },
      state: { enum: ['RUNNING', 'OFFLINE', 'TERMINATED'] },
      jvmInfo: { type: 'object' },
      tags: stringMap,
    },
    additionalProperties: false,
  },
  Annotation: {
    type: 'object',
    required: ['key', 'value', 'time'],
    properties: { key: { type: 'string' }, value: { type: 'string' }, time: epochMs },
    additionalProperties: false,
  },
  Tag: {
    type: 'object',
    required: ['key', 'value'],
    properties: { key: { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9._-]{0,127}$' }, value: { type: 'string', pattern: '^[A-Za-z0-9._ :/@-]{0,256}$' } },
    additionalProperties: false,
  },
  Tags: { type: 'array', items: ref('Tag') },
  JvmReportRequest: {
    type: 'object',
    properties: {
      filter: { ...stringArray, description: "filter entries, ANDed: `field op literal` (decisions §6.2), e.g. `tags.env = 'prod'`" },
      from: { type: ['string', 'integer'], description: 'relative (30d, 2m), ISO 8601 or epoch ms; default 30d' },
      to: { type: ['string', 'integer'], description: 'same forms; default now' },
      groupBy: { ...stringArray, description: 'fields, or year, month, week, day' },
      sortBy: { ...stringArray, description: '`field=ASC|DESC`; count allowed' },
      reportName: { type: 'string' },
    },
    additionalProperties: false,
  },
  CodeReportRequest: {
    type: 'object',
    properties: {
      filter: { ...stringArray, description: '`sourceName:value`, `className:value`, `methodName:value` (substring), or the filter grammar on those fields and AppEnv' },
      from: { type: ['string', 'integer'] },
      to: { type: ['string', 'integer'] },
      groupBy: { ...stringArray, description: 'a prefix of [sourceName, className, methodName]' },
      sortBy: stringArray,
      reportName: { type: 'string' },
    },
    additionalProperties: false,
  },
  ComponentReportRequest: {
    type: 'object',
    properties: {
      filter: stringArray,
      groupBy: stringArray,
      sortBy: stringArray,
      startTime: { type: ['string', 'integer'], description: 'default 3m' },
      endTime: { type: ['string', 'integer'] },
      detail: { type: 'boolean', description: 'list the vmIds of each component' },
      reportName: { type: 'string' },
    },
    additionalProperties: false,
  },
  ComponentSummary: {
    type: 'object',
    required: ['vmCount', 'componentCount'],
    properties: { vmCount: { type: 'integer' }, componentCount: { type: 'integer' } },
    additionalProperties: false,
  },
  JvmItem: {
    description: 'Grouped: the groupBy values and count. Ungrouped: one VM.',
    anyOf: [
      {
        type: 'object',
        required: ['vmId', 'hostName', 'state', 'agentVersion', 'javaVersion', 'javaVendor', 'startTime', 'lastHeardTime', 'tags'],
        properties: {
          vmId: { type: 'string' },
          hostName: nullable({ type: 'string' }),
          state: { enum: ['RUNNING', 'OFFLINE', 'TERMINATED'] },
          agentVersion: nullable({ type: 'string' }),
          javaVersion: nullable({ type: 'string' }),
          javaVendor: nullable({ type: 'string' }),
          startTime: nullable(isoTime),
          lastHeardTime: nullable(isoTime),
          tags: stringMap,
        },
        additionalProperties: false,
      },
      { type: 'object', required: ['count'], properties: { count: { type: 'integer' } }, additionalProperties: groupValue },
    ],
  },
  CodeItem: {
    description: 'Ungrouped: one method. Grouped by a prefix of sourceName, className, methodName: the group and count (methods).',
    type: 'object',
    required: ['sourceName', 'firstSeen', 'lastSeen'],
    properties: { sourceName: { type: 'string' }, className: { type: 'string' }, methodName: { type: 'string' }, firstSeen: codeTime, lastSeen: codeTime, count: { type: 'integer' } },
    additionalProperties: false,
  },
  ComponentItem: {
    description: 'A component in the innermost level, with its group values; nesting levels hold one group value and the next level in `data` (interface §2.4)',
    type: 'object',
    properties: {
      componentName: { type: 'string' },
      componentVersion: { type: 'string' },
      count: { type: 'integer', description: 'VMs' },
      vmIds: stringArray,
      data: { type: 'array', items: ref('ComponentItem') },
    },
    additionalProperties: groupValue,
  },
  JvmReportCreated: envelope('jvm', {}, false),
  CodeReportCreated: envelope('code', {}, false),
  ComponentReportCreated: envelope('component', {}, false),
  JvmReport: envelope('jvm', ref('JvmItem'), true),
  CodeReport: envelope('code', ref('CodeItem'), true),
  ComponentReport: envelope('component', ref('ComponentItem'), true),
  JvmReportList: { type: 'object', required: ['data'], properties: { data: { type: 'array', items: ref('JvmReportCreated') }, afterToken: { type: 'string' } }, additionalProperties: false },
  CodeReportList: { type: 'object', required: ['data'], properties: { data: { type: 'array', items: ref('CodeReportCreated') }, afterToken: { type: 'string' } }, additionalProperties: false },
  ComponentReportList: { type: 'object', required: ['data'], properties: { data: { type: 'array', items: ref('ComponentReportCreated') }, afterToken: { type: 'string' } }, additionalProperties: false },
  CveEvent: {
    type: 'object',
    required: ['componentName', 'componentVersion', 'cveId', 'score', 'cveState', 'cveAnalysisTime', 'hostName', 'startTime', 'lastHeardTime', 'vmId', 'tags'],
    properties: {
      componentName: { type: 'string' },
      componentVersion: { type: 'string' },
      cveId: nullable({ type: 'string' }),
      score: nullable({ type: 'number' }),
      cveState: nullable({ enum: ['USED', 'PRESENT'] }),
      cveAnalysisTime: nullable(epochMs),
      hostName: { type: 'string' },
      startTime: epochMs,
      lastHeardTime: epochMs,
      vmId: { type: 'string' },
      tags: nullable(stringMap),
    },
    additionalProperties: false,
  },
  CveEventsPage: {
    type: 'object',
    required: ['limit', 'data', 'summary', 'size', 'hasNext'],
    properties: {
      limit: { type: 'integer' },
      afterToken: { type: 'string' },
      data: { type: 'array', items: ref('CveEvent') },
      summary: { type: 'object', required: ['warnings', 'totalCount'], properties: { warnings: stringArray, totalCount: { type: 'integer' } } },
      size: { type: 'integer' },
      hasNext: { type: 'boolean' },
    },
    additionalProperties: false,
  },
  CveSummary: {
    type: 'object',
    required: ['data', 'summary'],
    properties: {
      data: {
        type: 'array',
        items: {
          type: 'object',
          required: ['cveId', 'score', 'severity', 'usedVmCount', 'presentVmCount', 'components'],
          properties: {
            cveId: { type: 'string' },
            score: nullable({ type: 'number' }),
            severity: { enum: ['critical', 'high', 'medium', 'low', 'none', 'unknown'] },
            usedVmCount: { type: 'integer', description: 'VMs that loaded code from a component with the CVE' },
            presentVmCount: { type: 'integer', description: 'VMs that carry the CVE only in components whose code they did not load' },
            components: { type: 'array', items: { type: 'object', required: ['componentName', 'componentVersion'], properties: { componentName: { type: 'string' }, componentVersion: { type: 'string' } }, additionalProperties: false } },
          },
          additionalProperties: false,
        },
      },
      summary: { type: 'object', required: ['vmCount', 'cveCount'], properties: { vmCount: { type: 'integer', description: 'VMs selected' }, cveCount: { type: 'integer' } }, additionalProperties: false },
    },
    additionalProperties: false,
  },
  Me: {
    type: 'object',
    required: ['userId', 'scopes'],
    properties: { userId: { type: 'string' }, scopes: { type: 'array', items: { enum: ['read', 'write', 'ingest'] } } },
    additionalProperties: false,
  },
  CycloneDx: {
    description: 'A CycloneDX 1.6 JSON BOM (https://cyclonedx.org/docs/1.6/json/) with components and a vulnerabilities section whose analysis is the runtime VEX',
    type: 'object',
    required: ['bomFormat', 'specVersion', 'serialNumber', 'version', 'metadata', 'components', 'vulnerabilities'],
    properties: { bomFormat: { const: 'CycloneDX' }, specVersion: { const: '1.6' }, serialNumber: { type: 'string' }, version: { type: 'integer' }, metadata: { type: 'object' }, components: { type: 'array' }, vulnerabilities: { type: 'array' } },
  },
};
