// Report pages (decisions §6): each JSON body within --page-bytes, afterToken chain = page=N, msgpack = JSON, component pages re-nested.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fleetBatches } from '../../src/seed/fleet.ts';
import { vmStart } from '../helpers/events.ts';
import { flattenNested, getPage, getPageMsgpack, ingestAll, iso, runReport } from '../helpers/reports.ts';
import type { Family, Item, ReportRun } from '../helpers/reports.ts';
import { startService } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';
import { codeItems, codeRows, componentReport, jvmItems, jvmPopulation, nest } from './expected.ts';
import { DAY, FleetModel } from './fleet-model.ts';

const PAGE_BYTES = 8000;
const OFFLINE_AFTER_MS = 1_800_000;
const fleetNow = Date.now();
const FROM = fleetNow - 25 * DAY;
const TO = fleetNow - DAY;

const events = [...fleetBatches({ vms: 300, componentsPerVm: 10, methods: 1500, appEnvs: 3, tags: 3, seed: 41, now: fleetNow, days: 30 }, 250)];
const model = new FleetModel();
for (const batch of events) model.apply(batch);

let service: RunningService;

before(async () => {
  service = await startService({ args: ['--page-bytes', String(PAGE_BYTES), '--offline-after-ms', String(OFFLINE_AFTER_MS)] });
  await ingestAll(service, events);
});

after(() => service.stop());

/** Checks every page of a finished report against the paging rules; returns the run. */
async function checkPages(family: Family, body: Record<string, unknown>, expected: (run: ReportRun) => Item[]): Promise<ReportRun> {
  const run = await runReport(service, family, body);
  const { pages } = run;
  const last = pages.length - 1;
  assert.ok(pages.length >= 5, `a report of many pages (${pages.length})`);
  assert.deepEqual(run.items, expected(run), 'the pages concatenated are the whole result, in order');
  for (const [k, page] of pages.entries()) {
    assert.ok(Buffer.byteLength(page.text) <= PAGE_BYTES, `page ${k} is ${Buffer.byteLength(page.text)} bytes of JSON`);
    assert.ok(page.body.data.length > 0, `page ${k} holds items`);
    assert.equal(page.body.page, k);
    assert.equal(page.body.totalPages, pages.length);
    assert.equal(page.body.totalCount, run.items.length);
    assert.equal(page.body.state, 'SUCCEEDED');
    assert.equal(page.body.afterToken === undefined, k === last, `afterToken on page ${k} of ${pages.length}`);

    const byNumber = await getPage(service, family, run.reportId, { page: k });
    assert.equal(byNumber.status, 200);
    assert.deepEqual(byNumber.body, page.body, `page=${k} and the afterToken chain agree`);

    const packed = await getPageMsgpack(service, family, run.reportId, { page: k });
    assert.equal(packed.status, 200);
    assert.match(packed.contentType, /^application\/msgpack/);
    assert.deepEqual(packed.body, page.body, `msgpack and JSON agree on page ${k}`);
  }
  const past = await getPage(service, family, run.reportId, { page: pages.length });
  assert.equal(past.status, 404, 'the page after the last');
  return run;
}

function jvmWindow(run: ReportRun) {
  return { from: FROM, to: TO, now: Date.parse(run.first.body.requestTime), offlineAfterMs: OFFLINE_AFTER_MS };
}

test('JVM inventory items spread over many pages', async () => {
  await checkPages('jvmInventory', { from: iso(FROM), to: iso(TO) }, (run) => jvmItems(jvmPopulation(model, jvmWindow(run)), jvmWindow(run)));
});

test('code inventory items spread over many pages', async () => {
  await checkPages('codeInventory', { from: iso(FROM), to: iso(TO) }, () => codeItems(codeRows(model, FROM, TO)));
});

/** Each component page nests its own consecutive items again; groups may continue on the next page. */
async function checkComponentPages(body: Record<string, unknown>, groupBy: string[], detail = false): Promise<void> {
  const run = await checkPages('component', { startTime: FROM, endTime: TO, ...body }, (r) => {
    return componentReport(model, { startTime: FROM, endTime: TO, now: r.first.body.requestTime, offlineAfterMs: OFFLINE_AFTER_MS }, { groupBy, detail }).items;
  });
  const leaves = run.pages.map((page) => flattenNested(page.body.data, groupBy));
  for (const [k, page] of run.pages.entries()) assert.deepEqual(page.body.data, nest(leaves[k], groupBy), `page ${k} nests consecutive items once per value`);
  const sameGroup = (a: Item, b: Item) => groupBy.every((field) => a[field] === b[field]);
  assert.ok(leaves.some((items, k) => k > 0 && sameGroup(items[0], leaves[k - 1].at(-1)!)), 'some group continues on the next page');
  for (const page of run.pages) assert.deepEqual(page.body.summary, run.first.body.summary);
}

test('component items nested by two tags, over many pages', async () => {
  await checkComponentPages({ groupBy: ['tags.env', 'tags.region'] }, ['tags.env', 'tags.region']);
});

test('component items with detail (vmIds), nested by AppEnv, over many pages', async () => {
  await checkComponentPages({ groupBy: ['AppEnv'], detail: true }, ['AppEnv'], true);
});

test("an afterToken only reads the report it came from", async () => {
  const a = await runReport(service, 'jvmInventory', { from: iso(FROM), to: iso(TO) });
  const b = await runReport(service, 'jvmInventory', { from: iso(FROM), to: iso(TO), filter: ["state != 'TERMINATED'"] });
  const foreign = await getPage(service, 'jvmInventory', b.reportId, { afterToken: a.pages[0].body.afterToken });
  assert.equal(foreign.status, 400, foreign.text);
  const both = await fetch(`${service.apiUrl}/public/report/jvmInventory/${a.reportId}?page=1&afterToken=${a.pages[0].body.afterToken}`, { headers: { 'x-api-key': service.apiKey } });
  assert.equal(both.status, 400, 'page and afterToken together');
});

test('msgpack GET of an unknown report → 404', async () => {
  const unknown = await getPageMsgpack(service, 'codeInventory', 'no-such-report');
  assert.equal(unknown.status, 404);
});

// decisions §6: only an item larger than the page fails a report; a small cap still holds small items.
test('a small --page-bytes (2048) holds a report of small items, each page within the cap; an item larger than a page fails the report', async () => {
  const small = await startService({ args: ['--page-bytes', '2048', '--offline-after-ms', String(OFFLINE_AFTER_MS)] });
  try {
    await ingestAll(small, events.slice(0, 1));
    const run = await runReport(small, 'jvmInventory', { from: iso(FROM), to: iso(TO), groupBy: ['tags.env', 'agentVersion'] });
    assert.ok(run.items.length > 0);
    for (const page of run.pages) assert.ok(Buffer.byteLength(page.text) <= 2048);
    // decisions §6: a single item larger than a page fails the report (here: vmIds of many VMs).
    const shared = Array.from({ length: 80 }, (_, k) => `shared-by-many-vms-${k}`);
    await ingestAll(small, [shared.flatMap((vmId) => [vmStart(vmId, fleetNow - DAY), { type: 'components', vmId, time: fleetNow - DAY, items: [{ componentName: 'big-lib', componentVersion: '1' }] }])]);
    const tooLarge = await runReport(small, 'component', { detail: true, filter: ["componentName = 'big-lib'"] }, 'FAILED');
    assert.deepEqual(tooLarge.first.body.data, []);
    assert.ok(tooLarge.first.body.errors.length > 0);
  } finally {
    await small.stop();
  }
});
