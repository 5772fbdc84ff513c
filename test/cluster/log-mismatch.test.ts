// A node that read another history of the log than the others goes DOWN and says why: real processes, one
// nats-server and three nodes comparing their reading every 4 commands (`--test-log-check-every`), one of
// which hashes other bytes than it read (`--test-faults misread-log`), as a node whose server gave it
// another history would. The two that read alike stay UP and never name each other; the odd one stays DOWN
// when restarted on its data, and is UP once rebuilt from the log.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { startNatsServers } from '../../src/cluster/nats-servers.ts';
import type { NatsServer } from '../../src/cluster/nats-servers.ts';
import { ingest, vmStart } from '../helpers/events.ts';
import { request, startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

const missing = spawnSync('nats-server', ['--version']).error !== undefined;
if (missing && process.env.CI === 'true') throw new Error('nats-server is not installed (apt-get install nats-server)');
const KEY = 'log_mismatch_test_key_01234567';

let nats: NatsServer[] = [];
const nodes: RunningService[] = [];
let dir = '';
const args = (nodeId: string, ...faults: string[]) => ['--api-key', KEY, '--cluster', nats[0].url, '--node-id', nodeId, '--test-log-check-every', '4', ...(faults.length > 0 ? ['--test-faults', faults.join(',')] : [])];

before(async () => {
  if (missing) return;
  dir = tempDir('jvmlens-log-mismatch-');
  nats = await startNatsServers(1, dir);
  for (const nodeId of ['a', 'b', 'c']) nodes.push(await startService({ noStaticKey: true, dataDir: `${dir}/${nodeId}`, args: nodeId === 'b' ? args(nodeId, 'misread-log') : args(nodeId) }));
});

after(async () => {
  await Promise.all(nodes.map((node) => node.stop()));
  await Promise.all(nats.map((server) => server.stop()));
});

test('the node that read the log otherwise than the two others is DOWN and says why, across a restart until rebuilt; the two stay UP', { skip: missing && 'nats-server is not installed' }, async () => {
  const healthOf = async (node: RunningService) => {
    const health = await request(`${node.gatewayUrl}/opthub-health`);
    return { status: health.status, note: String(health.body.note ?? '') };
  };
  const [a, b, c] = nodes;
  // Writes through a and c (b turns DOWN meanwhile), until b compared a window the two others recorded too
  // (every 4 commands).
  const deadline = Date.now() + 30_000;
  let index = 0;
  let odd = await healthOf(b);
  while (odd.status === 200 && Date.now() < deadline) {
    const written = await ingest([a, c][index % 2].gatewayUrl, KEY, [vmStart(`10c5e000-0000-4000-8000-${String(index).padStart(12, '0')}`, Date.now())]);
    assert.equal(written.status, 200, JSON.stringify(written.body));
    index++;
    odd = await healthOf(b);
  }
  assert.equal(odd.status, 503, `b after ${index} writes: ${odd.note}`);
  assert.match(odd.note, /^this node read the cluster log's commands \d+ to \d+ otherwise than a and c, which agree \(JetStream's replicas disagree\)/);
  for (const node of [a, c]) {
    const health = await healthOf(node);
    assert.equal(health.status, 200, health.note);
    // Each names b at most (once it compared a window b recorded), never the other.
    const named = /from what ([\w, ]+) read/.exec(health.note)?.[1].split(', ') ?? [];
    assert.deepEqual(named.filter((other) => other !== 'b'), [], health.note);
  }

  // Restarted as it is (now reading right), b stays DOWN: the data it applied is still the odd history's.
  await b.stop({ keepData: true });
  nodes[1] = await startService({ noStaticKey: true, dataDir: `${dir}/b`, args: args('b'), waitReady: false });
  // DOWN from its start (joining, replaying), then for that reason, and not UP in between.
  const restartedBy = Date.now() + 20_000;
  let restarted = await healthOf(nodes[1]);
  while (restarted.note !== odd.note && Date.now() < restartedBy) {
    assert.equal(restarted.status, 503, restarted.note);
    await new Promise((resolve) => setTimeout(resolve, 200));
    restarted = await healthOf(nodes[1]);
  }
  assert.deepEqual(restarted, odd);
  // Rebuilt (its data directory deleted), it replays the log and is UP.
  await nodes[1].stop();
  nodes[1] = await startService({ noStaticKey: true, dataDir: `${dir}/b`, args: args('b') });
  assert.equal((await request(`${nodes[1].apiUrl}/public/instance/10c5e000-0000-4000-8000-000000000000`, { key: KEY })).status, 200, 'the rebuilt node holds the writes');
});
