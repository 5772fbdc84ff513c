// HTTP/1.0, Host-less and malformed requests on a real service (issue: hardening, item 7): load balancers
// probe with HTTP/1.0 by default, so the gateway answers them; a malformed head gets a JSON error at once.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { vmStart } from '../helpers/events.ts';
import { request, startService } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

let service: RunningService;
let withApiFront: RunningService;
before(async () => {
  [service, withApiFront] = await Promise.all([startService(), startService({ args: ['--api-front', 'true'] })]);
});
after(() => Promise.all([service.stop(), withApiFront.stop()]));

interface RawAnswer {
  /** Every response on the connection, in order: status line, headers (lower-case names) and body. */
  responses: Array<{ statusLine: string; status: number; headers: Record<string, string>; body: string }>;
  /** Whether the server closed the connection (rather than the client giving up). */
  closedByServer: boolean;
  ms: number;
}

/** Writes bytes on a fresh connection (without half-closing it, as a probe does) and reads until the server closes it. */
function raw(url: string, bytes: string, giveUpMs = 5000): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let closedByServer = true;
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    const timer = setTimeout(() => {
      closedByServer = false;
      socket.destroy();
    }, giveUpMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ responses: parseResponses(Buffer.concat(chunks).toString('latin1'), bytes.startsWith('HEAD ')), closedByServer, ms: performance.now() - started });
    });
  });
}

/** Splits what the server sent into responses; after a HEAD request they have no body. */
function parseResponses(text: string, head: boolean): RawAnswer['responses'] {
  const responses: RawAnswer['responses'] = [];
  let rest = text;
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) throw new Error(`an incomplete response head: ${JSON.stringify(rest.slice(0, 200))}`);
    const [statusLine, ...fields] = rest.slice(0, end).split('\r\n');
    const headers = Object.fromEntries(fields.map((field) => [field.slice(0, field.indexOf(':')).toLowerCase(), field.slice(field.indexOf(':') + 1).trim()]));
    const length = head ? 0 : Number(headers['content-length'] ?? 0);
    responses.push({ statusLine, status: Number(statusLine.split(' ')[1]), headers, body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
  }
  return responses;
}

function only(answer: RawAnswer): RawAnswer['responses'][number] {
  assert.equal(answer.responses.length, 1, JSON.stringify(answer.responses));
  assert.ok(answer.closedByServer, 'the server closes the connection after answering');
  return answer.responses[0];
}

test('HAProxy and nginx probes: HTTP/1.0 and Host-less HTTP/1.1 health requests are answered UP', async () => {
  for (const probe of [
    'GET /opthub-health HTTP/1.0\r\n\r\n',
    'GET /opthub-health HTTP/1.0\r\nHost: lb.example\r\nConnection: close\r\n\r\n',
    'GET /opthub-health HTTP/1.1\r\n\r\n',
    'GET /opthub-health HTTP/1.1\r\nUser-Agent: probe\r\n\r\n',
  ]) {
    const response = only(await raw(service.gatewayUrl, probe));
    assert.equal(response.status, 200, probe);
    assert.equal(JSON.parse(response.body).healthState, 'UP', probe);
    assert.equal(response.headers['content-type'], 'application/json');
  }
});

test('an HTTP/1.0 HEAD probe gets the status, no body, and the connection closed', async () => {
  for (const probe of ['HEAD /opthub-health HTTP/1.0\r\n\r\n', 'HEAD /opthub-health HTTP/1.1\r\n\r\n']) {
    const response = only(await raw(service.gatewayUrl, probe));
    assert.equal(response.status, 200, probe);
    assert.equal(response.body, '');
  }
});

test('an agent batch posted with HTTP/1.0 is stored, its body relayed whole', async () => {
  const body = JSON.stringify([vmStart('http10-vm', Date.now())]);
  const bytes = `POST /agent/v1/events HTTP/1.0\r\nContent-Type: application/json\r\nx-api-key: ${service.apiKey}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  const response = only(await raw(service.gatewayUrl, bytes));
  assert.deepEqual([response.status, JSON.parse(response.body)], [200, { accepted: 1 }]);
  assert.equal((await request(`${service.apiUrl}/public/instance/http10-vm`, { key: service.apiKey })).status, 200);
});

test('a request with as many header fields as uWebSockets.js reads (48) is answered', async () => {
  const response = only(await raw(service.gatewayUrl, `GET /opthub-health HTTP/1.1\r\nHost: a\r\nConnection: close\r\n${'X-Many: 1\r\n'.repeat(46)}\r\n`));
  assert.equal(response.status, 200);
});

test('a kept-alive HTTP/1.1 connection serves several requests, as before', async () => {
  const get = 'GET /opthub-health HTTP/1.1\r\nHost: a\r\n\r\n';
  const answer = await raw(service.gatewayUrl, `${get}${get}GET /opthub-health HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n`);
  assert.deepEqual(answer.responses.map((response) => response.status), [200, 200, 200]);
  assert.ok(answer.closedByServer);
});

test('malformed request heads get a JSON error at once and the connection is closed', async () => {
  const cases: Array<[string, number, string]> = [
    ['garbage\r\n\r\n', 400, 'BAD_REQUEST'],
    ['GET /opthub-health HTTP/1.1\r\nHost: a\r\nX-Bad: a\0b\r\n\r\n', 400, 'BAD_REQUEST'],
    ['GET /opthub-health HTTP/1.1\nHost: a\n\n', 400, 'BAD_REQUEST'],
    ['GET /opthub-health HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n', 400, 'BAD_REQUEST'],
    ['GET /opthub-health HTTP/2.0\r\nHost: a\r\n\r\n', 505, 'HTTP_VERSION_NOT_SUPPORTED'],
    ['GET http://a/opthub-health HTTP/1.1\r\nHost: a\r\n\r\n', 400, 'BAD_REQUEST'],
    ['OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n', 400, 'BAD_REQUEST'],
    ['POST /agent/v1/events HTTP/1.1\r\nHost: a\r\nContent-Length: abc\r\n\r\n', 400, 'BAD_REQUEST'],
    // uWebSockets.js closes the connection on these without a word.
    ['POST /agent/v1/events HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n[]', 400, 'BAD_REQUEST'],
    ['POST /agent/v1/events HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n', 501, 'NOT_IMPLEMENTED'],
    ['get /opthub-health HTTP/1.1\r\nHost: a\r\n\r\n', 501, 'NOT_IMPLEMENTED'],
    ['PROPFIND /opthub-health HTTP/1.1\r\nHost: a\r\n\r\n', 501, 'NOT_IMPLEMENTED'],
    [`GET /opthub-health HTTP/1.1\r\nHost: a\r\nX-Big: ${'x'.repeat(20_000)}\r\n\r\n`, 431, 'HEADERS_TOO_LARGE'],
    // uWebSockets.js leaves a request with 49 header fields unanswered: the front refuses it.
    [`GET /opthub-health HTTP/1.1\r\nHost: a\r\n${'X-Many: 1\r\n'.repeat(48)}\r\n`, 431, 'HEADERS_TOO_LARGE'],
  ];
  for (const [bytes, status, code] of cases) {
    const answer = await raw(service.gatewayUrl, bytes);
    const response = only(answer);
    const label = JSON.stringify(bytes.slice(0, 60));
    assert.equal(response.status, status, label);
    assert.equal(JSON.parse(response.body).error, code, label);
    assert.ok(answer.ms < 2000, `${label} answered after ${answer.ms} ms`);
  }
  const metrics = await (await fetch(`${service.gatewayUrl}/metrics`)).text();
  assert.match(metrics, /route="malformed"[^\n]*status="400"[^\n]* [1-9]/);
  const health = await request(`${service.gatewayUrl}/opthub-health`);
  assert.equal(health.status, 200, 'health untouched');
});

test('the API port speaks HTTP/1.1 directly by default, and HTTP/1.0 too with --api-front true', async () => {
  const get = (key: string): string => `GET /public/instance/none HTTP/1.0\r\nx-api-key: ${key}\r\n\r\n`;
  const fronted = only(await raw(withApiFront.apiUrl, get(withApiFront.apiKey)));
  assert.deepEqual([fronted.status, JSON.parse(fronted.body).error], [404, 'VM_NOT_FOUND']);
  assert.equal(only(await raw(withApiFront.apiUrl, 'garbage\r\n\r\n')).status, 400);
  // Without the front, uWebSockets.js leaves an HTTP/1.0 request unanswered (README "HTTP versions").
  const direct = await raw(service.apiUrl, get(service.apiKey), 1500);
  assert.deepEqual([direct.responses.length, direct.closedByServer], [0, false]);
  const ok = await request(`${service.apiUrl}/public/instance/none`, { key: service.apiKey });
  assert.equal(ok.status, 404);
});
