// A cluster on a NATS server with a small max_payload (NATS's default is 1 MiB; a report page is up to
// 5.5 MB): agent batches and report pages too large for one message go through the log in parts, and
// every node serves the same report.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { Command } from '../../src/cluster/commands.ts';
import { ClusterLog } from '../../src/cluster/log.ts';
import { startNatsServers } from '../../src/cluster/nats-servers.ts';
import type { NatsServer } from '../../src/cluster/nats-servers.ts';
import { startEvent } from '../helpers/cve.ts';
import { ingest } from '../helpers/events.ts';
import { runReport, waitFinal } from '../helpers/reports.ts';
import { request, startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

const missing = spawnSync('nats-server', ['--version']).error !== undefined;
if (missing && process.env.CI === 'true') throw new Error('nats-server is not installed (apt-get install nats-server)');
const KEY = 'small_messages_key_0123456789';
const MAX_PAYLOAD = 64 * 1024;

let nats: NatsServer[] = [];
const nodes: RunningService[] = [];

before(async () => {
  if (missing) return;
  const dir = tempDir('jvmlens-small-messages-');
  nats = await startNatsServers(1, dir, { maxPayload: MAX_PAYLOAD });
  for (const nodeId of ['n1', 'n2']) {
    nodes.push({ ...(await startService({ noStaticKey: true, dataDir: `${dir}/${nodeId}`, args: ['--api-key', KEY, '--cluster', nats[0].url, '--node-id', nodeId] })), apiKey: KEY });
  }
});

after(async () => {
  await Promise.all(nodes.map((node) => node.stop()));
  await Promise.all(nats.map((server) => server.stop()));
});

test('a report page larger than the servers\' max_payload reaches every node in parts', { skip: missing && 'nats-server is not installed' }, async () => {
  const vmId = '5a11e000-0000-4000-8000-000000000001';
  const time = Date.now() - 60_000;
  const ack = await ingest(nodes[0].gatewayUrl, KEY, [startEvent(vmId, time, 'host-1')]);
  assert.equal(ack.status, 200, JSON.stringify(ack.body));
  // Random method names, so that the page stays large once deflated: 8,000 items, about 1 MB of JSON.
  for (let batch = 0; batch < 8; batch++) {
    const events = Array.from({ length: 10 }, (_, k) => ({
      type: 'code',
      vmId,
      time: time + 1,
      items: Array.from({ length: 100 }, () => ({ sourceName: 'app.jar', className: `com.acme.C${batch}x${k}`, methodName: randomBytes(12).toString('hex') })),
    }));
    const result = await ingest(nodes[1].gatewayUrl, KEY, events);
    assert.equal(result.status, 200, JSON.stringify(result.body));
  }

  const coordinated = await runReport(nodes[0], 'codeInventory', { from: '1d' });
  assert.equal(coordinated.pages.length, 1);
  assert.equal(coordinated.items.length, 8_000);
  const elsewhere = await waitFinal(nodes[1], 'codeInventory', coordinated.reportId, 30_000);
  assert.equal(elsewhere.body.state, 'SUCCEEDED', elsewhere.text.slice(0, 300));
  assert.deepEqual(elsewhere.body.data, coordinated.pages[0].body.data, 'the other node serves the same page');

  const log = await ClusterLog.open([nats[0].url], 'small-messages-test', 'once');
  try {
    const parts = (await log.read('jvmlens.log.report')).filter((command: Command) => command.kind === 'report.page' && command.reportId === coordinated.reportId);
    assert.ok(parts.length > 1, `the page went through the log in ${parts.length} part(s)`);
  } finally {
    await log.close();
  }
});

test('a batch with one event too large for a message of the log is refused with 413 and stores none of its events', { skip: missing && 'nats-server is not installed' }, async () => {
  const vmId = '5a11e000-0000-4000-8000-000000000002';
  const time = Date.now() - 60_000;
  const huge = { type: 'code', vmId, time: time + 1, items: Array.from({ length: 8_000 }, () => ({ sourceName: 'app.jar', className: 'com.acme.Big', methodName: randomBytes(12).toString('hex') })) };
  const refused = await ingest(nodes[0].gatewayUrl, KEY, [startEvent(vmId, time, 'host-2'), huge]);
  assert.equal(refused.status, 413, JSON.stringify(refused.body));
  assert.equal(refused.body.error, 'PAYLOAD_TOO_LARGE');
  assert.match(refused.body.message, /event 2 of this batch does not fit one message of the cluster's log even compressed \(max_payload 65536 bytes\): send fewer items per event/);
  for (const node of nodes) {
    const instance = await request(`${node.apiUrl}/public/instance/${vmId}`, { key: KEY });
    assert.equal(instance.status, 404, 'the VM of the refused batch was not stored');
  }
});
