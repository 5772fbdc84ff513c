// Random requests to every operation of the OpenAPI document (issue: hardening): real ids and tokens, mutated,
// beside junk parameters, bodies and content types. None may get a 5xx or an answer the document does not
// describe (the request helper checks each one), and the service must keep every VM and go on taking writes.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openApiDocument } from '../../src/http/openapi/document.ts';
import { Random } from '../../src/seed/random.ts';
import { codeEvent, componentsEvent, startEvent } from '../helpers/cve.ts';
import { ingest, vmStart } from '../helpers/events.ts';
import { FAMILIES, createReport, waitFinal } from '../helpers/reports.ts';
import { request, startService } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

type Json = Record<string, any>;

const REQUESTS = 1500;
const random = new Random(0xf022);
const pick = <T>(items: readonly T[]): T => items[random.int(items.length)];

const JUNK = [
  '', ' ', '0', '-1', '1e309', 'NaN', 'null', 'true', '%', '%00', '%ZZ', '%C0%80', '%ED%A0%80', '😀', '\u0000', "'", '"', '\\', '..',
  '*', 'x'.repeat(3000), '[]', '{}', '2026-02-30T00:00:00Z', '99999999999999999999', '3d', '-3d', 'RUNNING', 'env:prod', ':', ',,,',
  '&', '?', '/', 'é'.repeat(700),
];
const FILTERS = ["hostName = 'h'", "tags.env = 'prod'", 'startTime > 3d', "componentName = 'log4j-core'", 'className:com/acme/Used', "state IN ('RUNNING')", 'score > 7'];
const REPORT_FIELDS = ['filters', 'filter', 'groupBy', 'sortBy', 'from', 'to', 'startTime', 'endTime', 'reportName', 'detail'];
const JSON_VALUES: unknown[] = [null, true, 0, -1, 1e308, 3.5, 'x', [], {}, { a: 1 }, 'x'.repeat(100_000), Array(5000).fill(1), '2026-01-01T00:00:00Z', '3d', ...FILTERS, FILTERS];

/** A real value changed a little, or junk. */
function mutated(text: string): string {
  switch (random.int(6)) {
    case 0: return text.slice(0, random.int(text.length + 1));
    case 1: return text + pick(JUNK);
    case 2: {
      const at = random.int(text.length + 1);
      return text.slice(0, at) + pick(['\u00e9', '\u6771', '%', '/', '\u0000', ' ']) + text.slice(at + 1);
    }
    case 3: return text.toUpperCase();
    case 4: return pick(JUNK);
    default: return text;
  }
}

/** Percent-encoded as a client would, or sent as it is (fetch escapes what a URL cannot hold, not a bad `%`). */
const inUrl = (text: string): string => (random.next() < 0.8 ? encodeURIComponent(text) : text);

let service: RunningService;
const vmIds = ['fuzz-a', 'fuzz-b', 'fuzz-c'];
const known = { vmIds, reportIds: [] as string[], tokens: [] as string[] };

before(async () => {
  service = await startService();
  const now = Date.now();
  const events = vmIds.flatMap((vmId, i) => [
    startEvent(vmId, now - 60_000, `host-${i}`, { env: i === 0 ? 'prod' : 'test' }),
    componentsEvent(vmId, now - 50_000, [{ componentName: 'log4j-core', componentVersion: '2.14.1', groupId: 'org.apache.logging.log4j', sourceName: 'log4j-core-2.14.1.jar' }]),
    codeEvent(vmId, now - 40_000, ['log4j-core-2.14.1.jar', 'app.jar']),
  ]);
  assert.equal((await ingest(service.gatewayUrl, service.apiKey, events)).status, 200);
  for (const family of FAMILIES) {
    const created = await createReport(service, family, family === 'component' ? {} : { from: '30d' });
    known.reportIds.push(created.body.reportId);
    await waitFinal(service, family, created.body.reportId);
  }
  const page = await request(`${service.apiUrl}/public/cve/events?limit=1`, { key: service.apiKey });
  if (typeof page.body.afterToken === 'string') known.tokens.push(page.body.afterToken);
});
after(() => service.stop());

function value(): string {
  const r = random.next();
  if (r < 0.25) return mutated(pick(known.vmIds));
  if (r < 0.4 && known.tokens.length > 0) return mutated(pick(known.tokens));
  if (r < 0.5) return mutated(pick(known.reportIds));
  return pick(JUNK);
}

function agentBody(): string {
  const event: Json = random.next() < 0.5 ? vmStart(pick(['fuzz-new', ...vmIds]), Date.now()) : { type: pick(['code', 'components', 'vm.heartbeat', 'vm.stop', 'x']), vmId: pick(vmIds), time: Date.now() };
  const field = pick(['type', 'vmId', 'time', 'items', 'inventory', 'tags', 'agentVersion', 'mailbox']);
  event[field] = random.next() < 0.5 ? pick(JSON_VALUES) : [{ sourceName: 'a.jar', className: value(), methodName: 'm()' }];
  return random.next() < 0.5 ? JSON.stringify([event]) : `${JSON.stringify(event)}\n${JSON.stringify(event)}`;
}

function body(path: string): { body: string; contentType: string } {
  const agent = path.startsWith('/agent');
  const contentType = random.next() < 0.85 ? (agent && random.next() < 0.5 ? 'application/x-ndjson' : 'application/json') : pick(['text/plain', 'application/x-www-form-urlencoded', 'application/msgpack']);
  if (random.next() < 0.1) return { body: pick(['', '{', '[', 'null', '1', '"x"', '{"a":', '\u0000', `[${'['.repeat(5000)}`]), contentType };
  if (agent) return { body: agentBody(), contentType };
  if (path.includes('/tags')) return { body: JSON.stringify(random.next() < 0.5 ? { [mutated('env')]: mutated('prod') } : pick(JSON_VALUES)), contentType };
  const report: Json = {};
  for (const field of REPORT_FIELDS) if (random.next() < 0.3) report[field] = random.next() < 0.5 ? pick(JSON_VALUES) : mutated(pick(FILTERS));
  return { body: JSON.stringify(report), contentType };
}

interface Operation {
  method: string;
  path: string;
  query: string[];
}

function operations(): Operation[] {
  const document = openApiDocument('test') as Json;
  const list: Operation[] = [];
  for (const [path, methods] of Object.entries(document.paths as Json)) {
    for (const [method, operation] of Object.entries(methods as Json)) {
      const parameters = ((operation.parameters ?? []) as Json[]).map((parameter) => (parameter.$ref === undefined ? parameter : document.components.parameters[parameter.$ref.split('/').pop()]));
      list.push({ method: method.toUpperCase(), path, query: parameters.filter((parameter) => parameter.in === 'query').map((parameter) => parameter.name) });
    }
  }
  return list;
}

test(`${REQUESTS} random requests over every documented operation: no 5xx, each answer as documented, nothing lost`, async () => {
  const all = operations();
  const statuses = new Map<number, number>();
  for (let i = 0; i < REQUESTS; i++) {
    const operation = pick(all);
    let url = operation.path.replace(/\{(\w+)\}/g, (_, name: string) => inUrl(name === 'vmId' && random.next() < 0.5 ? pick(vmIds) : name === 'reportId' && random.next() < 0.5 ? pick(known.reportIds) : value()));
    const query = operation.query.filter(() => random.next() < 0.5).map((name) => `${name}=${inUrl(value())}`);
    if (random.next() < 0.05) query.push(`${inUrl(pick(JUNK))}=${inUrl(pick(JUNK))}`);
    if (query.length > 0) url += `?${query.join('&')}`;
    const base = url.startsWith('/agent') || url.startsWith('/opthub') || url.startsWith('/metrics') ? service.gatewayUrl : service.apiUrl;
    const sent = operation.method === 'POST' || operation.method === 'PUT' ? body(operation.path) : null;
    const response = await request(`${base}${url}`, {
      method: operation.method,
      key: random.next() < 0.95 ? service.apiKey : null,
      ...(sent === null ? {} : { rawBody: sent.body, contentType: sent.contentType }),
    });
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    assert.ok(response.status < 500, `${operation.method} ${url.slice(0, 200)} → ${response.status}: ${response.text.slice(0, 300)}`);
  }
  // The mix reached the handlers, not only the 4xx in front of them.
  assert.ok((statuses.get(200) ?? 0) > REQUESTS / 10, JSON.stringify([...statuses]));
  assert.equal(service.child.exitCode, null, `the service exited:\n${service.stderr()}`);
  assert.equal((await fetch(`${service.gatewayUrl}/opthub-health`)).status, 200);
  for (const vmId of vmIds) assert.equal((await request(`${service.apiUrl}/public/instance/${vmId}`, { key: service.apiKey })).status, 200, vmId);
  assert.equal((await ingest(service.gatewayUrl, service.apiKey, [vmStart('after-fuzz', Date.now())])).status, 200, 'writes still work');
});
