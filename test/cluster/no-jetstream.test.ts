// An operator who starts nats-server without JetStream (its default) and points jvmlens at it: what a user
// relies on is being told so within seconds, by the CLI (exit 4) and by the node's health, which names the
// flag to add, rather than a minute of silence. Real processes: one nats-server without JetStream, a node.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, test } from 'node:test';
import { natsMissing, startNatsServer } from '../helpers/cluster.ts';
import { freePort, request, runCli, startService } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

const skip = natsMissing && 'nats-server is not installed';
let url = '';
let natsServer: ChildProcess | null = null;
let node: RunningService | null = null;

before(async () => {
  if (skip) return;
  const port = await freePort();
  url = `nats://127.0.0.1:${port}`;
  natsServer = await startNatsServer(['-a', '127.0.0.1', '-p', String(port)], port);
});

after(async () => {
  await node?.stop();
  natsServer?.kill();
});

const NOT_ENABLED = /JetStream is not enabled on the NATS servers at nats:\/\/127\.0\.0\.1:\d+ \(no server answered its API for 5 s\): start nats-server with --jetstream/;

test('a command against a NATS server without JetStream says so and exits 4 within seconds', { skip }, async () => {
  const started = Date.now();
  const answered = await runCli(['cluster', 'status', '--cluster', url]);
  assert.equal(answered.code, 4, answered.stdout + answered.stderr);
  assert.match(answered.stderr, /^jvmlens: cannot reach the cluster: /);
  assert.match(answered.stderr, NOT_ENABLED);
  // Before, it waited the minute a cluster's election may take.
  assert.ok(Date.now() - started < 20_000, `answered after ${Date.now() - started} ms`);
});

test('a node on a NATS server without JetStream is DOWN, and its health says what to start', { skip }, async () => {
  const started = Date.now();
  const joining = await startService({ args: ['--cluster', url, '--node-id', 'z1'], waitReady: false });
  node = joining;
  let note = '';
  while (Date.now() - started < 30_000) {
    const health = await request<{ note: string }>(`${joining.gatewayUrl}/opthub-health`);
    assert.equal(health.status, 503);
    note = health.body.note;
    if (NOT_ENABLED.test(note)) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  assert.match(note, /^joining the cluster failed \(attempt \d+\): /);
  assert.match(note, NOT_ENABLED);
});
