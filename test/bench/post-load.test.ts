// The bench's POST load: every body acknowledged; a 503 with Retry-After waited out and the body sent again,
// as an agent does (a cluster node catching up answers so); any other refusal fails the run.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { runPostLoad } from '../../bench/post-load.ts';

/** A server answering each POST with `answer(n)` for the n-th body it receives (from 0), and the bodies it took. */
async function serve(answer: (n: number) => { status: number; headers?: Record<string, string> }): Promise<{ server: Server; url: string; bodies: string[] }> {
  const bodies: string[] = [];
  let n = 0;
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const { status, headers } = answer(n++);
      if (status === 200) bodies.push(Buffer.concat(chunks).toString());
      response.writeHead(status, headers).end(status === 200 ? '{}' : '{"error":"NOT_READY"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/agent/v1/events`, bodies };
}

const body = (index: number) => ({ bytes: Buffer.from(`body ${index}`), items: 10 });

test('503 with Retry-After: each refused body is sent again until acknowledged, and counted', async () => {
  // The second and third answers refuse: the second body goes three times.
  const { server, url, bodies } = await serve((n) => (n === 1 || n === 2 ? { status: 503, headers: { 'retry-after': '0' } } : { status: 200 }));
  try {
    const result = await runPostLoad({ url, headers: {}, connections: 1, requests: 3, next: body });
    assert.equal(result.requests, 3);
    assert.equal(result.refused, 2);
    assert.equal(result.items, 30);
    assert.deepEqual(bodies, ['body 0', 'body 1', 'body 2']);
  } finally {
    server.close();
  }
});

for (const [what, answer] of [
  ['503 without Retry-After', { status: 503 }],
  ['400', { status: 400 }],
] as const) {
  test(`${what} fails the run`, async () => {
    const { server, url } = await serve((n) => (n === 0 ? answer : { status: 200 }));
    try {
      await assert.rejects(runPostLoad({ url, headers: {}, connections: 2, requests: 4, next: body }), new RegExp(`answered ${answer.status}`));
    } finally {
      server.close();
    }
  });
}
