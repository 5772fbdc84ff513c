// A node that read another history of the log than the others is named in health: real processes, one
// nats-server and three nodes comparing their reading every 4 commands (`--test-log-check-every`), one of
// which hashes other bytes than it read (`--test-faults misread-log`), as a node whose server gave it
// another history would. The two that read alike never name each other, and every node stays UP.
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

before(async () => {
  if (missing) return;
  const dir = tempDir('jvmlens-log-mismatch-');
  nats = await startNatsServers(1, dir);
  for (const nodeId of ['a', 'b', 'c']) {
    const args = ['--api-key', KEY, '--cluster', nats[0].url, '--node-id', nodeId, '--test-log-check-every', '4', ...(nodeId === 'b' ? ['--test-faults', 'misread-log'] : [])];
    nodes.push(await startService({ noStaticKey: true, dataDir: `${dir}/${nodeId}`, args }));
  }
});

after(async () => {
  await Promise.all(nodes.map((node) => node.stop()));
  await Promise.all(nats.map((server) => server.stop()));
});

test('a node that read the log otherwise than the others is named in health, and the nodes that read alike do not name each other', { skip: missing && 'nats-server is not installed' }, async () => {
  for (let index = 0; index < 12; index++) {
    const written = await ingest(nodes[index % 3].gatewayUrl, KEY, [vmStart(`10c5e000-0000-4000-8000-${String(index).padStart(12, '0')}`, Date.now())]);
    assert.equal(written.status, 200, JSON.stringify(written.body));
  }
  // Every node applied the twelve writes, and so read three whole windows of the log.
  for (const node of nodes) assert.equal((await request(`${node.apiUrl}/public/instance/10c5e000-0000-4000-8000-000000000011`, { key: KEY })).status, 200);
  const notes = async () => Promise.all(nodes.map(async (node) => {
    const health = await request(`${node.gatewayUrl}/opthub-health`);
    assert.equal(health.status, 200, `${health.text}: a node that read otherwise still serves`);
    return String(health.body.note ?? '');
  }));
  const deadline = Date.now() + 10_000;
  let [a, b, c] = await notes();
  // Whichever of a node and b recorded a window later names the other: b, or both a and c.
  while (!(b.includes('JetStream\'s replicas disagree') || (a.includes('disagree') && c.includes('disagree'))) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    [a, b, c] = await notes();
  }
  const named = (note: string) => /from what ([\w, ]+) read/.exec(note)?.[1].split(', ') ?? [];
  assert.ok(named(b).length > 0 || (named(a).length > 0 && named(c).length > 0), `notes: a '${a}', b '${b}', c '${c}'`);
  for (const other of named(b)) assert.ok(['a', 'c'].includes(other));
  assert.deepEqual(named(a).filter((other) => other !== 'b'), [], `a names only b: '${a}'`);
  assert.deepEqual(named(c).filter((other) => other !== 'b'), [], `c names only b: '${c}'`);
});
