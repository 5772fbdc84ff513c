// `x-jvmlens-consistency` (README "Reads that need not wait"): a single node answers a read alike with either
// value, and any other value is a 400 that names the header and its values, on a connection that stays open
// (unlike the 400 of an ambiguous request).
// The cluster's side is in test/cluster/local-reads.test.ts.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { ingest, vmStart } from '../helpers/events.ts';
import { request, startService } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

let service: RunningService;

before(async () => {
  service = await startService();
  assert.equal((await ingest(service.gatewayUrl, service.apiKey, [vmStart('vm-consistency', Date.now())])).status, 200);
});

after(() => service.stop());

test('a single node answers a read alike with either consistency', async () => {
  const url = `${service.apiUrl}/public/instance/vm-consistency`;
  const plain = await request(url, { key: service.apiKey });
  assert.equal(plain.status, 200);
  for (const consistency of ['local', 'read-your-writes']) {
    const read = await request(url, { key: service.apiKey, headers: { 'x-jvmlens-consistency': consistency } });
    assert.equal(read.status, 200, consistency);
    assert.deepEqual(read.body, plain.body, consistency);
  }
});

test('any other consistency is a 400 naming the header and the values it takes', async () => {
  for (const consistency of ['eventual', 'LOCAL', 'local, local']) {
    const read = await request(`${service.apiUrl}/public/cve/events?limit=1`, { key: service.apiKey, headers: { 'x-jvmlens-consistency': consistency } });
    assert.equal(read.status, 400, consistency);
    assert.equal(read.body.error, 'BAD_REQUEST');
    assert.match(read.body.message, /'x-jvmlens-consistency' is 'read-your-writes' \(the default\) or 'local'/);
  }
});

/**
 * Sends `first` on a new connection, then, unless the service closed it after its answer, `second`: the
 * statuses of the answers that came.
 */
async function twoOnOneConnection(first: string, second: string): Promise<number[]> {
  const socket = connect(Number(new URL(service.apiUrl).port), '127.0.0.1');
  socket.on('error', () => undefined);
  let received = '';
  let closed = false;
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('latin1');
  });
  socket.on('close', () => {
    closed = true;
  });
  const statuses = () => [...received.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));
  /** Until `count` answers came or the service closed the connection (5 s at most). */
  const answered = async (count: number) => {
    for (const deadline = Date.now() + 5_000; statuses().length < count && !closed && Date.now() < deadline;) await new Promise((resolve) => setTimeout(resolve, 20));
  };
  socket.write(first);
  await answered(1);
  // The answer's body, then a moment in which a connection to be closed is closed.
  await new Promise((resolve) => setTimeout(resolve, 200));
  if (!closed) socket.write(second);
  await answered(2);
  socket.destroy();
  return statuses();
}

const read = (headers: string) => `GET /public/instance/vm-consistency HTTP/1.1\r\nHost: jvmlens\r\nx-api-key: ${service.apiKey}\r\n${headers}\r\n`;

test('the connection that got that 400 answers the next request: it is no framing error', async () => {
  assert.deepEqual(await twoOnOneConnection(read('x-jvmlens-consistency: eventual\r\n'), read('x-jvmlens-consistency: local\r\n')), [400, 200]);
  // An ambiguous request (here two keys, as two Content-Length values would be) still ends its connection after the 400.
  assert.deepEqual(await twoOnOneConnection(read(`x-api-key: ${service.apiKey}\r\n`), read('')), [400]);
});
