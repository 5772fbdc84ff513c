// Cluster mode on real processes: three nats-server (JetStream, R3) and three jvmlens nodes on loopback,
// against a single node fed the same events. What a user relies on: any node takes writes and answers
// reads with every acknowledged write in them, reports and CVE events equal the single node's, keys and
// tags reach every node, and killing a node or a NATS server loses nothing acknowledged.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import { startNatsServers } from '../../src/cluster/nats-servers.ts';
import type { NatsServer } from '../../src/cluster/nats-servers.ts';
import { codeEvent, componentsEvent, GROUP, startEvent, walkEvents, writeAdvisories, CVSS, cveImport } from '../helpers/cve.ts';
import type { EventQuery, SyntheticCve } from '../helpers/cve.ts';
import { fuzzApi } from '../helpers/api-fuzz.ts';
import { ingest } from '../helpers/events.ts';
import { createReport, runReport, waitFinal } from '../helpers/reports.ts';
import type { Family } from '../helpers/reports.ts';
import { request, ROOT, runCli, startService, tempDir, waitForHealth } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

const missing = spawnSync('nats-server', ['--version']).error !== undefined;
// CI installs nats-server (.ci/run): there a missing one is a failure, not a skip.
if (missing && process.env.CI === 'true') throw new Error('nats-server is not installed (apt-get install nats-server)');
const KEY = 'cluster_test_key_0123456789';
const T0 = Date.now() - 3_600_000;

const ADVISORIES: SyntheticCve[] = [
  { osvId: 'GHSA-cl01', cveId: 'CVE-2026-1001', groupId: GROUP, artifactId: 'parser-lib', versions: ['1.0.0', '1.1.0'], severity: CVSS.score98 },
  { osvId: 'GHSA-cl02', cveId: 'CVE-2026-1002', groupId: GROUP, artifactId: 'net-lib', versions: ['2.0.0'], severity: CVSS.score75 },
];

/** A deterministic fleet: each VM starts with tags, carries components (some vulnerable) and loads code from them. */
function fleetBatch(index: number): unknown[] {
  const vmId = `c1a5e7e0-0000-4000-8000-${String(index).padStart(12, '0')}`;
  const time = T0 + index * 1000;
  const parser = index % 3 === 0 ? '1.0.0' : index % 3 === 1 ? '1.1.0' : '1.2.0';
  const components = [
    { componentName: 'parser-lib', componentVersion: parser, groupId: GROUP, sourceName: `parser-lib-${parser}.jar` },
    { componentName: 'net-lib', componentVersion: index % 2 === 0 ? '2.0.0' : '2.1.0', groupId: GROUP, sourceName: 'net-lib.jar' },
  ];
  return [
    startEvent(vmId, time, `host-${index % 5}`, { env: index % 2 === 0 ? 'prod' : 'test', team: `team-${index % 4}` }),
    componentsEvent(vmId, time + 1, components),
    codeEvent(vmId, time + 2, index % 4 === 0 ? ['net-lib.jar', `parser-lib-${parser}.jar`] : [`parser-lib-${parser}.jar`]),
  ];
}

const REPORTS: { family: Family; body: Record<string, unknown> }[] = [
  { family: 'jvmInventory', body: {} },
  { family: 'jvmInventory', body: { from: '30d', groupBy: ['tags.env'] } },
  { family: 'codeInventory', body: { from: '30d' } },
  { family: 'component', body: { groupBy: ['tags.team'] } },
  { family: 'component', body: { filter: ["tags.env = 'prod'"] } },
  { family: 'component', body: { groupBy: ['hostName'], detail: true } },
];

/** Report partitions a node ran for other coordinators (and stopped for them), sent to other nodes, and ran itself after another failed to (its /metrics). */
async function partitionCounts(node: RunningService): Promise<{ served: number; cancelled: number; sent: number; ranHere: number }> {
  const text = await (await fetch(`${node.gatewayUrl}/metrics`)).text();
  // Counts that only grow: a counter, whose rate a dashboard takes.
  assert.match(text, /^# TYPE jvmlens_cluster_report_partitions_total counter$/m);
  const count = (outcome: string) => Number(new RegExp(`^jvmlens_cluster_report_partitions_total\\{outcome="${outcome}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
  return { served: count('served'), cancelled: count('cancelled'), sent: count('sent'), ranHere: count('ranHere') };
}

async function totalCounts(): Promise<{ served: number; sent: number; ranHere: number }> {
  const all = await Promise.all(nodes.map(partitionCounts));
  return { served: all.reduce((sum, c) => sum + c.served, 0), sent: all.reduce((sum, c) => sum + c.sent, 0), ranHere: all.reduce((sum, c) => sum + c.ranHere, 0) };
}

let dir: string;
let nats: NatsServer[] = [];
let nodes: RunningService[] = [];
let single: RunningService;
let urls: string;

/** n1 and n2 fan every grouped report out; n3 only those of a fleet of 1,000 VMs or more, which this one never has. */
async function startNode(index: number, extra: string[] = []): Promise<RunningService> {
  const fanOutVms = index === 3 ? '1000' : '0';
  const service = await startService({ noStaticKey: true, dataDir: `${dir}/n${index}`, args: ['--api-key', KEY, '--cluster', urls, '--node-id', `n${index}`, '--report-fan-out-vms', fanOutVms, ...extra] });
  return { ...service, apiKey: KEY };
}

async function ingestOk(service: RunningService, batch: unknown[]): Promise<void> {
  const result = await ingest(service.gatewayUrl, KEY, batch);
  assert.equal(result.status, 200, JSON.stringify(result.body));
}

before(async () => {
  if (missing) return;
  dir = tempDir('jvmlens-cluster-');
  nats = await startNatsServers(3, dir);
  urls = nats.map((server) => server.url).join(',');
  // n3 generates reports slowly (300 ms per partition), so that it can die while coordinating one.
  nodes = await Promise.all([1, 2, 3].map((index) => startNode(index, index === 3 ? ['--test-faults', 'slow-partition'] : [])));
  single = { ...(await startService({ noStaticKey: true, args: ['--api-key', KEY] })), apiKey: KEY };
  const osv = writeAdvisories(ADVISORIES);
  const imported = await runCli(['cve', 'import', osv, '--cluster', urls]);
  assert.equal(imported.code, 0, imported.stdout + imported.stderr);
  await cveImport(single.dataDir, [osv]);
});

after(async () => {
  await Promise.all([...nodes, single].filter(Boolean).map((service) => service.stop()));
  await Promise.all(nats.map((server) => server.stop()));
});

test('a write through one node is in the next read through any other', { skip: missing && 'nats-server is not installed' }, async () => {
  for (let index = 0; index < 12; index++) {
    const batch = fleetBatch(index);
    await ingestOk(nodes[index % 3], batch);
    await ingestOk(single, batch);
    const vmId = (batch[0] as { vmId: string }).vmId;
    for (const node of nodes) {
      const got = await request(`${node.apiUrl}/public/instance/${vmId}`, { key: KEY });
      assert.equal(got.status, 200, `VM ${index} through ${node.apiUrl}: ${got.text}`);
    }
  }
});

test('every log record of a node names the node, so that the logs of all nodes can be gathered', { skip: missing && 'nats-server is not installed' }, () => {
  for (const [index, node] of nodes.entries()) {
    const records = node.stderr().split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { node?: string; message: string });
    assert.ok(records.some((record) => record.message === 'ready'), `n${index + 1} logged ready`);
    for (const record of records) assert.equal(record.node, `n${index + 1}`, JSON.stringify(record));
  }
  assert.ok(single.stderr().split('\n').filter((line) => line.startsWith('{')).every((line) => !('node' in JSON.parse(line))), 'a single node\'s records name no node');
});

test('each node\'s /metrics gives its place in the log and the live nodes', { skip: missing && 'nats-server is not installed' }, async () => {
  const gauge = (text: string, name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  // A write (to the single node too: the reports below compare with it), then a read through every node:
  // each applied it, and so knows of nothing after it.
  await ingestOk(nodes[0], fleetBatch(90));
  await ingestOk(single, fleetBatch(90));
  for (const node of nodes) assert.equal((await request(`${node.apiUrl}/public/instance/${(fleetBatch(90)[0] as { vmId: string }).vmId}`, { key: KEY })).status, 200);
  const deadline = Date.now() + 10_000;
  for (;;) {
    const texts = await Promise.all(nodes.map(async (node) => (await fetch(`${node.gatewayUrl}/metrics`)).text()));
    const applied = texts.map((text) => gauge(text, 'jvmlens_cluster_log_applied_sequence'));
    const live = texts.map((text) => gauge(text, 'jvmlens_cluster_live_nodes'));
    if (live.every((count) => count === 3) || Date.now() > deadline) {
      assert.deepEqual(live, [3, 3, 3], 'live nodes as each node sees them');
      assert.ok(applied.every((seq) => seq > 0 && seq === applied[0]), `every node applied the same last command: ${applied}`);
      for (const text of texts) {
        assert.ok(gauge(text, 'jvmlens_cluster_log_known_sequence') >= applied[0]);
        assert.equal(gauge(text, 'jvmlens_cluster_log_behind_seconds'), 0);
        assert.match(text, /^# HELP jvmlens_cluster_log_applied_sequence \S/m);
      }
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  assert.doesNotMatch(await (await fetch(`${single.gatewayUrl}/metrics`)).text(), /jvmlens_cluster_/, 'a single node has no cluster metrics');
});

test('reports through any node equal a single node\'s for the same events, and every node serves their pages', { skip: missing && 'nats-server is not installed' }, async () => {
  for (const [index, { family, body }] of REPORTS.entries()) {
    const coordinator = nodes[index % 3];
    const before = await totalCounts();
    const clustered = await runReport(coordinator, family, body);
    // Counts per group fan out over the live nodes by VM shard; lists of VMs and of code run on the coordinator,
    // and so does every report of a fleet under the coordinator's --report-fan-out-vms (n3's).
    const after = await totalCounts();
    const fansOut = (family === 'component' || (body.groupBy as unknown[] | undefined) !== undefined) && coordinator !== nodes[2];
    assert.equal(after.sent - before.sent, fansOut ? 2 : 0, `${family} ${JSON.stringify(body)} through n${(index % 3) + 1}: partitions sent to the two other nodes`);
    assert.equal(after.served - before.served, after.sent - before.sent, 'and each served by its node');
    const alone = await runReport(single, family, body);
    assert.deepEqual(clustered.items, alone.items, `${family} ${JSON.stringify(body)}`);
    assert.ok(clustered.items.length > 0, `${family} has items`);
    for (const other of nodes) {
      const page = await waitFinal(other, family, clustered.reportId);
      assert.equal(page.body.state, 'SUCCEEDED', `${family} through another node`);
      assert.deepEqual(page.body.data, clustered.pages[0].body.data, 'the same page on every node');
    }
  }
});

test('CVE events through every node equal a single node\'s, page by page, and the nodes agree on analysis times', { skip: missing && 'nats-server is not installed' }, async () => {
  const withoutAnalysisTime = (items: any[]) => items.map(({ cveAnalysisTime, ...rest }) => rest);
  const queries: EventQuery[] = [{ limit: 5 }, { limit: 3, 'tags.env': 'prod' }];
  for (const query of queries) {
    // An import is matched against the fleet within 10 s (decisions §11), on a single node as on a cluster.
    const deadline = Date.now() + 10_000;
    for (;;) {
      const alone = withoutAnalysisTime((await walkEvents(single, query)).items);
      const clustered = await Promise.all(nodes.map(async (node) => (await walkEvents(node, query)).items));
      // The single node received the batches at other times; the nodes applied the same log, so they match
      // each batch's components with its receive time and hold the same analysis times.
      const equal = alone.length > 0 && clustered.every((items) => JSON.stringify(withoutAnalysisTime(items)) === JSON.stringify(alone) && JSON.stringify(items) === JSON.stringify(clustered[0]));
      if (equal) break;
      if (Date.now() > deadline) {
        for (const items of clustered) assert.deepEqual(withoutAnalysisTime(items), alone, JSON.stringify(query));
        for (const items of clustered) assert.deepEqual(items, clustered[0], `analysis times, ${JSON.stringify(query)}`);
        assert.ok(alone.length > 0, 'the fleet has CVE events');
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
});

test('two imports in a row: every node re-matches the fleet at each import, analysed at that import\'s time', { skip: missing && 'nats-server is not installed' }, async () => {
  // Components the fleet already has and no advisory matched yet: each import changes one of them.
  const late = [
    { osvId: 'GHSA-cl03', cveId: 'CVE-2026-1003', groupId: GROUP, artifactId: 'parser-lib', versions: ['1.2.0'], severity: CVSS.score75 },
    { osvId: 'GHSA-cl04', cveId: 'CVE-2026-1004', groupId: GROUP, artifactId: 'net-lib', versions: ['2.1.0'], severity: CVSS.score53 },
  ];
  const times: number[] = [Date.now()];
  for (const advisory of late) {
    const folder = writeAdvisories([advisory]);
    const imported = await runCli(['cve', 'import', folder, '--cluster', urls]);
    assert.equal(imported.code, 0, imported.stdout + imported.stderr);
    times.push(Date.now());
    await cveImport(single.dataDir, [folder]);
  }
  const analysed = async (node: RunningService) => (await walkEvents(node, { limit: 100 })).items.filter((item) => item.cveId === 'CVE-2026-1003' || item.cveId === 'CVE-2026-1004');
  const deadline = Date.now() + 10_000;
  let clustered = await Promise.all(nodes.map(analysed));
  while (!clustered.every((items) => new Set(items.map((item) => item.cveId)).size === 2) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    clustered = await Promise.all(nodes.map(analysed));
  }
  for (const items of clustered) assert.deepEqual(items, clustered[0], 'every node holds the same matches and analysis times');
  for (const [k, cveId] of ['CVE-2026-1003', 'CVE-2026-1004'].entries()) {
    const matched = clustered[0].filter((item) => item.cveId === cveId);
    assert.ok(matched.length > 0, `${cveId} is matched`);
    // The import's own time (its CLI's start), not that of a later import.
    for (const item of matched) assert.ok(item.cveAnalysisTime >= times[k] && item.cveAnalysisTime <= times[k + 1], `${cveId} analysed at ${item.cveAnalysisTime}, import ${k + 1} ran ${times[k]}..${times[k + 1]}`);
  }
});

test('a tag edit through one node and a key created or revoked on the cluster reach every node', { skip: missing && 'nats-server is not installed' }, async () => {
  const vmId = (fleetBatch(1)[0] as { vmId: string }).vmId;
  const put = await request(`${nodes[0].apiUrl}/public/instance/${vmId}/tags`, { method: 'PUT', key: KEY, body: { owner: 'payments', env: 'prod' } });
  assert.equal(put.status, 200, put.text);
  for (const node of nodes) {
    const tags = await request(`${node.apiUrl}/public/instance/${vmId}/tags`, { key: KEY });
    assert.deepEqual(tags.body, [{ key: 'env', value: 'prod' }, { key: 'owner', value: 'payments' }]);
  }
  const removed = await request(`${nodes[1].apiUrl}/public/instance/${vmId}/tags/owner`, { method: 'DELETE', key: KEY });
  assert.equal(removed.status, 204);
  const again = await request(`${nodes[2].apiUrl}/public/instance/${vmId}/tags/owner`, { method: 'DELETE', key: KEY });
  assert.equal(again.status, 404, 'the removal is seen by the next node');
  // An edit made again after another is a new write, not a retry of the first one: tags set back to what
  // they were a moment ago stay so.
  for (const [k, env] of ['staging', 'prod', 'staging'].entries()) {
    const edit = await request(`${nodes[k].apiUrl}/public/instance/${vmId}/tags`, { method: 'PUT', key: KEY, body: { env } });
    assert.deepEqual(edit.body, [{ key: 'env', value: env }], `edit ${k + 1} answers the tags it set`);
  }
  for (const node of nodes) {
    const tags = await request(`${node.apiUrl}/public/instance/${vmId}/tags`, { key: KEY });
    assert.deepEqual(tags.body, [{ key: 'env', value: 'staging' }]);
  }

  const created = await runCli(['keys', 'create', '--cluster', urls, '--user', 'ops', '--scopes', 'read']);
  assert.equal(created.code, 0, created.stderr);
  const key = /key: +(\S+)/.exec(created.stdout)![1];
  const keyId = /key id: +(\S+)/.exec(created.stdout)![1];
  const statusOn = (node: RunningService) => request(`${node.apiUrl}/public/me`, { key }).then((response) => response.status);
  const accepted = Date.now() + 10_000;
  for (const node of nodes) {
    while ((await statusOn(node)) !== 200) {
      assert.ok(Date.now() < accepted, 'a key created on the cluster is accepted by every node within 10 s');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  const listed = await runCli(['keys', 'list', '--cluster', urls]);
  assert.match(listed.stdout, new RegExp(`${keyId} +ops`));
  const revoked = await runCli(['keys', 'revoke', keyId, '--cluster', urls]);
  assert.equal(revoked.code, 0, revoked.stderr);
  const deadline = Date.now() + 10_000;
  for (const node of nodes) {
    while ((await statusOn(node)) !== 401) {
      assert.ok(Date.now() < deadline, 'a revoked key is refused by every node within 10 s');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
});

test('a second node with a live node\'s id refuses to start and says why', { skip: missing && 'nats-server is not installed' }, async () => {
  const twin = await startService({ noStaticKey: true, waitReady: false, args: ['--api-key', KEY, '--cluster', urls, '--node-id', 'n1'] });
  const exited = twin.child.exitCode !== null ? Promise.resolve([twin.child.exitCode]) : once(twin.child, 'exit');
  const code = (await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve(['still running after 30 s']), 30_000))]) as unknown[])[0];
  await twin.stop();
  assert.equal(code, 1, twin.stdout() + twin.stderr());
  assert.match(twin.stderr(), /cannot start: the node id 'n1' is in use by a live node .*give each node its own --node-id/);
  const health = await request(`${nodes[0].gatewayUrl}/opthub-health`);
  assert.equal(health.status, 200, 'the node that has the id goes on');
});

test('a node started with another shard count than the cluster\'s refuses to start and says why', { skip: missing && 'nats-server is not installed' }, async () => {
  const other = await startService({ noStaticKey: true, waitReady: false, dataDir: `${dir}/n-shards`, args: ['--api-key', KEY, '--cluster', urls, '--node-id', 'n-shards', '--vm-shards', '32'] });
  const exited = other.child.exitCode !== null ? Promise.resolve([other.child.exitCode]) : once(other.child, 'exit');
  const code = (await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve(['still running after 30 s']), 30_000))]) as unknown[])[0];
  await other.stop();
  assert.equal(code, 1, other.stdout() + other.stderr());
  assert.match(other.stderr(), /cannot start: this cluster was created with --vm-shards 64; this node was started with 32/);
});

test('a node that died while still a member: the coordinator runs its share of a report itself, with the same answer, and leaves it out until the membership would have dropped it', { skip: missing && 'nats-server is not installed' }, async () => {
  const body = { groupBy: ['tags.team', 'hostName'] };
  const whole = await runReport(nodes[0], 'component', body);
  assert.equal((await totalCounts()).ranHere, 0);
  // Its heartbeat stays in the membership for up to 15 s: it is still given shards.
  await nodes[1].stop({ keepData: true, signal: 'SIGKILL' });
  let restarted = false;
  try {
    const without = await runReport(nodes[0], 'component', body);
    assert.deepEqual(without.items, whole.items);
    assert.equal((await partitionCounts(nodes[0])).ranHere, 1, 'the dead node\'s partition ran on the coordinator');
    assert.match(nodes[0].stderr(), /a node did not give its report partition; it runs here/);
    const failedAt = Date.now();
    const health = await request(`${nodes[0].gatewayUrl}/opthub-health`);
    assert.equal(health.status, 200, 'the coordinator serves on');
    assert.match(health.body.note, /^degraded: report partitions were not given by node n2 at \S+ \(.+\); this node ran them itself$/);
    // Left out of the next placements: its shards go to n3, and the coordinator does not wait for it again.
    const sentBefore = (await partitionCounts(nodes[0])).sent;
    assert.deepEqual((await runReport(nodes[0], 'component', body)).items, whole.items);
    assert.deepEqual(await partitionCounts(nodes[0]).then(({ sent, ranHere }) => ({ sent: sent - sentBefore, ranHere })), { sent: 1, ranHere: 1 });
    nodes[1] = await startNode(2);
    restarted = true;
    // Its old heartbeat is still there, and no node answers for its id: it joins without waiting for it to expire.
    assert.match(nodes[1].stderr(), /this node id's heartbeat was left by a process that is gone/);
    // Asked again once the membership would have dropped it (15 s); it answers, and the note clears.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, failedAt + 15_500 - Date.now())));
    assert.deepEqual((await runReport(nodes[0], 'component', body)).items, whole.items);
    assert.equal((await request(`${nodes[0].gatewayUrl}/opthub-health`)).body.note, '');
  } finally {
    if (!restarted) nodes[1] = await startNode(2);
  }
});

/** Resolves once `check` holds, polling every 10 ms; fails after `ms`. */
async function until(what: string, check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, what);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test('a report deleted while other nodes run its partitions stops them there', { skip: missing && 'nats-server is not installed' }, async () => {
  const sent = (await partitionCounts(nodes[0])).sent;
  const { served, cancelled } = await partitionCounts(nodes[2]);
  const report = await createReport(nodes[0], 'component', { groupBy: ['tags.team'] });
  assert.equal(report.status, 202, report.text);
  // n1 asked n2 and n3; n3 takes 300 ms a partition (--test-faults slow-partition).
  await until('n1 sends two partitions', async () => (await partitionCounts(nodes[0])).sent === sent + 2);
  const deleted = await request(`${nodes[0].apiUrl}/public/component/report/${report.body.reportId}`, { method: 'DELETE', key: KEY });
  assert.equal(deleted.status, 204, deleted.text);
  await until('n3 stops its partition', async () => (await partitionCounts(nodes[2])).cancelled === cancelled + 1);
  assert.equal((await partitionCounts(nodes[2])).served, served, 'and gives none for the deleted report');
});

test('killing a jvmlens node and a NATS server during ingestion and a report loses nothing acknowledged', { skip: missing && 'nats-server is not installed' }, async (t) => {
  // A report coordinated by the node about to die.
  const report = await createReport(nodes[2], 'component', { groupBy: ['tags.env'] });
  assert.equal(report.status, 202, report.text);
  const acknowledged: number[] = [];
  let refused = 0;
  let index = 100;
  const writer = (async () => {
    while (index < 160) {
      const batch = fleetBatch(index);
      const result = await ingest(nodes[index % 2].gatewayUrl, KEY, batch).catch((error: Error) => ({ status: 0, body: error.message }));
      if (result.status === 200) acknowledged.push(index);
      else {
        assert.ok([503].includes(result.status), `a write is acknowledged or refused with 503, got ${result.status} ${JSON.stringify(result.body)}`);
        refused++;
      }
      index++;
    }
  })();
  await new Promise((resolve) => setTimeout(resolve, 100));
  await nodes[2].stop({ keepData: true, signal: 'SIGKILL' });
  await nats[2].stop('SIGKILL');
  await writer;
  assert.ok(acknowledged.length > 0, `writes went on (${refused} refused)`);

  t.diagnostic(`${acknowledged.length} batches acknowledged, ${refused} refused with 503 while a node and a NATS server died`);

  // Health stays UP on the live nodes and names what is degraded: the log's replica on the dead server.
  const noticed = Date.now() + 20_000;
  for (;;) {
    const health = await request(`${nodes[0].gatewayUrl}/opthub-health`);
    assert.equal(health.status, 200, health.text);
    // Not "catching up": silent past 5 s, it is named as down.
    if (/degraded: .*nats-server s3 \(not heard from for \d+ s\)/.test(health.body.note)) break;
    assert.ok(Date.now() < noticed, `health names the dead log replica as silent: ${health.text}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }

  // The report is taken over by the lowest live node (n1) once n3's heartbeat expires, and finishes.
  const finished = await waitFinal(nodes[0], 'component', report.body.reportId, 60_000);
  assert.equal(finished.body.state, 'SUCCEEDED', finished.text.slice(0, 500));
  assert.ok(finished.body.totalCount > 0);
  assert.match(nodes[0].stderr(), /taking over a report whose coordinator left/);
  assert.equal((await waitFinal(nodes[1], 'component', report.body.reportId)).body.totalCount, finished.body.totalCount, 'the other node serves the same report');

  // The NATS server and the node come back; the node catches up with what it missed.
  await nats[2].start();
  nodes[2] = await startNode(3);
  await waitForHealth(nodes[2], 200, 60_000);
  for (const node of nodes) {
    for (const acked of acknowledged) {
      const vmId = (fleetBatch(acked)[0] as { vmId: string }).vmId;
      const got = await request(`${node.apiUrl}/public/instance/${vmId}`, { key: KEY });
      assert.equal(got.status, 200, `acknowledged VM ${acked} through ${node.apiUrl}`);
    }
  }
  const healthy = Date.now() + 30_000;
  for (;;) {
    const health = await request(`${nodes[2].gatewayUrl}/opthub-health`);
    assert.equal(health.body.healthState, 'UP');
    if (health.body.note === '') break;
    assert.ok(Date.now() < healthy, `the degradation note clears once the server is back: ${health.text}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
});

test('without a JetStream majority a write is refused with 503 and Retry-After, health is DOWN on every node, and both recover once it returns', { skip: missing && 'nats-server is not installed' }, async () => {
  await nats[0].stop('SIGKILL');
  await nats[1].stop('SIGKILL');
  try {
    const started = Date.now();
    for (const node of nodes) {
      const refused = await request(`${node.gatewayUrl}/agent/v1/events`, { method: 'POST', key: KEY, body: fleetBatch(200) });
      assert.equal(refused.status, 503, refused.text);
      // A node whose NATS server died is DOWN (NOT_READY) until it reconnects; one still connected finds no quorum.
      assert.ok(['CLUSTER_UNAVAILABLE', 'NOT_READY'].includes(refused.body.error), refused.text);
      // JetStream is on, without a majority: not the message that tells to restart the servers with --jetstream.
      assert.doesNotMatch(refused.body.message, /jetstream is not enabled/i, refused.text);
      assert.ok(Number(refused.headers.get('retry-after')) > 0, 'Retry-After says when to retry');
    }
    assert.ok(Date.now() - started < 3 * 15_000, 'each refused within about 10 s');
    // Health tells the load balancer: no node can serve without JetStream, whichever server it is connected to.
    for (const node of nodes) {
      for (;;) {
        const health = await request(`${node.gatewayUrl}/opthub-health`);
        if (health.status === 503) {
          assert.match(health.body.note, /JetStream has not answered for the cluster log|not connected to any NATS server/, health.text);
          break;
        }
        assert.ok(Date.now() - started < 3 * 15_000 + 15_000, `${node.gatewayUrl} health is DOWN without a JetStream majority: ${health.text}`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  } finally {
    await nats[0].start();
    await nats[1].start();
  }
  const deadline = Date.now() + 60_000;
  for (;;) {
    const result = await ingest(nodes[2].gatewayUrl, KEY, fleetBatch(201));
    if (result.status === 200) break;
    assert.equal(result.status, 503);
    assert.ok(Date.now() < deadline, 'writes are accepted again once the servers are back');
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  // Every node serves reads again, with that write in them, once it has reconnected and caught up; health is UP.
  const vmId = (fleetBatch(201)[0] as { vmId: string }).vmId;
  for (const node of nodes) {
    for (;;) {
      const got = await request(`${node.apiUrl}/public/instance/${vmId}`, { key: KEY });
      if (got.status === 200) break;
      assert.equal(got.status, 503, got.text);
      assert.ok(Date.now() < deadline, `${node.apiUrl} serves reads again: ${got.text}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const health = await request(`${node.gatewayUrl}/opthub-health`);
    assert.equal(health.status, 200, `${node.gatewayUrl} health is UP again`);
    // The log answered this node's reads since: it no longer says that writes are refused.
    assert.doesNotMatch(health.body.note, /refused every write/, health.text);
    // Nor do its log records (the log's truncation, the comparison of readings, …) give that wrong cause.
    assert.doesNotMatch(node.stderr(), /jetstream is not enabled/i);
  }
});

test('random requests through every node: no 5xx, each answer as documented, and the nodes still answer alike', { skip: missing && 'nats-server is not installed' }, async () => {
  // After the tests that compare with the single node: these requests write (tags, VMs) to the cluster only.
  const vmIds = [0, 1, 2, 3].map((index) => (fleetBatch(index)[0] as { vmId: string }).vmId);
  const reports = await Promise.all((['jvmInventory', 'component'] as const).map((family) => createReport(nodes[0], family, {})));
  const statuses = await fuzzApi(nodes, { vmIds, reportIds: reports.map((report) => report.body.reportId), tokens: [] }, 450, 0xc1a5);
  assert.ok((statuses.get(200) ?? 0) > 45, JSON.stringify([...statuses]));
  const answers = await Promise.all(nodes.map((node) => runReport(node, 'jvmInventory', { from: '30d' })));
  for (const answer of answers.slice(1)) assert.deepEqual(answer.items, answers[0].items);
  for (const node of nodes) assert.equal((await request(`${node.gatewayUrl}/opthub-health`)).status, 200, node.gatewayUrl);
});

test('the deployment\'s nats-server configurations are valid', { skip: missing && 'nats-server is not installed' }, () => {
  for (const index of [1, 2, 3]) {
    const checked = spawnSync('nats-server', ['-c', `${ROOT}deploy/cluster/nats-${index}.conf`, '-t'], { encoding: 'utf8' });
    assert.equal(checked.status, 0, checked.stdout + checked.stderr);
  }
});

test('a node that cannot reach NATS stays DOWN and says why', { skip: missing && 'nats-server is not installed' }, async () => {
  const lonely = await startService({ noStaticKey: true, waitReady: false, args: ['--api-key', KEY, '--cluster', 'nats://127.0.0.1:9', '--node-id', 'lonely'] });
  try {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const health = await request(`${lonely.gatewayUrl}/opthub-health`);
    assert.equal(health.status, 503);
    assert.match(health.body.note, /cluster/);
    const write = await ingest(lonely.gatewayUrl, KEY, fleetBatch(300));
    assert.equal(write.status, 503);
  } finally {
    await lonely.stop();
  }
});

test('a cluster command against unreachable NATS servers fails at once with exit 4', { skip: missing && 'nats-server is not installed' }, async () => {
  const started = Date.now();
  for (const command of [['keys', 'list'], ['cluster', 'status']]) {
    const answered = await runCli([...command, '--cluster', 'nats://127.0.0.1:9']);
    assert.equal(answered.code, 4, answered.stdout + answered.stderr);
    assert.match(answered.stderr, /cannot reach the cluster: cannot connect to NATS at nats:\/\/127\.0\.0\.1:9/);
  }
  assert.ok(Date.now() - started < 20_000);
  const usage = await runCli(['cluster', 'status']);
  assert.equal(usage.code, 2, usage.stderr);
  assert.match(usage.stderr, /cluster status needs --cluster URLS/);
});
