// A cluster on a NATS server with a small max_payload (NATS's default is 1 MiB; a report page is up to
// 5.5 MB): agent batches and report pages too large for one message go through the log in parts, and
// every node serves the same report; a fanned-out report whose node partial does not fit one message runs
// on its coordinator, and the node is not taken for failing.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { Command } from '../../src/cluster/commands.ts';
import { ClusterLog } from '../../src/cluster/log.ts';
import { startNatsServers } from '../../src/cluster/nats-servers.ts';
import type { NatsServer } from '../../src/cluster/nats-servers.ts';
import { componentsEvent, startEvent } from '../helpers/cve.ts';
import { ingest } from '../helpers/events.ts';
import { readPages, runReport, waitFinal } from '../helpers/reports.ts';
import { request, startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

const missing = spawnSync('nats-server', ['--version']).error !== undefined;
if (missing && process.env.CI === 'true') throw new Error('nats-server is not installed (apt-get install nats-server)');
const KEY = 'small_messages_key_0123456789';
const MAX_PAYLOAD = 64 * 1024;
/** Pages of 400 kB: the first test's report (about 2.8 MB) has eight, each full one published in parts. */
const PAGE_BYTES = 400_000;

let nats: NatsServer[] = [];
const nodes: RunningService[] = [];

before(async () => {
  if (missing) return;
  const dir = tempDir('jvmlens-small-messages-');
  nats = await startNatsServers(1, dir, { maxPayload: MAX_PAYLOAD });
  for (const nodeId of ['n1', 'n2']) {
    nodes.push({ ...(await startService({ noStaticKey: true, dataDir: `${dir}/${nodeId}`, args: ['--api-key', KEY, '--cluster', nats[0].url, '--node-id', nodeId, '--report-fan-out-vms', '0', '--page-bytes', String(PAGE_BYTES)] })), apiKey: KEY });
  }
});

after(async () => {
  await Promise.all(nodes.map((node) => node.stop()));
  await Promise.all(nats.map((server) => server.stop()));
});

test('report pages larger than the servers\' max_payload reach every node in parts, every page whole', { skip: missing && 'nats-server is not installed' }, async () => {
  const vmId = '5a11e000-0000-4000-8000-000000000001';
  const time = Date.now() - 60_000;
  const ack = await ingest(nodes[0].gatewayUrl, KEY, [startEvent(vmId, time, 'host-1')]);
  assert.equal(ack.status, 200, JSON.stringify(ack.body));
  // Long random method names, so that the pages stay large once deflated: 12,000 items, about 2.8 MB of JSON.
  for (let batch = 0; batch < 12; batch++) {
    const events = Array.from({ length: 10 }, (_, k) => ({
      type: 'code',
      vmId,
      time: time + 1,
      items: Array.from({ length: 100 }, () => ({ sourceName: 'app.jar', className: `com.acme.C${batch}x${k}`, methodName: randomBytes(48).toString('hex') })),
    }));
    const result = await ingest(nodes[1].gatewayUrl, KEY, events);
    assert.equal(result.status, 200, JSON.stringify(result.body));
  }

  const coordinated = await runReport(nodes[0], 'codeInventory', { from: '1d' });
  assert.ok(coordinated.pages.length >= 3, `${coordinated.pages.length} pages`);
  assert.equal(coordinated.items.length, 12_000);
  const elsewhere = await waitFinal(nodes[1], 'codeInventory', coordinated.reportId, 30_000);
  assert.equal(elsewhere.body.state, 'SUCCEEDED', elsewhere.text.slice(0, 300));
  const pages = await readPages(nodes[1], 'codeInventory', coordinated.reportId);
  assert.deepEqual(pages.map((page) => page.body.data), coordinated.pages.map((page) => page.body.data), 'the other node serves the same pages');

  const log = await ClusterLog.open([nats[0].url], 'small-messages-test', 'once');
  try {
    const parts = (await log.read('jvmlens.log.report')).filter((command: Command) => command.kind === 'report.page' && command.reportId === coordinated.reportId);
    const partsPerPage = coordinated.pages.map((_, page) => parts.filter((part) => part.kind === 'report.page' && part.page === page).length);
    // Every full page did (the last one holds what was left).
    assert.ok(partsPerPage.slice(0, -1).every((count) => count > 1), `each page went through the log in parts: ${partsPerPage.join(', ')}`);
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

test('a batch in a log written by an earlier version (its bytes as received) applies on every node', { skip: missing && 'nats-server is not installed' }, async () => {
  const vmId = '5a11e000-0000-4000-8000-000000000003';
  const time = Date.now() - 60_000;
  const body = Buffer.from(JSON.stringify([startEvent(vmId, time, 'host-of-an-older-log'), componentsEvent(vmId, time + 1, [{ componentName: 'older-lib', componentVersion: '2.0' }])]));
  const log = await ClusterLog.open([nats[0].url], 'small-messages-older-batch', 'once');
  try {
    await log.append({ kind: 'events', batch: { body, contentType: 'application/json', now: Date.now() } });
  } finally {
    await log.close();
  }
  for (const node of nodes) {
    const instance = await request(`${node.apiUrl}/public/instance/${vmId}`, { key: KEY });
    assert.equal(instance.status, 200, instance.text);
    assert.equal(instance.body.inventory.hostName, 'host-of-an-older-log');
  }
});

test('a fanned-out report whose node partial does not fit one message runs on its coordinator, with every item, and health names no failing node', { skip: missing && 'nats-server is not installed' }, async () => {
  const time = Date.now() - 60_000;
  const vms = 6_000;
  // Random host names and VM ids: n2's half of a report by host with its VMs stays over 64 KiB deflated.
  for (let first = 0; first < vms; first += 250) {
    const events = Array.from({ length: 250 }, (_, k) => {
      const vmId = `5a11e000-0000-4000-8000-${String(first + k + 2).padStart(12, '0')}`;
      return [startEvent(vmId, time, `host-${randomBytes(24).toString('base64url')}`), componentsEvent(vmId, time + 1, [{ componentName: 'lib', componentVersion: '1.0' }])];
    }).flat();
    const result = await ingest(nodes[0].gatewayUrl, KEY, events);
    assert.equal(result.status, 200, JSON.stringify(result.body));
  }
  const metrics = async () => (await (await fetch(`${nodes[0].gatewayUrl}/metrics`)).text()).match(/outcome="(sent|ranHere)"\} (\d+)/g)?.join(' ');
  assert.equal(await metrics(), 'outcome="sent"} 0 outcome="ranHere"} 0');
  const report = await runReport(nodes[0], 'component', { groupBy: ['hostName'], detail: true, filter: ["componentName = 'lib'"] });
  assert.equal(report.items.length, vms, 'one item per host, from both nodes\' shards');
  assert.equal(await metrics(), 'outcome="sent"} 1 outcome="ranHere"} 1', 'n2 was asked, and its share ran on n1');
  assert.match(nodes[0].stderr(), /a node's report partition does not fit one message; it runs here/);
  assert.equal((await request(`${nodes[0].gatewayUrl}/opthub-health`)).body.note, '', 'a partial too large is not a failing node');
});
