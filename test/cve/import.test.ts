// `jvmlens cve import` into a running service (decisions §11): the curated set, new and replaced records, zip archives, bad records.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { zipArchive } from '../../src/seed/zip-archive.ts';
import { codeEvent, componentsEvent, cveImport, CVSS, getEvents, GROUP, osvRecord, pollEvents, startEvent } from '../helpers/cve.ts';
import type { SyntheticCve } from '../helpers/cve.ts';
import { ingest } from '../helpers/events.ts';
import { runCli, startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

/** decisions §11: an import into the data directory of a running service takes effect within 10 seconds. */
const APPLIED_WITHIN_MS = 10_000;
const LOG4J = { componentName: 'log4j-core', componentVersion: '2.14.1', groupId: 'org.apache.logging.log4j', sourceName: 'log4j-core-2.14.1.jar' };
const OMEGA: SyntheticCve = { osvId: 'GHSA-jvml-0100-oooo', cveId: 'CVE-2099-8001', groupId: GROUP, artifactId: 'omega-lib', versions: ['4.2'], severity: CVSS.score53 };
const IMPORTED_LINE = /^imported (\d+) OSV records \((\d+) replaced stored ones\), skipped (\d+), in \d+\.\d s \(\d+ records\/s\)$/m;
const now = Date.now();
let service: RunningService;

before(async () => {
  service = await startService();
  const result = await ingest(service.gatewayUrl, service.apiKey, [
    startEvent('imp-1', now - 60_000, 'host-imp', { env: 'prod' }),
    componentsEvent('imp-1', now - 59_000, [
      LOG4J,
      { componentName: 'omega-lib', componentVersion: '4.2', groupId: GROUP, sourceName: 'omega-lib-4.2.jar' },
      { componentName: 'omega-lib', componentVersion: '4.3', groupId: GROUP, sourceName: 'omega-lib-4.3.jar' },
      { componentName: 'zip-lib', componentVersion: '1.0', groupId: GROUP },
      { componentName: 'zip-lib', componentVersion: '2.0', groupId: GROUP },
      { componentName: 'folder-lib', componentVersion: '1.0', groupId: GROUP },
    ]),
    codeEvent('imp-1', now - 58_000, ['omega-lib-4.2.jar']),
    startEvent('imp-2', now - 60_000, 'host-imp'),
    componentsEvent('imp-2', now - 59_000, [{ ...LOG4J, sourceName: 'app.jar' }]),
  ]);
  assert.equal(result.status, 200, JSON.stringify(result.body));
});

after(() => service?.stop());

const rowsOf = (items: any[], componentName: string) => items.filter((e) => e.componentName === componentName);
const cveIds = (items: any[]) => items.map((e) => `${e.componentName} ${e.componentVersion} ${e.cveId} ${e.score}`);

/** Runs the CLI on the running service's data directory; returns its output and when it finished. */
async function importIntoRunning(paths: string[]): Promise<{ stdout: string; stderr: string; finishedAt: number; startedAt: number; counts: number[] }> {
  const startedAt = Date.now();
  const result = await cveImport(service.dataDir, paths);
  const line = IMPORTED_LINE.exec(result.stdout);
  assert.ok(line !== null, `the summary line: ${result.stdout}`);
  return { ...result, startedAt, finishedAt: Date.now(), counts: line.slice(1, 4).map(Number) };
}

test('the curated set is loaded on first start: log4j-core 2.14.1 carries CVE-2021-44228 with score 10.0', async () => {
  assert.match(service.stderr(), /loaded the curated OSV set/);
  const page = await getEvents(service, { vmId: 'imp-1' });
  const log4j = rowsOf(page.body.data, 'log4j-core');
  const log4shell = log4j.find((e) => e.cveId === 'CVE-2021-44228');
  assert.ok(log4shell !== undefined, JSON.stringify(log4j));
  assert.equal(log4shell.score, 10);
  assert.equal(log4shell.cveState, 'PRESENT', 'no code was loaded from log4j-core-2.14.1.jar');
  assert.ok(log4j.some((e) => e.cveId === 'CVE-2021-45046'), 'the incomplete-fix CVE too');
  assert.deepEqual(rowsOf(page.body.data, 'omega-lib'), [], 'nothing known about omega-lib yet');
});

test('an import into the running service shows within 10 s; unchanged matches keep their analysis time', async () => {
  const before = (await getEvents(service, { hostName: 'host-imp' })).body.data;
  const folder = tempDir('jvmlens-osv-');
  writeFileSync(join(folder, 'omega.json'), JSON.stringify(osvRecord(OMEGA)));
  const run = await importIntoRunning([join(folder, 'omega.json')]);
  assert.deepEqual(run.counts, [1, 0, 0]);
  const { items } = await pollEvents(service, { vmId: 'imp-1' }, (data) => rowsOf(data, 'omega-lib').length > 0, APPLIED_WITHIN_MS - (Date.now() - run.finishedAt));
  const omega = rowsOf(items, 'omega-lib');
  assert.deepEqual(cveIds(omega), ['omega-lib 4.2 CVE-2099-8001 5.3'], 'only the listed version');
  assert.equal(omega[0].cveState, 'USED');
  assert.ok(omega[0].cveAnalysisTime >= run.startedAt, 'analysed when the vulnerability data changed');
  const log4jBefore = rowsOf(before, 'log4j-core').map((e) => [e.vmId, e.cveId, e.cveAnalysisTime]);
  const log4jAfter = rowsOf((await getEvents(service, { hostName: 'host-imp' })).body.data, 'log4j-core').map((e) => [e.vmId, e.cveId, e.cveAnalysisTime]);
  assert.deepEqual(log4jAfter, log4jBefore);
});

test('a component new to the fleet right after an import is matched in its own batch, analysed when the batch came', async () => {
  const kappa: SyntheticCve = { osvId: 'GHSA-jvml-0300-kkkk', cveId: 'CVE-2099-8300', groupId: GROUP, artifactId: 'kappa-lib', versions: ['1.0'], severity: CVSS.score53 };
  const folder = tempDir('jvmlens-osv-');
  writeFileSync(join(folder, 'kappa.json'), JSON.stringify(osvRecord(kappa)));
  await importIntoRunning([join(folder, 'kappa.json')]);
  // At once, not when the service's periodic refresh notices the import: every node of a cluster, which
  // applies the import and then the batch from its log, matches the batch the same way.
  const sentAt = Date.now();
  const result = await ingest(service.gatewayUrl, service.apiKey, [
    startEvent('imp-3', now - 30_000, 'host-imp-3'),
    componentsEvent('imp-3', now - 29_000, [{ componentName: 'kappa-lib', componentVersion: '1.0', groupId: GROUP }]),
  ]);
  const answeredAt = Date.now();
  assert.equal(result.status, 200, JSON.stringify(result.body));
  const kappaRows = rowsOf((await getEvents(service, { vmId: 'imp-3' })).body.data, 'kappa-lib');
  assert.deepEqual(cveIds(kappaRows), ['kappa-lib 1.0 CVE-2099-8300 5.3']);
  const analysedAt = kappaRows[0].cveAnalysisTime as number;
  assert.ok(analysedAt >= sentAt - 1 && analysedAt <= answeredAt, `analysed when the batch was received: ${kappaRows[0].cveAnalysisTime}`);
});

test('a record with the id of a stored one replaces it: the new score shows within 10 s', async () => {
  const folder = tempDir('jvmlens-osv-');
  writeFileSync(join(folder, 'omega-v2.json'), JSON.stringify(osvRecord({ ...OMEGA, severity: CVSS.score98 }, { modified: '2026-02-01T00:00:00Z' })));
  const run = await importIntoRunning([folder]);
  assert.deepEqual(run.counts, [1, 1, 0], 'one record, replacing a stored one');
  const { items } = await pollEvents(service, { vmId: 'imp-1' }, (data) => rowsOf(data, 'omega-lib').some((e) => e.score === 9.8), APPLIED_WITHIN_MS - (Date.now() - run.finishedAt));
  assert.deepEqual(cveIds(rowsOf(items, 'omega-lib')), ['omega-lib 4.2 CVE-2099-8001 9.8'], 'replaced, not added');
  assert.ok(rowsOf(items, 'omega-lib')[0].cveAnalysisTime >= run.startedAt);
});

test('a zip archive (stored and deflated entries, a JSON array) imports, and replaces a curated record too', async () => {
  const zipOne: SyntheticCve = { osvId: 'GHSA-jvml-0101-zzzz', cveId: 'CVE-2099-8101', groupId: GROUP, artifactId: 'zip-lib', versions: ['1.0'], severity: CVSS.score61 };
  const zipTwo: SyntheticCve = { ...zipOne, osvId: 'GHSA-jvml-0102-zzzz', cveId: 'CVE-2099-8102', versions: ['1.0', '2.0'], severity: CVSS.score33 };
  // The curated CVE-2021-44228 record, withdrawn: a replacement that stops its matches.
  const withdrawnLog4shell = { id: 'GHSA-jfh8-c2jp-5v3q', modified: '2026-03-01T00:00:00Z', withdrawn: '2026-03-01T00:00:00Z', aliases: ['CVE-2021-44228'], affected: [] };
  const archive = join(tempDir('jvmlens-osv-'), 'advisories.zip');
  writeFileSync(archive, zipArchive([
    { name: 'GHSA-jvml-0101-zzzz.json', content: JSON.stringify(osvRecord(zipOne)) },
    { name: 'nested/pair.json', content: JSON.stringify([osvRecord(zipTwo), withdrawnLog4shell]), deflate: true },
    { name: 'README.txt', content: 'not a record' },
  ]));
  const run = await importIntoRunning([archive]);
  assert.deepEqual(run.counts, [3, 1, 0]);
  const { items } = await pollEvents(service, { vmId: 'imp-1' }, (data) => rowsOf(data, 'zip-lib').length === 3, APPLIED_WITHIN_MS - (Date.now() - run.finishedAt));
  assert.deepEqual(cveIds(rowsOf(items, 'zip-lib')), ['zip-lib 1.0 CVE-2099-8101 6.1', 'zip-lib 1.0 CVE-2099-8102 3.3', 'zip-lib 2.0 CVE-2099-8102 3.3']);
  const log4j = rowsOf(items, 'log4j-core').map((e) => e.cveId);
  assert.ok(!log4j.includes('CVE-2021-44228') && log4j.includes('CVE-2021-45046'), `withdrawn CVE-2021-44228 is gone, the rest stays: ${log4j}`);
});

test('a folder with bad records: each is reported on stderr with its file and skipped, the rest import', async () => {
  const folder = tempDir('jvmlens-osv-');
  const good: SyntheticCve = { osvId: 'GHSA-jvml-0201-ffff', cveId: 'CVE-2099-8201', groupId: GROUP, artifactId: 'folder-lib', versions: ['1.0'], severity: CVSS.score75 };
  mkdirSync(join(folder, 'nested'));
  writeFileSync(join(folder, 'a-good.json'), JSON.stringify(osvRecord(good)));
  writeFileSync(join(folder, 'b-broken.json'), '{"id": "GHSA-broken", "modified": ');
  writeFileSync(join(folder, 'c-invalid.json'), JSON.stringify({ ...osvRecord({ ...good, osvId: 'GHSA-jvml-0202-ffff' }), affected: 'all of them' }));
  writeFileSync(join(folder, 'nested', 'd-pair.json'), JSON.stringify([
    osvRecord({ ...good, osvId: 'GHSA-jvml-0203-ffff', cveId: 'CVE-2099-8203', severity: CVSS.score33 }),
    { id: 'GHSA-jvml-0204-ffff', aliases: ['CVE-2099-8204'] },
  ]));
  const run = await importIntoRunning([folder]);
  assert.deepEqual(run.counts, [2, 0, 3]);
  for (const file of ['b-broken.json', 'c-invalid.json', join('nested', 'd-pair.json[1]')]) {
    assert.ok(run.stderr.includes(`skipped ${join(folder, file)}: `), `${file} is reported: ${run.stderr}`);
  }
  assert.ok(!run.stderr.includes('a-good.json') && !run.stderr.includes('d-pair.json[0]'), 'good records are not reported');
  const { items } = await pollEvents(service, { vmId: 'imp-1' }, (data) => rowsOf(data, 'folder-lib').length === 2, APPLIED_WITHIN_MS - (Date.now() - run.finishedAt));
  assert.deepEqual(cveIds(rowsOf(items, 'folder-lib')), ['folder-lib 1.0 CVE-2099-8201 7.5', 'folder-lib 1.0 CVE-2099-8203 3.3']);
});

test('cve import without a path is a usage error', async () => {
  const result = await runCli(['cve', 'import', '--data-dir', service.dataDir]);
  assert.notEqual(result.code, 0);
  assert.match(result.stderr, /cve import PATH/);
});
