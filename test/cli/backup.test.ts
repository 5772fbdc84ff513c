// `jvmlens backup DIR` copies a data directory while its service runs, which makes the copy itself (no second
// process opens a store beside its writer): a service started on the copy holds the same data; a copy holds
// every batch acknowledged before the command ran while batches keep coming, and the service loses none; a
// target that is not empty or a file, or a source that is no data directory, is refused.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { codeEvent, startEvent } from '../helpers/cve.ts';
import { ingest, ingestUntilStopped } from '../helpers/events.ts';
import { runReport } from '../helpers/reports.ts';
import type { ReportRun } from '../helpers/reports.ts';
import { request, runCli, startService, tempDir } from '../helpers/service.ts';
import { openStore } from '../../src/storage/store.ts';

const BACKUPS = 3;
const WRITERS = 3;

test('a copy taken while the service runs serves the same instances and report pages', async () => {
  const source = await startService();
  const vmId = 'b4c0e000-0000-4000-8000-000000000001';
  const time = Date.now() - 60_000;
  const target = join(tempDir(), 'copy');
  let report: ReportRun | undefined;
  try {
    const stored = await ingest(source.gatewayUrl, source.apiKey, [startEvent(vmId, time, 'host-1', { env: 'prod' }), codeEvent(vmId, time + 1, ['app.jar'])]);
    assert.equal(stored.status, 200);
    report = await runReport(source, 'codeInventory', { from: '1d' });
    const copied = await runCli(['backup', '--data-dir', source.dataDir, target]);
    assert.equal(copied.code, 0, copied.stderr);
    assert.equal(copied.stdout, `copied ${source.dataDir} to ${target} (made by the running service, pid ${source.child.pid})\n`);
  } finally {
    await source.stop();
  }
  const restored = await startService({ dataDir: target });
  try {
    const instance = await request(`${restored.apiUrl}/public/instance/${vmId}`, { key: restored.apiKey });
    assert.equal(instance.status, 200, instance.text);
    const page = await request(`${restored.apiUrl}/public/report/codeInventory/${report!.reportId}?page=0`, { key: restored.apiKey });
    assert.equal(page.status, 200, page.text);
    assert.deepEqual(page.body.data, report!.pages[0].body.data);
  } finally {
    await restored.stop();
  }
});

test('backups taken while batches are acknowledged: each copy holds every batch acknowledged before it, and the service keeps them all', async () => {
  const service = await startService();
  const writers = ingestUntilStopped(service.gatewayUrl, service.apiKey, WRITERS);
  const { acknowledged } = writers;
  const copies: { dir: string; before: string[] }[] = [];
  try {
    for (let backup = 0; backup < BACKUPS; backup++) {
      const before = [...acknowledged];
      const dir = join(tempDir(), `copy-${backup}`);
      const copied = await runCli(['backup', '--data-dir', service.dataDir, dir]);
      assert.equal(copied.code, 0, copied.stderr);
      copies.push({ dir, before });
    }
  } finally {
    await writers.stop();
    await service.stop({ keepData: true });
  }
  assert.ok(acknowledged.length > copies.at(-1)!.before.length, 'batches were acknowledged while the last copy was made');
  for (const { dir, before } of [{ dir: service.dataDir, before: acknowledged }, ...copies]) {
    const store = openStore(dir, { readOnly: true });
    try {
      const missing = before.filter((vmId) => store.vmRows.get(vmId) === undefined);
      assert.deepEqual(missing.slice(0, 10), [], `${dir}: ${missing.length} of ${before.length} batches acknowledged before it missing`);
      assert.ok(store.vmRows.getCount() <= acknowledged.length);
    } finally {
      await store.close();
    }
  }
});

test('a backup refuses a target that is not empty or a file, and a source that is no data directory', async () => {
  const target = tempDir();
  writeFileSync(join(target, 'keep.txt'), 'x');
  const source = tempDir();
  mkdirSync(source, { recursive: true });
  const notEmpty = await runCli(['backup', '--data-dir', source, target]);
  assert.equal(notEmpty.code, 2);
  assert.match(notEmpty.stderr, /no jvmlens data directory at /);
  const empty = await startService();
  await empty.stop({ keepData: true });
  const refused = await runCli(['backup', '--data-dir', empty.dataDir, target]);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /is not empty: a backup goes to a new directory/);
  const file = await runCli(['backup', '--data-dir', empty.dataDir, join(target, 'keep.txt')]);
  assert.equal(file.code, 2, file.stderr);
  assert.equal(file.stderr, `jvmlens: ${join(target, 'keep.txt')} is a file: a backup goes to a new directory\n`);
});
