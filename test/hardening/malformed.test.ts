// A table of malformed requests (issue: hardening): each gets a 4xx with a JSON error body, stores nothing
// and leaves health UP; a valid batch right after is still accepted.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { pack } from 'msgpackr';
import { vmStart } from '../helpers/events.ts';
import { request, startService } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

let service: RunningService;
before(async () => {
  service = await startService();
});
after(() => service.stop());

/** Sends bytes on a fresh connection and returns the status line and body of the answer. */
function rawRequest(url: string, bytes: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(bytes));
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString()));
    socket.on('error', reject);
    socket.on('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0);
      resolve({ status, body: data.slice(data.indexOf('\r\n\r\n') + 4) });
    });
  });
}

async function assertHealthUp(): Promise<void> {
  const health = await fetch(`${service.gatewayUrl}/opthub-health`);
  assert.equal(health.status, 200, await health.text());
}

const now = Date.now();
const start = (extra: Record<string, unknown>) => ({ ...vmStart('bad-vm', now), ...extra });
const inventory = (extra: Record<string, unknown>) => ({ ...(vmStart('x', now).inventory as Record<string, unknown>), ...extra });
/** JSON text of objects nested `depth` deep (JSON.stringify itself would overflow the stack). */
const nested = (depth: number): string => `${'{"next":'.repeat(depth)}"x"${'}'.repeat(depth)}`;
/** A JSON array of events with `marker` (a string in quotes) replaced by raw JSON text. */
const withRaw = (events: unknown[], marker: string, raw: string): string => JSON.stringify(events).replace(`"${marker}"`, raw);
const code = (item: Record<string, unknown>) => [vmStart('code-vm', now), { type: 'code', vmId: 'code-vm', time: now, items: [{ sourceName: 'a.jar', className: 'A', methodName: 'm()', ...item }] }];
const components = (item: Record<string, unknown>) => [vmStart('comp-vm', now), { type: 'components', vmId: 'comp-vm', time: now, items: [{ componentName: 'c', componentVersion: '1', ...item }] }];

/** Agent batches that must be refused with 400 INVALID_EVENTS; `field` must be named in the first problem. */
const BAD_BATCHES: { name: string; events: unknown[] | string; field: RegExp }[] = [
  { name: 'time beyond the Date range', events: [start({ time: 9_000_000_000_000_000 })], field: /'time'/ },
  { name: 'time a year ahead of the service clock', events: [start({ time: now + 365 * 86_400_000 })], field: /'time'.*window/ },
  { name: 'time before 2000', events: [start({ time: 1000 })], field: /'time'.*window/ },
  { name: 'agentVersion of 4,096 characters', events: [start({ agentVersion: 'v'.repeat(4096) })], field: /'agentVersion'/ },
  { name: 'mailbox of 4,096 characters', events: [start({ mailbox: 'm'.repeat(4096) })], field: /'mailbox'/ },
  { name: 'hostName of 3,000 characters', events: [start({ inventory: inventory({ hostName: 'h'.repeat(3000) }) })], field: /'inventory.hostName'/ },
  { name: 'mainMethod of 1 MB', events: [start({ inventory: inventory({ mainMethod: 'm'.repeat(1 << 20) }) })], field: /'inventory.mainMethod'/ },
  { name: 'system property of 1 MB', events: [start({ inventory: inventory({ systemProperties: { 'java.class.path': 'p'.repeat(1 << 20) } }) })], field: /java\.class\.path/ },
  { name: 'java.version of 1,000 characters', events: [start({ inventory: inventory({ systemProperties: { 'java.version': '1'.repeat(1000) } }) })], field: /java\.version/ },
  { name: 'jvmInfo nested 10,000 levels', events: withRaw([start({ jvmInfo: 'NESTED' })], 'NESTED', nested(10_000)), field: /'jvmInfo.*nests deeper/ },
  { name: 'osEnvironment nested 10,000 levels', events: withRaw([start({ inventory: inventory({ osEnvironment: 'NESTED' }) })], 'NESTED', nested(10_000)), field: /'inventory.osEnvironment.*nests deeper/ },
  { name: 'annotation value of 1 MB', events: [start({ annotations: { note: 'a'.repeat(1 << 20) } })], field: /'annotations.note'/ },
  { name: 'className of 4,096 characters', events: code({ className: 'C'.repeat(4096) }), field: /items\[0\]: 'className'/ },
  { name: 'sourceName of 4,096 characters', events: code({ sourceName: 's'.repeat(4096) }), field: /'sourceName'/ },
  { name: 'methodName of 4,096 characters', events: code({ methodName: 'm'.repeat(4096) }), field: /'methodName'/ },
  { name: 'componentName of 4,096 characters', events: components({ componentName: 'c'.repeat(4096) }), field: /'componentName'/ },
  { name: 'componentVersion of 4,096 characters', events: components({ componentVersion: '1'.repeat(4096) }), field: /'componentVersion'/ },
  { name: 'an empty batch', events: [], field: /no events/ },
];

for (const { name, events, field } of BAD_BATCHES) {
  test(`agent batch refused with 400, health untouched: ${name}`, async () => {
    const body = typeof events === 'string' ? { rawBody: events } : { body: events };
    const response = await request(`${service.gatewayUrl}/agent/v1/events`, { method: 'POST', key: service.apiKey, ...body });
    assert.equal(response.status, 400, response.text.slice(0, 300));
    assert.equal(response.body.error, 'INVALID_EVENTS');
    assert.match(`${response.body.message} ${response.body.details[0].message}`, field);
    await assertHealthUp();
  });
}

test('a 4 MB array of invalid events stops at the 100th problem', async () => {
  const body = `[${new Array(2_000_000).fill('0').join(',')}]`;
  const response = await request(`${service.gatewayUrl}/agent/v1/events`, { method: 'POST', key: service.apiKey, rawBody: body });
  assert.equal(response.status, 400);
  assert.equal(response.body.details.length, 100);
  assert.match(response.body.message, /100 or more/);
  await assertHealthUp();
});

test('bodies that are not what they claim: invalid UTF-8, empty NDJSON', async () => {
  const invalidUtf8 = Buffer.concat([Buffer.from('[{"type":"vm.heartbeat","vmId":"a'), Buffer.from([0xff, 0xfe]), Buffer.from(`","time":${now}}]`)]);
  for (const [body, contentType] of [[invalidUtf8, 'application/json'], [invalidUtf8, 'application/x-ndjson'], ['', 'application/x-ndjson'], ['\n\n', 'application/x-ndjson']] as const) {
    const response = await request(`${service.gatewayUrl}/agent/v1/events`, { method: 'POST', key: service.apiKey, rawBody: body, contentType });
    assert.equal(response.status, 400, `${contentType} ${String(body).slice(0, 20)}: ${response.text}`);
    assert.equal(typeof response.body.error, 'string');
  }
  const tags = await request(`${service.apiUrl}/public/instance/any/tags`, { method: 'PUT', key: service.apiKey, rawBody: invalidUtf8 });
  assert.equal(tags.status, 400);
  assert.equal(tags.body.error, 'MALFORMED_BODY');
  await assertHealthUp();
});

test('a msgpack time written as uint64 (Python msgpack, Java msgpack-core) is accepted', async () => {
  // msgpackr writes a BigInt as int64 (0xd3): mark it uint64 (0xcf), as those libraries write a time.
  const time = Buffer.alloc(9);
  time[0] = 0xd3;
  time.writeBigInt64BE(BigInt(now), 1);
  const body = pack([{ ...vmStart('uint64-vm', now), time: BigInt(now) }]);
  const at = body.indexOf(time);
  assert.ok(at > 0);
  body[at] = 0xcf;
  const response = await request(`${service.gatewayUrl}/agent/v1/events`, { method: 'POST', key: service.apiKey, rawBody: body, contentType: 'application/msgpack' });
  assert.deepEqual([response.status, response.body], [200, { accepted: 1 }]);
  const instance = await request(`${service.apiUrl}/public/instance/uint64-vm`, { key: service.apiKey });
  assert.equal(instance.body.startTime, now);
});

test('long ids in paths: 414 past 2,048 characters, 404 below, never 500', async () => {
  for (const [path, status] of [
    [`/public/instance/${'v'.repeat(8000)}`, 414],
    [`/public/instance/${'v'.repeat(1990)}`, 404],
    [`/public/instance/${'v'.repeat(1990)}/tags`, 404],
    [`/public/report/jvmInventory/${'r'.repeat(1990)}`, 404],
    [`/public/component/report/${'r'.repeat(8000)}`, 414],
    [`/public/cve/events?vmId=${'v'.repeat(1990)}`, 200],
  ] as const) {
    const response = await request(`${service.apiUrl}${path}`, { key: service.apiKey });
    assert.equal(response.status, status, `${path.slice(0, 40)}: ${response.text.slice(0, 200)}`);
    assert.equal(typeof response.body, 'object');
  }
  assert.doesNotMatch(service.stderr() + service.stdout(), /v{2049}/, 'a whole long path was logged');
  await assertHealthUp();
});

test('repeated Content-Length, Transfer-Encoding with Content-Length, or repeated x-api-key: 400', async () => {
  const batch = JSON.stringify([vmStart('smuggle-vm', now)]);
  const head = `POST /agent/v1/events HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nConnection: close\r\n`;
  const cases = [
    `${head}x-api-key: ${service.apiKey}\r\nContent-Length: ${batch.length}\r\nContent-Length: 5\r\n\r\n${batch}`,
    `${head}x-api-key: ${service.apiKey}\r\nx-api-key: other\r\nContent-Length: ${batch.length}\r\n\r\n${batch}`,
    `${head}x-api-key: other\r\nx-api-key: ${service.apiKey}\r\nContent-Length: ${batch.length}\r\n\r\n${batch}`,
  ];
  for (const bytes of cases) {
    const response = await rawRequest(service.gatewayUrl, bytes);
    assert.equal(response.status, 400, bytes.slice(0, 200));
    assert.equal(JSON.parse(response.body).error, 'BAD_REQUEST');
  }
  assert.equal((await request(`${service.apiUrl}/public/instance/smuggle-vm`, { key: service.apiKey })).status, 404, 'nothing was stored');
  await assertHealthUp();
});

test('responses carry X-Content-Type-Options: nosniff', async () => {
  for (const url of [`${service.gatewayUrl}/opthub-health`, `${service.apiUrl}/public/instance/none`]) {
    const response = await fetch(url, { headers: { 'x-api-key': service.apiKey } });
    await response.arrayBuffer();
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff', url);
  }
});

test('after every malformed request a valid batch is still accepted', async () => {
  const response = await request(`${service.gatewayUrl}/agent/v1/events`, { method: 'POST', key: service.apiKey, body: [vmStart('good-vm', now)] });
  assert.deepEqual([response.status, response.body], [200, { accepted: 1 }]);
});
