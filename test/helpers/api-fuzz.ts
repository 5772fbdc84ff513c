// Random requests over every operation of the OpenAPI document: real ids and tokens, mutated, beside junk
// parameters, bodies and content types. Each answer goes through the request helper, which checks it
// against the document; none may be a 5xx.
import assert from 'node:assert/strict';
import { openApiDocument } from '../../src/http/openapi/document.ts';
import { Random } from '../../src/seed/random.ts';
import { vmStart } from './events.ts';
import { request } from './service.ts';

type Json = Record<string, any>;

/** A service to send requests to (any node of a cluster). */
export interface FuzzTarget {
  apiUrl: string;
  gatewayUrl: string;
  apiKey: string;
}

/** Real values the requests start from: they reach the handlers where junk stops at validation. */
export interface Known {
  vmIds: string[];
  reportIds: string[];
  tokens: string[];
}

const JUNK = [
  '', ' ', '0', '-1', '1e309', 'NaN', 'null', 'true', '%', '%00', '%ZZ', '%C0%80', '%ED%A0%80', '😀', '\u0000', "'", '"', '\\', '..',
  '*', 'x'.repeat(3000), '[]', '{}', '2026-02-30T00:00:00Z', '99999999999999999999', '3d', '-3d', 'RUNNING', 'env:prod', ':', ',,,',
  '&', '?', '/', 'é'.repeat(700),
];
const FILTERS = ["hostName = 'h'", "tags.env = 'prod'", 'startTime > 3d', "componentName = 'log4j-core'", 'className:com/acme/Used', "state IN ('RUNNING')", 'score > 7'];
const REPORT_FIELDS = ['filters', 'filter', 'groupBy', 'sortBy', 'from', 'to', 'startTime', 'endTime', 'reportName', 'detail'];
const JSON_VALUES: unknown[] = [null, true, 0, -1, 1e308, 3.5, 'x', [], {}, { a: 1 }, 'x'.repeat(100_000), Array(5000).fill(1), '2026-01-01T00:00:00Z', '3d', ...FILTERS, FILTERS];

interface Operation {
  method: string;
  path: string;
  query: string[];
}

/** Every operation of the document with the names of its query parameters. */
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

/** The requests of one seed: the same seed gives the same requests for the same known values. */
class Requests {
  readonly #random: Random;
  readonly #known: Known;

  constructor(seed: number, known: Known) {
    this.#random = new Random(seed);
    this.#known = known;
  }

  chance(p: number): boolean {
    return this.#random.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.#random.int(items.length)];
  }

  /** A real value changed a little, or junk. */
  mutated(text: string): string {
    switch (this.#random.int(6)) {
      case 0: return text.slice(0, this.#random.int(text.length + 1));
      case 1: return text + this.pick(JUNK);
      case 2: {
        const at = this.#random.int(text.length + 1);
        return text.slice(0, at) + this.pick(['\u00e9', '\u6771', '%', '/', '\u0000', ' ']) + text.slice(at + 1);
      }
      case 3: return text.toUpperCase();
      case 4: return this.pick(JUNK);
      default: return text;
    }
  }

  value(): string {
    const { vmIds, tokens, reportIds } = this.#known;
    const r = this.#random.next();
    if (r < 0.25) return this.mutated(this.pick(vmIds));
    if (r < 0.4 && tokens.length > 0) return this.mutated(this.pick(tokens));
    if (r < 0.5) return this.mutated(this.pick(reportIds));
    return this.pick(JUNK);
  }

  /** Percent-encoded as a client would, or sent as it is (fetch escapes what a URL cannot hold, not a bad `%`). */
  inUrl(text: string): string {
    return this.chance(0.8) ? encodeURIComponent(text) : text;
  }

  url(operation: Operation): string {
    const { vmIds, reportIds } = this.#known;
    let url = operation.path.replace(/\{(\w+)\}/g, (_, name: string) => this.inUrl(name === 'vmId' && this.chance(0.5) ? this.pick(vmIds) : name === 'reportId' && this.chance(0.5) ? this.pick(reportIds) : this.value()));
    const query = operation.query.filter(() => this.chance(0.5)).map((name) => `${name}=${this.inUrl(this.value())}`);
    if (this.chance(0.05)) query.push(`${this.inUrl(this.pick(JUNK))}=${this.inUrl(this.pick(JUNK))}`);
    return query.length > 0 ? `${url}?${query.join('&')}` : url;
  }

  body(path: string): { body: string; contentType: string } {
    const agent = path.startsWith('/agent');
    const contentType = this.chance(0.85) ? (agent && this.chance(0.5) ? 'application/x-ndjson' : 'application/json') : this.pick(['text/plain', 'application/x-www-form-urlencoded', 'application/msgpack']);
    if (this.chance(0.1)) return { body: this.pick(['', '{', '[', 'null', '1', '"x"', '{"a":', '\u0000', `[${'['.repeat(5000)}`]), contentType };
    if (agent) return { body: this.#agentBody(), contentType };
    if (path.includes('/tags')) return { body: JSON.stringify(this.chance(0.5) ? { [this.mutated('env')]: this.mutated('prod') } : this.pick(JSON_VALUES)), contentType };
    const report: Json = {};
    for (const field of REPORT_FIELDS) if (this.chance(0.3)) report[field] = this.chance(0.5) ? this.pick(JSON_VALUES) : this.mutated(this.pick(FILTERS));
    return { body: JSON.stringify(report), contentType };
  }

  #agentBody(): string {
    const { vmIds } = this.#known;
    const event: Json = this.chance(0.5) ? vmStart(this.pick(['fuzz-new', ...vmIds]), Date.now()) : { type: this.pick(['code', 'components', 'vm.heartbeat', 'vm.stop', 'x']), vmId: this.pick(vmIds), time: Date.now() };
    event[this.pick(['type', 'vmId', 'time', 'items', 'inventory', 'tags', 'agentVersion', 'mailbox'])] = this.chance(0.5) ? this.pick(JSON_VALUES) : [{ sourceName: 'a.jar', className: this.value(), methodName: 'm()' }];
    return this.chance(0.5) ? JSON.stringify([event]) : `${JSON.stringify(event)}\n${JSON.stringify(event)}`;
  }
}

/**
 * Sends `count` random requests of `seed` to the targets in turn; each answer is checked against the OpenAPI
 * document, and none may be a 5xx. Gives how many answers each status had.
 */
export async function fuzzApi(targets: readonly FuzzTarget[], known: Known, count: number, seed: number): Promise<Map<number, number>> {
  const all = operations();
  const requests = new Requests(seed, known);
  const statuses = new Map<number, number>();
  for (let i = 0; i < count; i++) {
    const target = targets[i % targets.length];
    const operation = requests.pick(all);
    const url = requests.url(operation);
    const base = url.startsWith('/agent') || url.startsWith('/opthub') || url.startsWith('/metrics') ? target.gatewayUrl : target.apiUrl;
    // A DELETE takes no body, but one may come, and one over the limit is a 413 there too.
    const sent = operation.method === 'POST' || operation.method === 'PUT' || (operation.method === 'DELETE' && requests.chance(0.2)) ? requests.body(operation.path) : null;
    if (sent !== null && requests.chance(0.01)) sent.body = ' '.repeat(base === target.gatewayUrl ? 17 * 1024 * 1024 : 2 * 1024 * 1024);
    const response = await request(`${base}${url}`, {
      method: operation.method,
      key: requests.chance(0.95) ? target.apiKey : null,
      ...(requests.chance(0.05) ? { headers: { 'x-jvmlens-consistency': requests.pick(['local', 'read-your-writes', 'bogus', '']) } } : {}),
      ...(sent === null ? {} : { rawBody: sent.body, contentType: sent.contentType }),
    });
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    assert.ok(response.status < 500, `${operation.method} ${base}${url.slice(0, 200)} → ${response.status}: ${response.text.slice(0, 300)}`);
  }
  return statuses;
}
