// The HTTP load generator against a local node:http server: counts, merged latencies, paths in turn, CPU steal, failures.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { runLoad } from '../../bench/load.ts';

const seen = new Map<string, number>();
let keys = new Set<string>();
const server = createServer((request, response) => {
  const path = request.url ?? '';
  seen.set(path, (seen.get(path) ?? 0) + 1);
  if (request.headers['x-api-key'] !== undefined) keys.add(String(request.headers['x-api-key']));
  response.writeHead(path === '/missing' ? 404 : 200).end('ok');
});
let origin = '';

before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => server.close());

test('requests every path in turn with the headers, and keeps a latency for every response', async () => {
  seen.clear();
  keys = new Set();
  const result = await runLoad(origin, { paths: ['/a', '/b?x=1'], headers: { 'x-api-key': 'k1' }, connections: 2, seconds: 1 });
  assert.ok(result.requests > 0);
  // wrk adds samples for the requests a slow answer held back (its coordinated-omission correction).
  assert.ok(result.latencies.count >= result.requests, `${result.latencies.count} latencies, ${result.requests} requests`);
  assert.ok(result.seconds >= 0.9 && result.seconds < 5, `seconds ${result.seconds}`);
  const a = seen.get('/a') ?? 0;
  const b = seen.get('/b?x=1') ?? 0;
  assert.ok(a > 0 && b > 0 && Math.abs(a - b) <= 2 + (a + b) * 0.01, `/a ${a}, /b ${b}`);
  assert.deepEqual([...keys], ['k1']);
  for (const ms of result.latencies.values()) assert.ok(ms >= 0 && ms < 10_000);
  // Linux has /proc/stat: the machine's CPU steal during the run is a share of its CPU time.
  if (process.platform === 'linux') assert.ok(result.stealPercent !== null && result.stealPercent >= 0 && result.stealPercent <= 100, `steal ${result.stealPercent}`);
  else assert.equal(result.stealPercent, null);
});

test('a run with error answers fails rather than reporting misleading figures', async () => {
  await assert.rejects(runLoad(origin, { paths: ['/missing'], headers: {}, connections: 1, seconds: 1 }), /load on/);
});
