// The same source runs on Deno 2 (architecture.md): start it from src/main.ts and use it over HTTP; Deno type-checks it.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { ingest, vmStart } from '../helpers/events.ts';
import { createReport, waitFinal } from '../helpers/reports.ts';
import { request, ROOT, startService, tempDir } from '../helpers/service.ts';
import { ClusterLog } from '../../src/cluster/log.ts';
import { startNatsServers } from '../../src/cluster/nats-servers.ts';

test('`deno run -A src/main.ts serve` serves health, ingestion, the explorer, a report and the console', { timeout: 180_000 }, async () => {
  const service = await startService({ deno: true });
  try {
    const health = await request(`${service.gatewayUrl}/opthub-health`);
    assert.equal(health.status, 200);
    assert.equal(health.body.healthState, 'UP');
    assert.equal((await ingest(service.gatewayUrl, service.apiKey, [vmStart('deno-vm', Date.now(), { tags: { env: 'prod' } })])).status, 200);
    const instance = await request(`${service.apiUrl}/public/instance/deno-vm?x=1`, { key: service.apiKey });
    assert.equal(instance.status, 200);
    assert.deepEqual(instance.body.tags, { env: 'prod' });
    // A report: its job runs in a worker thread and its page is a file (page-files.ts).
    const created = await createReport(service, 'jvmInventory', {});
    assert.equal(created.status, 202);
    const report = await waitFinal(service, 'jvmInventory', created.body.reportId);
    assert.equal(report.body.state, 'SUCCEEDED');
    assert.deepEqual(report.body.data.map((vm: { vmId: string }) => vm.vmId), ['deno-vm']);
    // The console's own files and its libraries from their npm packages.
    for (const [path, type] of [['/console/', 'text/html'], ['/console/app.js', 'text/javascript'], ['/console/vendor/preact.mjs', 'text/javascript'], ['/console/vendor/chart.umd.js', 'text/javascript']]) {
      const response = await fetch(`${service.apiUrl}${path}`);
      assert.equal(response.status, 200, path);
      assert.ok(response.headers.get('content-type')!.startsWith(type), path);
      assert.ok((await response.arrayBuffer()).byteLength > 500, path);
    }
  } finally {
    assert.equal(await service.stop(), 0);
  }
});

test('`deno check` type-checks the source, the tests and the bench (deno.json gives Deno its libs)', { timeout: 300_000 }, async () => {
  const deno = join(ROOT, 'node_modules', '.bin', 'deno');
  // Rejects with Deno's type errors in the message when the check fails.
  const { stderr } = await promisify(execFile)(deno, ['check', 'src/', 'test/', 'bench/'], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' }, maxBuffer: 16 * 1024 * 1024 });
  assert.match(stderr, /Check .*src\/main\.ts/);
});

test('a cluster node runs under Deno too: NATS client, JetStream log, read your writes, a copy of its data for a new node', { timeout: 180_000, skip: spawnSync('nats-server', ['--version']).error !== undefined && 'nats-server is not installed' }, async () => {
  const dir = tempDir('jvmlens-deno-cluster-');
  const [nats] = await startNatsServers(1, dir);
  const key = 'deno_cluster_key_0123456789';
  try {
    const node = await startService({ deno: true, noStaticKey: true, dataDir: join(dir, 'n1'), args: ['--api-key', key, '--cluster', nats.url, '--node-id', 'deno1'] });
    try {
      const vmId = 'de9001e0-0000-4000-8000-000000000001';
      const accepted = await ingest(node.gatewayUrl, key, [vmStart(vmId, Date.now())]);
      assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
      assert.equal((await request(`${node.apiUrl}/public/instance/${vmId}`, { key })).status, 200);
      // Once the log dropped that write, a new node (under Node) copies the Deno node's data: the Deno node
      // runs `jvmlens backup` as a child process of its own runtime.
      const log = await ClusterLog.open([nats.url], 'deno-test', 'once');
      try {
        await log.purgeBelow((await log.lastSeq()) + 1);
      } finally {
        await log.close();
      }
      const added = await startService({ noStaticKey: true, dataDir: join(dir, 'n2'), args: ['--api-key', key, '--cluster', nats.url, '--node-id', 'node2'] });
      try {
        assert.match(added.stderr(), /this node starts from a copy of a live node's data","from":"deno1"/);
        assert.equal((await request(`${added.apiUrl}/public/instance/${vmId}`, { key })).status, 200);
      } finally {
        await added.stop();
      }
    } finally {
      assert.equal(await node.stop(), 0, 'a clean exit under Deno');
    }
  } finally {
    await nats.stop();
  }
});
