// A difference in the log's last window, which fills slowly or never (a chaos row's last writes differed in
// a window the run never filled, and one node kept a VM the others lacked): while the log is quiet, each node
// compares the window it read so far, and the odd one out rebuilds itself. Real processes, one nats-server,
// three nodes comparing every 1,024 commands (`--test-log-check-every`), one of which hashes other bytes than
// it read at the log's start (`--test-faults misread-log`); a few writes, then none.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { startNatsServers } from '../../src/cluster/nats-servers.ts';
import type { NatsServer } from '../../src/cluster/nats-servers.ts';
import { ingest, vmStart } from '../helpers/events.ts';
import { request, startService, tempDir, waitForHealth } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

const missing = spawnSync('nats-server', ['--version']).error !== undefined;
if (missing && process.env.CI === 'true') throw new Error('nats-server is not installed (apt-get install nats-server)');
const KEY = 'log_tail_test_key_0123456789abc';

let nats: NatsServer[] = [];
const nodes: RunningService[] = [];

before(async () => {
  if (missing) return;
  const dir = tempDir('jvmlens-log-tail-');
  nats = await startNatsServers(1, dir);
  for (const nodeId of ['a', 'b', 'c']) {
    const args = ['--api-key', KEY, '--cluster', nats[0].url, '--node-id', nodeId, '--test-log-check-every', '1024', ...(nodeId === 'b' ? ['--test-faults', 'misread-log'] : [])];
    nodes.push(await startService({ noStaticKey: true, dataDir: `${dir}/${nodeId}`, args }));
  }
});

after(async () => {
  await Promise.all(nodes.map((node) => node.stop()));
  await Promise.all(nats.map((server) => server.stop()));
});

test('while the log is quiet, a node whose reading of its last, unfilled window differs from the two others\' rebuilds itself', { skip: missing && 'nats-server is not installed' }, async () => {
  const [a, b, c] = nodes;
  const vmIds = Array.from({ length: 6 }, (_, k) => `7a11e000-0000-4000-8000-${String(k).padStart(12, '0')}`);
  for (const vmId of vmIds) assert.equal((await ingest(a.gatewayUrl, KEY, [vmStart(vmId, Date.now())])).status, 200);
  // Quiet from here: within a few checks (every 5 s) b finds it read the odd history, rebuilds, and is UP.
  const deadline = Date.now() + 60_000;
  while (!b.stderr().includes('this node starts from a copy of a live node\'s data')) {
    assert.ok(Date.now() < deadline, b.stderr());
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await waitForHealth(b, 200, 30_000);
  assert.match(b.stderr(), /this node read another history of the cluster log than every other node","from":1,"to":\d+,"nodes":\["a","c"\]/);
  for (const node of [a, c]) assert.doesNotMatch(node.stderr(), /restarting to take a copy/);
  for (const vmId of vmIds) assert.equal((await request(`${b.apiUrl}/public/instance/${vmId}`, { key: KEY })).status, 200);
});
