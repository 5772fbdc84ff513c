// A node's hashes of the log's windows (src/cluster/applied-windows.ts) are kept in its store as it applies
// them: a node killed before it recorded them in the bucket (its record waits for JetStream, which a paused
// server can hold up for seconds) records them at its next start, so the window checks still compare what it
// applied. Real processes: one nats-server, two nodes comparing every 4 commands (`--test-log-check-every`).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { connect } from '@nats-io/transport-node';
import { forgetWindows, recordedWindows } from '../../src/cluster/log-checks.ts';
import { startNatsServers } from '../../src/cluster/nats-servers.ts';
import type { NatsServer } from '../../src/cluster/nats-servers.ts';
import { ingest, vmStart } from '../helpers/events.ts';
import { request, startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

const missing = spawnSync('nats-server', ['--version']).error !== undefined;
if (missing && process.env.CI === 'true') throw new Error('nats-server is not installed (apt-get install nats-server)');
const KEY = 'window_records_test_key_0123456';

let nats: NatsServer[] = [];
let dir = '';
const running: RunningService[] = [];

before(async () => {
  if (missing) return;
  dir = tempDir('jvmlens-window-records-');
  nats = await startNatsServers(1, dir);
});

after(async () => {
  await Promise.all(running.map((node) => node.stop()));
  await Promise.all(nats.map((server) => server.stop()));
});

function start(nodeId: string): Promise<RunningService> {
  return startService({ noStaticKey: true, dataDir: `${dir}/${nodeId}`, args: ['--api-key', KEY, '--cluster', nats[0].url, '--node-id', nodeId, '--test-log-check-every', '4'] });
}

test('a node killed before it recorded its windows\' hashes records them at its next start, as it applied them', { skip: missing && 'nats-server is not installed' }, async () => {
  const a = await start('a');
  running.push(a);
  let b = await start('b');
  const vmIds = Array.from({ length: 8 }, (_, k) => `3e1de000-0000-4000-8000-${String(k).padStart(12, '0')}`);
  for (const vmId of vmIds) assert.equal((await ingest(a.gatewayUrl, KEY, [vmStart(vmId, Date.now())])).status, 200);
  // Read through b: it applied every write.
  assert.equal((await request(`${b.apiUrl}/public/instance/${vmIds[7]}`, { key: KEY })).status, 200);
  await b.stop({ keepData: true, signal: 'SIGKILL' });
  const nc = await connect({ servers: nats[0].url });
  try {
    // As if b had been killed before its records reached the bucket.
    await forgetWindows(nc, 'b');
    const hashes = async (nodeId: string) => (await recordedWindows(nc)).filter((window) => window.nodeId === nodeId && window.to <= 8).map(({ to, crc }) => ({ to, crc })).sort((x, y) => x.to - y.to);
    assert.deepEqual(await hashes('b'), []);
    const ofA = await hashes('a');
    assert.deepEqual(ofA.map((window) => window.to), [4, 8]);

    b = await start('b');
    running.push(b);
    const deadline = Date.now() + 20_000;
    while ((await hashes('b')).length < 2) {
      assert.ok(Date.now() < deadline, `b recorded ${JSON.stringify(await hashes('b'))}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.deepEqual(await hashes('b'), ofA);
  } finally {
    await nc.close();
  }
});
