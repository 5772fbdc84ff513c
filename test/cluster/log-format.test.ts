// Every node of a cluster runs one jvmlens version: a node of another version writes log commands this one
// cannot apply, or applies this one's wrongly. What an operator relies on during an upgrade done node by node
// (which the README says not to do): the new node does not join while a node of the old version is live,
// says why in its health, and joins once that node is gone. Real processes: one nats-server with JetStream
// and a jvmlens node; the old node is its heartbeat, as versions before the log format announced it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { Kvm } from '@nats-io/kv';
import type { KV } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { startNatsServers } from '../../src/cluster/nats-servers.ts';
import type { NatsServer } from '../../src/cluster/nats-servers.ts';
import { ingest, vmStart } from '../helpers/events.ts';
import { request, startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

const missing = spawnSync('nats-server', ['--version']).error !== undefined;
if (missing && process.env.CI === 'true') throw new Error('nats-server is not installed (apt-get install nats-server)');
const skip = missing && 'nats-server is not installed';

const KEY = 'log_format_test_key_0123456789';
let nats: NatsServer[] = [];
let nc: NatsConnection | null = null;
let node: RunningService | null = null;

before(async () => {
  if (missing) return;
  nats = await startNatsServers(1, tempDir('jvmlens-log-format-'));
  nc = await connect({ servers: nats[0].url });
});

after(async () => {
  await node?.stop();
  await nc?.close();
  await Promise.all(nats.map((server) => server.stop()));
});

async function healthUntil(service: RunningService, done: (health: { status: number; note: string }) => boolean, ms: number) {
  const deadline = Date.now() + ms;
  for (;;) {
    const response = await request(`${service.gatewayUrl}/opthub-health`);
    const health = { status: response.status, note: String(response.body?.note ?? '') };
    if (done(health) || Date.now() > deadline) return health;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

test('a node does not join while a node of an earlier version is live, says so, and joins once it is gone', { skip }, async () => {
  // The membership bucket as nodes make it, holding the heartbeat of a node of the version before log formats.
  const kv: KV = await new Kvm(nc!).create('jvmlens_nodes', { ttl: 15_000, replicas: 1, history: 1 });
  const old = JSON.stringify({ nodeId: 'n-old', gatewayPort: 1, apiPort: 2, startedAt: Date.now(), codeGroup: 0 });
  await kv.put('n-old', old);
  const renewal = setInterval(() => void kv.put('n-old', old).catch(() => undefined), 3_000);
  try {
    node = await startService({ noStaticKey: true, waitReady: false, args: ['--api-key', KEY, '--node-id', 'n1', '--cluster', nats[0].url] });
    const refused = await healthUntil(node, (health) => /n-old/.test(health.note), 20_000);
    assert.equal(refused.status, 503, refused.note);
    assert.match(refused.note, /^joining the cluster failed \(attempt \d+\): live node\(s\) n-old \(log format 1\) run another jvmlens version than this node \(log format \d+\), and would not apply the log alike: stop every node, then start one version on each$/);
    assert.equal((await kv.get('n1'))?.operation ?? 'none', 'none', 'the node announced no heartbeat: it did not join');
  } finally {
    clearInterval(renewal);
  }
  // The old node stopped (a clean stop deletes its heartbeat): the node joins at its next attempt.
  await kv.delete('n-old');
  const up = await healthUntil(node, (health) => health.status === 200, 30_000);
  assert.equal(up.status, 200, up.note);
  const vmId = '0f0a0a00-0000-4000-8000-000000000001';
  assert.equal((await ingest(node.gatewayUrl, KEY, [vmStart(vmId, Date.now() - 1_000)])).status, 200);
  assert.equal((await request(`${node.apiUrl}/public/instance/${vmId}`, { key: KEY })).status, 200);
});
