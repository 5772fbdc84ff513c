// Reports under abuse (issue: hardening): deletes racing running reports, a pathological LIKE pattern, a
// stored row with an absurd time. None may crash the process, hold a worker or fail a report.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ingest, vmStart } from '../helpers/events.ts';
import { PATHS, createReport, runReport, waitFinal } from '../helpers/reports.ts';
import { request, startService, tempDir } from '../helpers/service.ts';
import type { AgentEvent } from '../../src/ingest/events.ts';
import { Dictionary } from '../../src/storage/dictionary.ts';
import { Ingestor } from '../../src/storage/ingest.ts';
import { openStore } from '../../src/storage/store.ts';

test('create-then-delete pairs against running reports: every DELETE 204, the process and writes unharmed', async () => {
  // Slow partitions keep reports running while they are deleted; small partitions make several per report.
  const service = await startService({ args: ['--test-faults', 'slow-partition', '--test-partition-size', '2', '--workers', '2'] });
  try {
    const now = Date.now();
    const batch = Array.from({ length: 8 }, (_, i) => vmStart(`race-${i}`, now));
    assert.equal((await ingest(service.gatewayUrl, service.apiKey, batch)).status, 200);
    const families = ['jvmInventory', 'component', 'codeInventory'] as const;
    for (let round = 0; round < 4; round++) {
      const pairs = Array.from({ length: 9 }, async (_, i) => {
        const family = families[i % 3];
        const created = await createReport(service, family, family === 'component' ? {} : { from: '30d' });
        assert.equal(created.status, 202, created.text);
        // Some deleted at once (still waiting), some while their partitions run.
        await new Promise((resolve) => setTimeout(resolve, (i % 3) * 150));
        const deleted = await request(`${service.apiUrl}${PATHS[family].base}/${created.body.reportId}`, { method: 'DELETE', key: service.apiKey });
        assert.equal(deleted.status, 204, deleted.text);
        const gone = await request(`${service.apiUrl}${PATHS[family].base}/${created.body.reportId}`, { key: service.apiKey });
        assert.equal(gone.status, 404);
      });
      await Promise.all(pairs);
    }
    assert.equal(service.child.exitCode, null, `the service exited:\n${service.stderr()}`);
    assert.equal((await fetch(`${service.gatewayUrl}/opthub-health`)).status, 200);
    assert.equal((await ingest(service.gatewayUrl, service.apiKey, [vmStart('after-race', now)])).status, 200, 'writes still work');
    const after = await runReport(service, 'jvmInventory', { from: '30d' });
    assert.equal(after.items.length, 9);
  } finally {
    await service.stop();
  }
});

test("a catastrophic LIKE pattern ('(a+)+$' over 'a'x40 + '!') finishes, and a report behind it is not starved", async () => {
  const service = await startService({ args: ['--report-timeout-ms', '120000'] });
  try {
    const now = Date.now();
    const events = [vmStart('regex-vm', now), { type: 'components', vmId: 'regex-vm', time: now, items: [{ componentName: `${'a'.repeat(40)}!`, componentVersion: '1.0' }, { componentName: 'aaaa', componentVersion: '1.0' }] }];
    assert.equal((await ingest(service.gatewayUrl, service.apiKey, events)).status, 200);
    const evil = await createReport(service, 'component', { filter: ["componentName LIKE '(a+)+$'"] });
    assert.equal(evil.status, 202, evil.text);
    const behind = await createReport(service, 'jvmInventory', { from: '30d' });
    const [evilFinal, behindFinal] = await Promise.all([waitFinal(service, 'component', evil.body.reportId, 30_000), waitFinal(service, 'jvmInventory', behind.body.reportId, 30_000)]);
    assert.equal(evilFinal.body.state, 'SUCCEEDED', evilFinal.text);
    assert.equal(behindFinal.body.state, 'SUCCEEDED');
    // The pattern is still evaluated right: only 'aaaa' ends in a run of a's.
    assert.deepEqual(evilFinal.body.data.map((item: { componentName: string }) => item.componentName), ['aaaa']);
    const long = await createReport(service, 'component', { filter: [`componentName LIKE '${'a'.repeat(2000)}'`] });
    assert.equal(long.status, 400);
    assert.equal(long.body.error, 'BAD_FILTER');
  } finally {
    await service.stop();
  }
});

test('a stored VM with a time far in the future fails no report', async () => {
  // Validation now refuses such times; a data directory written before it may still hold one.
  const dataDir = tempDir();
  const store = openStore(dataDir);
  // Beyond the JavaScript Date range: formatting it threw 'Invalid time value' and failed every ungrouped JVM report.
  const far = 9_000_000_000_000_000;
  const now = Date.now();
  const unvalidated = (vmId: string, time: number) => ({ ...vmStart(vmId, time), jvmInfo: {}, tags: {}, annotations: {} }) as unknown as AgentEvent;
  await new Ingestor(store, new Dictionary(store)).ingest(() => [unvalidated('far-vm', now), { type: 'vm.heartbeat', vmId: 'far-vm', time: far }, unvalidated('near-vm', now)] as AgentEvent[]);
  await store.close();
  const service = await startService({ dataDir });
  try {
    const run = await runReport(service, 'jvmInventory', { from: '30d' });
    assert.deepEqual(run.items.map((item) => [item.vmId, item.lastHeardTime === null]).sort(), [['far-vm', true], ['near-vm', false]]);
    const grouped = await runReport(service, 'jvmInventory', { from: '30d', groupBy: ['state'] });
    assert.equal(grouped.items.reduce((sum, item) => sum + (item.count as number), 0), 2);
  } finally {
    await service.stop();
  }
});
