// FAILED, PARTIALLY_FAILED and TIMED_OUT reports (decisions §6) through --test-faults: page 0 is there and errors explain.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fleetBatches } from '../../src/seed/fleet.ts';
import { FAMILIES, getPage, getPageMsgpack, ingestAll, iso, runReport } from '../helpers/reports.ts';
import type { Family, ReportRun } from '../helpers/reports.ts';
import { startService } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';
import { codeItems, codeRows, componentReport, jvmItems, jvmPopulation } from './expected.ts';
import { DAY, FleetModel } from './fleet-model.ts';

const OFFLINE_AFTER_MS = 1_800_000;
const fleetNow = Date.now();
const FROM = fleetNow - 25 * DAY;
const TO = fleetNow - DAY;
const events = [...fleetBatches({ vms: 120, componentsPerVm: 6, methods: 200, appEnvs: 2, tags: 3, seed: 3, now: fleetNow, days: 30 }, 250)];
const model = new FleetModel();
for (const batch of events) model.apply(batch);

const BODIES: Record<Family, Record<string, unknown>> = {
  jvmInventory: { from: iso(FROM), to: iso(TO) },
  codeInventory: { from: iso(FROM), to: iso(TO) },
  component: { startTime: FROM, endTime: TO, groupBy: ['tags.env'] },
};

let failing: RunningService;
let partial: RunningService;
let slow: RunningService;
/** Many small code partitions and small pages: the code report's pages are cut while partitions run. */
let partialCode: RunningService;
/** Slow after each page a report's only partition writes: the limit stops it while it writes them. */
let slowPages: RunningService;
const SMALL_PAGE_BYTES = 6000;

before(async () => {
  const common = ['--offline-after-ms', String(OFFLINE_AFTER_MS)];
  [failing, partial, slow, partialCode] = await Promise.all([
    startService({ args: [...common, '--test-faults', 'finalize-fail'] }),
    startService({ args: [...common, '--test-faults', 'partition-fail'] }),
    startService({ args: [...common, '--test-faults', 'slow-partition', '--report-timeout-ms', '100'] }),
    startService({ args: [...common, '--test-faults', 'partition-fail', '--test-partition-size', '20', '--page-bytes', String(SMALL_PAGE_BYTES)] }),
  ]);
  slowPages = await startService({ args: [...common, '--test-faults', 'slow-pages', '--report-timeout-ms', '200', '--page-bytes', String(SMALL_PAGE_BYTES)] });
  await Promise.all([failing, partial, slow, partialCode, slowPages].map((service) => ingestAll(service, events)));
});

after(() => Promise.all([failing, partial, slow, partialCode, slowPages].map((service) => service.stop())));

/** The explanation every unsuccessful report carries: errors with code and message, and stateMessages (JVM, code). */
function assertExplained(family: Family, run: ReportRun, code: string): void {
  const page = run.first.body;
  assert.ok(Array.isArray(page.errors) && page.errors.length > 0, `errors explain ${page.state}`);
  for (const error of page.errors) {
    assert.equal(typeof error.code, 'string');
    assert.ok(typeof error.message === 'string' && error.message.length > 0);
  }
  assert.ok(page.errors.some((error: { code: string }) => error.code === code), `an error with code ${code}: ${JSON.stringify(page.errors)}`);
  if (family !== 'component') assert.ok(Array.isArray(page.stateMessages) && page.stateMessages.length > 0, 'stateMessages explain the state');
  assert.ok(page.finishTime !== null, 'a finished report has its finishTime');
}

async function assertPageZeroBothWays(service: RunningService, family: Family, run: ReportRun): Promise<void> {
  const packed = await getPageMsgpack(service, family, run.reportId, { page: 0 });
  assert.equal(packed.status, 200);
  assert.deepEqual(packed.body, run.first.body);
  assert.equal((await getPage(service, family, run.reportId, { page: run.pages.length })).status, 404);
}

for (const family of FAMILIES) {
  test(`${family}: generation that throws → FAILED with an empty page 0`, async () => {
    const run = await runReport(failing, family, BODIES[family], 'FAILED');
    assert.deepEqual(run.first.body.data, []);
    assert.equal(run.first.body.totalCount, 0);
    assert.equal(run.first.body.totalPages, 1);
    assert.equal(run.first.body.page, 0);
    assert.equal(run.first.body.afterToken, undefined);
    assertExplained(family, run, 'GENERATION_FAILED');
    await assertPageZeroBothWays(failing, family, run);
  });

  test(`${family}: exceeding --report-timeout-ms → TIMED_OUT with what was produced`, async () => {
    const run = await runReport(slow, family, BODIES[family], 'TIMED_OUT');
    assertExplained(family, run, 'TIMED_OUT');
    assert.ok(run.first.body.totalPages >= 1);
    // Every partition sleeps past the timeout here, so nothing was produced.
    assert.deepEqual(run.items, []);
    await assertPageZeroBothWays(slow, family, run);
  });
}

test('jvmInventory: a failed partition → PARTIALLY_FAILED; the pages hold exact items of the other VMs', async () => {
  const run = await runReport(partial, 'jvmInventory', BODIES.jvmInventory, 'PARTIALLY_FAILED');
  assertExplained('jvmInventory', run, 'PARTITION_FAILED');
  const window = { from: FROM, to: TO, now: Date.parse(run.first.body.requestTime), offlineAfterMs: OFFLINE_AFTER_MS };
  const expected = new Map(jvmItems(jvmPopulation(model, window), window).map((item) => [item.vmId, item]));
  assert.ok(run.items.length > 0 && run.items.length < expected.size, `some but not all VMs (${run.items.length} of ${expected.size})`);
  for (const item of run.items) assert.deepEqual(item, expected.get(item.vmId as string));
  await assertPageZeroBothWays(partial, 'jvmInventory', run);
});

test('component: a failed partition → PARTIALLY_FAILED; counts and summary cover only the other VMs', async () => {
  const run = await runReport(partial, 'component', BODIES.component, 'PARTIALLY_FAILED');
  assertExplained('component', run, 'PARTITION_FAILED');
  const full = componentReport(model, { startTime: FROM, endTime: TO, now: run.first.body.requestTime, offlineAfterMs: OFFLINE_AFTER_MS }, { groupBy: ['tags.env'] });
  const key = (item: Record<string, unknown>) => JSON.stringify([item['tags.env'], item.componentName, item.componentVersion]);
  const counts = new Map(full.items.map((item) => [key(item), item.count as number]));
  assert.ok(run.items.length > 0);
  for (const item of run.items) assert.ok((item.count as number) <= counts.get(key(item))!, `${key(item)} counts at most the whole fleet`);
  const summary = run.first.body.summary;
  assert.ok(summary.vmCount > 0 && summary.vmCount < full.summary.vmCount, `summary ${JSON.stringify(summary)} of ${JSON.stringify(full.summary)}`);
  assert.ok(summary.componentCount <= full.summary.componentCount);
});

test('codeInventory: the limit stops a report\'s only partition while it writes pages → TIMED_OUT with the items before, each page within the cap', async () => {
  const run = await runReport(slowPages, 'codeInventory', BODIES.codeInventory, 'TIMED_OUT');
  assertExplained('codeInventory', run, 'TIMED_OUT');
  const expected = codeItems(codeRows(model, FROM, TO));
  assert.ok(run.items.length > 0 && run.items.length < expected.length, `some but not all methods (${run.items.length} of ${expected.length})`);
  assert.deepEqual(run.items, expected.slice(0, run.items.length), 'the first items, in order');
  assert.equal(run.first.body.totalCount, run.items.length);
  // Pages were cut before the report knew it would time out: under an envelope that fits a timeout's too.
  for (const page of run.pages) assert.ok(Buffer.byteLength(page.text) <= SMALL_PAGE_BYTES, `page ${page.body.page}: ${Buffer.byteLength(page.text)} bytes`);
  await assertPageZeroBothWays(slowPages, 'codeInventory', run);
});

test('codeInventory: a failed partition → PARTIALLY_FAILED; pages hold exact items of the other partitions, in order, each within the cap', async () => {
  const run = await runReport(partialCode, 'codeInventory', BODIES.codeInventory, 'PARTIALLY_FAILED');
  assertExplained('codeInventory', run, 'PARTITION_FAILED');
  const expected = codeItems(codeRows(model, FROM, TO));
  const key = (item: Record<string, unknown>) => JSON.stringify([item.sourceName, item.className, item.methodName]);
  const position = new Map(expected.map((item, k) => [key(item), k]));
  let last = -1;
  for (const item of run.items) {
    const k = position.get(key(item));
    assert.ok(k !== undefined && k > last, `${key(item)} is an expected item, after the one before it`);
    assert.deepEqual(item, expected[k]);
    last = k;
  }
  assert.ok(run.items.length > 0 && run.items.length < expected.length, `some but not all methods (${run.items.length} of ${expected.length})`);
  assert.ok(run.pages.length > 1, 'several pages');
  // The failure's errors and messages make a larger envelope than a success's: pages were cut under it.
  for (const page of run.pages) assert.ok(Buffer.byteLength(page.text) <= SMALL_PAGE_BYTES, `page ${page.body.page}: ${Buffer.byteLength(page.text)} bytes`);
  await assertPageZeroBothWays(partialCode, 'codeInventory', run);
});
