// Health on the gateway: readiness, shutdown, body shape, and absence on the API port (decisions §3).
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { test } from 'node:test';
import { request, startService, waitForHealth } from '../helpers/service.ts';

function assertHealthBody(body: any, status: number): void {
  assert.deepEqual(Object.keys(body).sort(), ['code', 'healthState', 'message', 'note']);
  assert.equal(body.code, status);
  assert.equal(body.healthState, status === 200 ? 'UP' : 'DOWN');
  assert.equal(typeof body.message, 'string');
  assert.equal(typeof body.note, 'string');
}

test('health is DOWN (503) until the service is ready, then UP (200), and DOWN again while shutting down', async () => {
  const service = await startService({ waitReady: false, args: ['--test-ready-delay-ms', '1500', '--shutdown-grace-ms', '1500'] });
  try {
    const down = await request(`${service.gatewayUrl}/opthub-health`);
    assert.equal(down.status, 503);
    assertHealthBody(down.body, 503);
    assert.match(down.body.note, /test delay/);
    assert.equal(down.headers.get('cache-control'), 'no-store');

    // While DOWN, the public API and ingestion answer 503 with Retry-After.
    const api = await request(`${service.apiUrl}/public/instance/x`, { key: service.apiKey });
    assert.equal(api.status, 503);
    assert.equal(api.headers.get('retry-after'), '1');
    assert.equal(api.body.error, 'NOT_READY');
    const me = await request(`${service.apiUrl}/public/me`, { key: service.apiKey });
    assert.deepEqual([me.status, me.headers.get('retry-after'), me.body.error], [503, '1', 'NOT_READY']);

    await waitForHealth(service, 200);
    const up = await request(`${service.gatewayUrl}/opthub-health`);
    assert.equal(up.status, 200);
    assertHealthBody(up.body, 200);
    assert.equal(up.body.note, '');

    service.child.kill('SIGTERM');
    await waitForHealth(service, 503, 1000);
    const stopping = await request(`${service.gatewayUrl}/opthub-health`);
    assertHealthBody(stopping.body, 503);
    assert.match(stopping.body.note, /shutting down/);
  } finally {
    assert.equal(await service.stop(), 0, 'a graceful shutdown exits with code 0');
  }
});

test('health answers HEAD, and is not served on the public API port', async () => {
  const service = await startService();
  try {
    const head = await fetch(`${service.gatewayUrl}/opthub-health`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), '');
    const onApi = await request(`${service.apiUrl}/opthub-health`);
    assert.equal(onApi.status, 404);
    assert.equal(onApi.body.error, 'NOT_FOUND');
  } finally {
    await service.stop();
  }
});

test('SIGINT also shuts down gracefully with exit code 0', async () => {
  const service = await startService();
  assert.equal(await service.stop({ signal: 'SIGINT' }), 0);
});

test('SIGHUP (the terminal closed) shuts down gracefully with exit code 0, saying so', async () => {
  const service = await startService();
  assert.equal(await service.stop({ signal: 'SIGHUP' }), 0);
  assert.match(service.stdout() + service.stderr(), /shutting down.*SIGHUP/);
});

/** Sends a request head and part of its body, then closes the connection: a client that left mid-body. */
async function leaveMidBody(url: string, path: string, key: string): Promise<void> {
  const { hostname, port } = new URL(url);
  const socket = connect({ host: hostname, port: Number(port) });
  await once(socket, 'connect');
  socket.end(`POST ${path} HTTP/1.1\r\nHost: jvmlens\r\nx-api-key: ${key}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n[`);
  await once(socket, 'close');
}

test('a client that left in the middle of its body does not hold the shutdown: SIGTERM still exits with code 0', async () => {
  const service = await startService();
  await leaveMidBody(service.apiUrl, '/public/report/jvmInventory', service.apiKey);
  // The gateway's front passes no client FIN on (front.ts): uWS gives up on the body at its idle timeout.
  await leaveMidBody(service.gatewayUrl, '/agent/v1/events', service.apiKey);
  const exited = service.stop();
  const waited = await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 30_000, 'still running after 30 s'))]);
  if (waited === 'still running after 30 s') service.child.kill('SIGKILL');
  assert.equal(waited, 0);
});
