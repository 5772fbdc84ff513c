// A rebuilding cluster node's ports are held (src/http/port-placeholder.ts): health answers DOWN with why,
// every other request 503 NOT_READY; released, the service's own listeners (uWS, and the gateway's front
// thread) take the same ports at once, though the placeholder's closed connections linger on them; and a
// client's connection kept alive across the restart reaches the new service, not the one that closed.
import assert from 'node:assert/strict';
import { Agent, get } from 'node:http';
import { test } from 'node:test';
import { PortPlaceholder } from '../../src/http/port-placeholder.ts';
import { HttpServer } from '../../src/http/server.ts';
import { Metrics } from '../../src/http/metrics.ts';
import { freePort } from '../helpers/service.ts';

const server = (front: boolean, name = 'service') => new HttpServer({
  routes: [{ method: 'GET' as const, pattern: '/opthub-health', handler: () => ({ status: 200, body: { healthState: 'UP', name } }) }],
  front, bodyLimit: 1024, metrics: new Metrics(), logger: quiet, notReadyReason: () => null,
  authenticate: () => { throw new Error('no route here needs a key'); }, onStorageFailure: () => undefined,
});

const WHY = 'restarting to take a copy of another node\'s data: this node read another history of the cluster log';
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

test('a held port answers DOWN and 503 NOT_READY with why; released, the service listens on it again', async () => {
  const ports = [await freePort(), await freePort()];
  const placeholder = await PortPlaceholder.hold('127.0.0.1', ports, WHY);
  const health = await fetch(`http://127.0.0.1:${ports[0]}/opthub-health`);
  assert.equal(health.status, 503);
  assert.deepEqual(await health.json(), { healthState: 'DOWN', code: 503, message: 'jvmlens is not ready', note: WHY });
  const write = await fetch(`http://127.0.0.1:${ports[1]}/agent/v1/events`, { method: 'POST', body: '{"vmId":"x"}\n' });
  assert.equal(write.status, 503);
  assert.equal(write.headers.get('retry-after'), '1');
  assert.deepEqual(await write.json(), { error: 'NOT_READY', message: `service not ready: ${WHY}` });
  // Another listener cannot take a held port.
  await assert.rejects(PortPlaceholder.hold('127.0.0.1', [ports[0]], WHY), /EADDRINUSE/);

  await placeholder.release();
  const servers = [true, false].map((front) => server(front));
  try {
    assert.deepEqual([await servers[0].listen('127.0.0.1', ports[0]), await servers[1].listen('127.0.0.1', ports[1])], ports);
    for (const port of ports) assert.equal((await fetch(`http://127.0.0.1:${port}/opthub-health`)).status, 200);
  } finally {
    await Promise.all(servers.map((server) => server.close()));
  }
});

test('a service given port 0 can listen again on the port it got, though connections it closed linger there', async () => {
  // uSockets leaves SO_REUSEADDR off a listener given port 0: its closed connections' TIME_WAIT then kept any
  // listener off the port for a minute, and a cluster node rebuilding itself on its ports exited.
  for (const front of [false, true]) {
    const first = server(front);
    const port = await first.listen('127.0.0.1', 0);
    for (let i = 0; i < 10; i++) {
      const answer = await fetch(`http://127.0.0.1:${port}/opthub-health`, { headers: { connection: 'close' } });
      assert.equal(answer.status, 200);
      await answer.text();
    }
    await first.close();
    const again = server(front);
    try {
      assert.equal(await again.listen('127.0.0.1', port), port, front ? 'behind the front' : 'uWS directly');
    } finally {
      await again.close();
    }
  }
});

/** The name of the server that answered a health GET sent through `agent`, or the status and error code of a refusal. */
function answeredBy(port: number, agent: Agent): Promise<string> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path: '/opthub-health', agent }, (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => {
        const body = JSON.parse(text) as { name?: string; error?: string };
        resolve(response.statusCode === 200 ? String(body.name) : `${response.statusCode} ${body.error}`);
      });
    }).on('error', reject);
  });
}

test('a connection a client keeps alive across a restart in the same process reaches the new service', async () => {
  // A rebuilding node closes its service and starts another on the same ports (src/cli/serve.ts). A load
  // balancer's pooled connection to the first must not keep getting its answers: a chaos run's checker read
  // 503 NOT_READY (restarting) from a rebuilt node for two minutes, through one kept-alive connection.
  for (const front of [false, true]) {
    const first = server(front, 'first');
    const port = await first.listen('127.0.0.1', 0);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      assert.equal(await answeredBy(port, agent), 'first');
      await first.close();
      const second = server(front, 'second');
      await second.listen('127.0.0.1', port);
      try {
        // The closed server may answer the first request sent on its kept connection, 503 NOT_READY, and
        // closes the connection; never with its routes, and never again.
        const names = [];
        for (let i = 0; i < 4; i++) names.push(await answeredBy(port, agent));
        assert.deepEqual(names.slice(1), ['second', 'second', 'second'], `${front ? 'behind the front' : 'uWS directly'}: ${names.join(', ')}`);
        assert.match(names[0], /^(second|503 NOT_READY)$/);
      } finally {
        await second.close();
      }
    } finally {
      agent.destroy();
    }
  }
});
