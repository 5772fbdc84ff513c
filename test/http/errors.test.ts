// The error model of decisions §10: status, stable code and message for every kind of bad request.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ingest, vmStart } from '../helpers/events.ts';
import { request, startService } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

let service: RunningService;

before(async () => {
  service = await startService();
  await ingest(service.gatewayUrl, service.apiKey, [vmStart('vm-e', Date.now())]);
});

after(() => service.stop());

function assertError(response: { status: number; body: any; headers: Headers }, status: number, code: string): void {
  assert.equal(response.status, status);
  assert.match(response.headers.get('content-type') ?? '', /application\/json/);
  assert.equal(response.body.error, code);
  assert.equal(typeof response.body.message, 'string');
  assert.ok(response.body.message.length > 0);
}

test('malformed JSON → 400 MALFORMED_JSON, saying where the body breaks', async () => {
  const tags = await request(`${service.apiUrl}/public/instance/vm-e/tags`, { method: 'POST', key: service.apiKey, rawBody: '{"key": ' });
  assertError(tags, 400, 'MALFORMED_JSON');
  assert.deepEqual(tags.body.details, [{ line: 1, column: 9, offset: 8 }]);
  // V8 names no position for an unexpected token; the answer still does.
  const events = await request(`${service.gatewayUrl}/agent/v1/events`, { method: 'POST', key: service.apiKey, rawBody: '[\n  {"type": "vm.heartbeat"},,\n]' });
  assertError(events, 400, 'MALFORMED_JSON');
  assert.deepEqual(events.body.details, [{ line: 2, column: 28, offset: 29 }]);
  assert.match(events.body.message, /^body is not valid JSON at line 2, column 28: /);
});

test('JSON nested deeper than can be read → 400 saying so and where, in a JSON body or an NDJSON line', async () => {
  const text = '['.repeat(500_000);
  const tags = await request(`${service.apiUrl}/public/instance/vm-e/tags`, { method: 'POST', key: service.apiKey, rawBody: text });
  assertError(tags, 400, 'MALFORMED_JSON');
  assert.equal(tags.body.message, 'body is not valid JSON at line 1, column 500000: arrays and objects nest 500000 levels deep here, too deep to read');
  assert.deepEqual(tags.body.details, [{ line: 1, column: 500_000, offset: 499_999 }]);
  const events = await request(`${service.gatewayUrl}/agent/v1/events`, { method: 'POST', key: service.apiKey, rawBody: `{}\n${text}`, contentType: 'application/x-ndjson' });
  assertError(events, 400, 'MALFORMED_BODY');
  assert.equal(events.body.message, 'line 2 is not valid JSON at column 500000: arrays and objects nest 500000 levels deep here, too deep to read');
});

test('an NDJSON line that is not JSON → 400 MALFORMED_BODY naming the line and column', async () => {
  const body = `${JSON.stringify(vmStart('vm-e', Date.now()))}\n{"type": "vm.heartbeat", "vmId": 'vm-e'}\n`;
  const response = await request(`${service.gatewayUrl}/agent/v1/events`, { method: 'POST', key: service.apiKey, rawBody: body, contentType: 'application/x-ndjson' });
  assertError(response, 400, 'MALFORMED_BODY');
  assert.deepEqual(response.body.details, [{ line: 2, column: 34 }]);
  assert.match(response.body.message, /^line 2 is not valid JSON at column 34: /);
});

test('a body that is not JSON → 415', async () => {
  assertError(await request(`${service.apiUrl}/public/instance/vm-e/tags`, { method: 'POST', key: service.apiKey, rawBody: 'key=a', contentType: 'application/x-www-form-urlencoded' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
  assertError(await request(`${service.gatewayUrl}/agent/v1/events`, { method: 'POST', key: service.apiKey, rawBody: '<xml/>', contentType: 'text/xml' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
});

test('an oversized body → 413: over 1 MiB on /public, over 16 MiB on /agent', async () => {
  const big = JSON.stringify([{ key: 'a', value: 'x'.repeat(1024 * 1024) }]);
  assertError(await request(`${service.apiUrl}/public/instance/vm-e/tags`, { method: 'POST', key: service.apiKey, rawBody: big }), 413, 'PAYLOAD_TOO_LARGE');
  const huge = Buffer.alloc(16 * 1024 * 1024 + 10, 0x20);
  assertError(await request(`${service.gatewayUrl}/agent/v1/events`, { method: 'POST', key: service.apiKey, rawBody: huge }), 413, 'PAYLOAD_TOO_LARGE');
  // The service is still healthy afterwards.
  assert.equal((await request(`${service.gatewayUrl}/opthub-health`)).status, 200);
});

test('unknown route → 404 NOT_FOUND on both ports', async () => {
  assertError(await request(`${service.apiUrl}/public/nothing/here`, { key: service.apiKey }), 404, 'NOT_FOUND');
  assertError(await request(`${service.gatewayUrl}/agent/v2/events`, { method: 'POST', key: service.apiKey, body: [] }), 404, 'NOT_FOUND');
  assertError(await request(`${service.apiUrl}/nothing`), 404, 'NOT_FOUND');
  // `/` on the API port is the web console's entry (a redirect); on the gateway it is nothing.
  assertError(await request(`${service.gatewayUrl}/`), 404, 'NOT_FOUND');
});

test("a static file named like an Object member (constructor, __proto__) → 404 NOT_FOUND, not a 500", async () => {
  for (const folder of ['/console/vendor', '/docs/assets']) {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      assertError(await request(`${service.apiUrl}${folder}/${name}`), 404, 'NOT_FOUND');
    }
  }
});

test('a 404 for a path the other port serves names that port: the gateway and the API are easily mixed up', async () => {
  const { port: apiPort } = new URL(service.apiUrl);
  const { port: gatewayPort } = new URL(service.gatewayUrl);
  // Plain fetch: the OpenAPI check of `request` knows this path as the API port's, where it is no 404.
  const onGateway = await fetch(`${service.gatewayUrl}/public/report/jvmInventory`, { method: 'POST', headers: { authorization: `Bearer ${service.apiKey}`, 'content-type': 'application/json' }, body: '{}' });
  assert.equal(onGateway.status, 404);
  assert.deepEqual(await onGateway.json(), { error: 'NOT_FOUND', message: `no route for POST /public/report/jvmInventory on this port; the API port, ${apiPort}, serves it` });
  const onApi = await request<{ message: string }>(`${service.apiUrl}/opthub-health`);
  assertError(onApi, 404, 'NOT_FOUND');
  assert.equal(onApi.body.message, `no route for GET /opthub-health on this port; the gateway port, ${gatewayPort}, serves it`);
  // A path neither serves is only not found.
  assert.equal((await request<{ message: string }>(`${service.apiUrl}/nothing`)).body.message, 'no route for GET /nothing');
});

test('known path, other method → 405 with Allow', async () => {
  const response = await request(`${service.apiUrl}/public/instance/vm-e`, { method: 'DELETE', key: service.apiKey });
  assertError(response, 405, 'METHOD_NOT_ALLOWED');
  assert.equal(response.headers.get('allow'), 'GET, HEAD');
  const health = await request(`${service.gatewayUrl}/opthub-health`, { method: 'POST', body: {} });
  assertError(health, 405, 'METHOD_NOT_ALLOWED');
});
