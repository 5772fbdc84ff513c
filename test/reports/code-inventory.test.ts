// Code inventory reports (interface §4.4, decisions §8) checked against a model of the code the test ingested.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fleetBatches } from '../../src/seed/fleet.ts';
import { vmStart } from '../helpers/events.ts';
import { ingestAll, ISO_UTC, iso, runReport } from '../helpers/reports.ts';
import type { ReportRun } from '../helpers/reports.ts';
import { startService } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';
import { codeItems, codeRows, codeTime } from './expected.ts';
import { asc, DAY, dayStart, desc, FleetModel } from './fleet-model.ts';
import type { ModelCode } from './fleet-model.ts';

const fleetNow = Date.now();
const FROM = fleetNow - 20 * DAY + 12_345;
const TO = fleetNow - 4 * DAY - 6_789;
const windowBody = { from: iso(FROM), to: iso(TO) };

/** Methods first or last seen exactly at the window's edges, by VMs of two AppEnvs and one without. */
function edgeEvents(): Record<string, unknown>[] {
  const code = (vmId: string, time: number, methodName: string) => ({ type: 'code', vmId, time, items: [{ sourceName: 'edge-app.jar', className: 'com/acme/edge/Edge', methodName }] });
  return [
    vmStart('edge-a', FROM - 2 * DAY, { tags: { AppEnv: 'edges' } }),
    vmStart('edge-b', FROM - 2 * DAY, { tags: { AppEnv: 'other-edges' } }),
    vmStart('edge-none', FROM - 2 * DAY),
    code('edge-a', FROM - 1, 'lastSeenBeforeFrom()'),
    code('edge-a', FROM, 'lastSeenAtFrom()'),
    code('edge-a', TO, 'firstSeenAtTo()'),
    code('edge-a', TO + 1, 'firstSeenAfterTo()'),
    code('edge-a', FROM - DAY, 'spansTheWindow()'),
    code('edge-a', TO + DAY, 'spansTheWindow()'),
    // Outside the window in each AppEnv alone, inside once merged across AppEnvs.
    code('edge-a', FROM - 5, 'mergedAcrossAppEnvs()'),
    code('edge-b', TO + 5, 'mergedAcrossAppEnvs()'),
    code('edge-none', FROM + DAY, 'withoutAppEnv()'),
    // Names that order differently by code point (U+FFFD < U+1F600) and by UTF-16 unit.
    { type: 'code', vmId: 'edge-a', time: FROM + DAY, items: ['C\u{1F600}', 'C\uFFFD', 'Cz'].map((className) => ({ sourceName: 'unicode.jar', className, methodName: 'm()' })) },
    { type: 'code', vmId: 'edge-a', time: FROM + DAY, items: ['m\u{1F600}()', 'm\uFFFD()'].map((methodName) => ({ sourceName: 'unicode.jar', className: 'Cz', methodName })) },
  ];
}

const events = [...fleetBatches({ vms: 200, componentsPerVm: 4, methods: 2600, appEnvs: 3, tags: 2, seed: 23, now: fleetNow, days: 30 }, 250), edgeEvents()];
const model = new FleetModel();
for (const batch of events) model.apply(batch);

let service: RunningService;

before(async () => {
  service = await startService();
  await ingestAll(service, events);
});

after(() => service.stop());

const rows = (keep?: (record: ModelCode) => boolean) => codeRows(model, FROM, TO, keep);

// `field:value` (case-sensitive substring) and one row per operator of the filter grammar.
const FILTERS: { filter: string[]; keep: (record: ModelCode) => boolean }[] = [
  { filter: ['sourceName:app-module-1'], keep: (r) => r.sourceName.includes('app-module-1') },
  { filter: ['className:Service1'], keep: (r) => r.className.includes('Service1') },
  { filter: ['methodName:(int, int)'], keep: (r) => r.methodName.includes('(int, int)') },
  { filter: ['sourceName:app-module', 'methodName:method3'], keep: (r) => r.sourceName.includes('app-module') && r.methodName.includes('method3') },
  { filter: ["sourceName = 'app-module-0.jar'"], keep: (r) => r.sourceName === 'app-module-0.jar' },
  { filter: ["sourceName != 'app-module-0.jar'"], keep: (r) => r.sourceName !== 'app-module-0.jar' },
  { filter: ["methodName < 'method3'"], keep: (r) => r.methodName < 'method3' },
  { filter: ["methodName <= 'method3()'"], keep: (r) => r.methodName <= 'method3()' },
  { filter: ["className > 'com/acme/module1'"], keep: (r) => r.className > 'com/acme/module1' },
  { filter: ["className >= 'org/'"], keep: (r) => r.className >= 'org/' },
  { filter: ['AppEnv = null'], keep: (r) => r.appEnv === '' },
  { filter: ['AppEnv != null'], keep: (r) => r.appEnv !== '' },
  { filter: ["methodName LIKE '^method[0-2]\\('"], keep: (r) => /^method[0-2]\(/.test(r.methodName) },
  { filter: ["className CONTAINS 'PKG1'"], keep: (r) => r.className.toLowerCase().includes('pkg1') },
  { filter: ["sourceName IN ('app-module-1.jar', 'edge-app.jar')"], keep: (r) => ['app-module-1.jar', 'edge-app.jar'].includes(r.sourceName) },
  { filter: ["methodName RANGE ('method2', 'method4(long)')"], keep: (r) => r.methodName >= 'method2' && r.methodName <= 'method4(long)' },
  { filter: ["AppEnv = 'payments'"], keep: (r) => r.appEnv === 'payments' },
  { filter: ["AppEnv IN ('edges', 'search')", 'className:Edge'], keep: (r) => ['edges', 'search'].includes(r.appEnv) && r.className.includes('Edge') },
];

for (const { filter, keep } of FILTERS) {
  test(`filter ${JSON.stringify(filter)}: the matching methods of the window, merged across AppEnvs, in path order`, async () => {
    const run = await runReport(service, 'codeInventory', { ...windowBody, filter });
    const expected = codeItems(rows(keep));
    assert.ok(expected.length > 0 && expected.length < rows().length, `the filter selects some but not all methods (${expected.length})`);
    assert.deepEqual(run.items, expected);
  });
}

test('field:value is case-sensitive, CONTAINS is not', async () => {
  assert.deepEqual((await runReport(service, 'codeInventory', { ...windowBody, filter: ['className:SERVICE1'] })).items, []);
  const run = await runReport(service, 'codeInventory', { ...windowBody, filter: ["className CONTAINS 'SERVICE1'"] });
  assert.deepEqual(run.items, codeItems(rows((r) => r.className.includes('Service1'))));
});

test('window edges: lastSeen at from and firstSeen at to are in, 1 ms outside is out; AppEnvs merge before the window applies', async () => {
  const run = await runReport(service, 'codeInventory', { ...windowBody, filter: ['sourceName:edge-app'] });
  assert.deepEqual(run.items, [
    { sourceName: 'edge-app.jar', className: 'com/acme/edge/Edge', methodName: 'firstSeenAtTo()', firstSeen: codeTime(TO), lastSeen: codeTime(TO) },
    { sourceName: 'edge-app.jar', className: 'com/acme/edge/Edge', methodName: 'lastSeenAtFrom()', firstSeen: codeTime(FROM), lastSeen: codeTime(FROM) },
    { sourceName: 'edge-app.jar', className: 'com/acme/edge/Edge', methodName: 'mergedAcrossAppEnvs()', firstSeen: codeTime(FROM - 5), lastSeen: codeTime(TO + 5) },
    { sourceName: 'edge-app.jar', className: 'com/acme/edge/Edge', methodName: 'spansTheWindow()', firstSeen: codeTime(FROM - DAY), lastSeen: codeTime(TO + DAY) },
    { sourceName: 'edge-app.jar', className: 'com/acme/edge/Edge', methodName: 'withoutAppEnv()', firstSeen: codeTime(FROM + DAY), lastSeen: codeTime(FROM + DAY) },
  ]);
  // One AppEnv alone saw mergedAcrossAppEnvs() only before the window.
  const one = await runReport(service, 'codeInventory', { ...windowBody, filter: ['sourceName:edge-app', "AppEnv = 'edges'"] });
  assert.ok(!one.items.some((item) => item.methodName === 'mergedAcrossAppEnvs()'));
});

test('the default order is by code point, not by UTF-16 unit (decisions §6.3)', async () => {
  const expected = ['Cz m()', 'Cz m\uFFFD()', 'Cz m\u{1F600}()', 'C\uFFFD m()', 'C\u{1F600} m()'];
  for (const sortBy of [[], ['className=ASC']]) {
    const run = await runReport(service, 'codeInventory', { ...windowBody, filter: ['sourceName:unicode'], sortBy });
    assert.deepEqual(run.items.map((item) => `${item.className} ${item.methodName}`), expected, JSON.stringify(sortBy));
  }
});

test('every method of the window, times as yyyy-MM-ddTHH:mm:ss.SSS without zone', async () => {
  const run = await runReport(service, 'codeInventory', windowBody);
  assert.deepEqual(run.items, codeItems(rows()));
  for (const item of run.items) {
    assert.deepEqual(Object.keys(item).sort(), ['className', 'firstSeen', 'lastSeen', 'methodName', 'sourceName']);
    assert.match(item.firstSeen as string, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$/);
  }
});

test('defaults: from is the start of the UTC day 30 days before the request, to is the request time', async () => {
  const run = await runReport(service, 'codeInventory', {});
  const now = Date.parse(run.first.body.requestTime);
  const from = dayStart(now) - 30 * DAY;
  assert.equal(run.first.body.params.resolvedFrom, iso(from));
  assert.equal(run.first.body.params.resolvedTo, iso(now));
  assert.deepEqual(run.items, codeItems(codeRows(model, from, now)));
});

test('groupBy prefixes of sourceName, className, methodName: firstSeen min, lastSeen max, count of methods', async () => {
  for (const groupBy of [['sourceName'], ['sourceName', 'className'], ['sourceName', 'className', 'methodName']]) {
    const run = await runReport(service, 'codeInventory', { ...windowBody, groupBy });
    assert.deepEqual(run.items, codeItems(rows(), groupBy), JSON.stringify(groupBy));
  }
});

test('groupBy with a filter and sortBy count=DESC: ties broken by the group fields ascending', async () => {
  const groupBy = ['sourceName', 'className'];
  const run = await runReport(service, 'codeInventory', { ...windowBody, groupBy, sortBy: ['count=DESC'], filter: ["sourceName CONTAINS 'module'"] });
  const expected = codeItems(rows((r) => r.sourceName.includes('module')), groupBy, [desc('count', 'number')]);
  assert.deepEqual(run.items, expected);
  assert.ok(expected.some((item, k) => k > 0 && item.count === expected[k - 1].count), 'the fleet has ties to break');
});

test('sortBy firstSeen, lastSeen and path fields, ties broken by the path ascending', async () => {
  for (const [groupBy, sortBy, keys] of [
    [[], ['firstSeen=DESC'], [desc('firstSeen', 'number')]],
    [[], ['methodName=DESC', 'lastSeen=ASC'], [desc('methodName'), asc('lastSeen', 'number')]],
    [['sourceName'], ['lastSeen=ASC'], [asc('lastSeen', 'number')]],
    [['sourceName', 'className'], ['sourceName=DESC', 'firstSeen=DESC'], [desc('sourceName'), desc('firstSeen', 'number')]],
  ] as const) {
    const run = await runReport(service, 'codeInventory', { ...windowBody, groupBy, sortBy });
    assert.deepEqual(run.items, codeItems(rows(), [...groupBy], [...keys]), `${JSON.stringify(groupBy)} ${JSON.stringify(sortBy)}`);
  }
});

test('envelope: 202 with Location, params with resolvedFrom/resolvedTo and stateMessages; GET with ISO times and paging fields', async () => {
  const body = { ...windowBody, filter: ['sourceName:app-module'], groupBy: ['sourceName'], reportName: 'code envelope' };
  const run: ReportRun = await runReport(service, 'codeInventory', body);
  const { created, first } = run;
  assert.equal(created.headers.get('location'), `/public/report/codeInventory/${run.reportId}`);
  assert.equal(created.body.reportId, run.reportId);
  assert.equal(created.body.state, 'PROCESSING');
  assert.equal(created.body.userId, 'admin');
  assert.match(created.body.requestTime, ISO_UTC);
  assert.ok(Array.isArray(created.body.stateMessages), 'code reports answer the POST with stateMessages (interface §2.3)');
  assert.deepEqual(created.body.params, { ...body, resolvedFrom: iso(FROM), resolvedTo: iso(TO) });

  const page = first.body;
  assert.equal(page.state, 'SUCCEEDED');
  assert.deepEqual(page.params, created.body.params);
  for (const field of ['requestTime', 'startTime', 'finishTime', 'from', 'to']) assert.match(page[field], ISO_UTC, field);
  assert.equal(page.from, iso(FROM));
  assert.equal(page.to, iso(TO));
  assert.ok(page.stateMessages.length > 0);
  assert.equal(page.totalCount, codeItems(rows((r) => r.sourceName.includes('app-module')), ['sourceName']).length);
  assert.equal(page.totalPages, 1);
  assert.equal(page.page, 0);
  assert.equal(page.afterToken, undefined);
});

// Last: it ingests more code, into the model too.
test('a report after more code is ingested lists it: the worker reads its kept class records again after a write', async () => {
  const before = await runReport(service, 'codeInventory', windowBody);
  assert.deepEqual(before.items, codeItems(rows()));
  const time = FROM + 2 * DAY;
  const more = [
    // A method of a class the worker has kept, and a class it has not.
    { type: 'code', vmId: 'edge-a', time, items: [{ sourceName: 'edge-app.jar', className: 'com/acme/edge/Edge', methodName: 'addedLater()' }] },
    { type: 'code', vmId: 'edge-none', time, items: [{ sourceName: 'edge-app.jar', className: 'com/acme/edge/Later', methodName: 'run()' }] },
  ];
  await ingestAll(service, [more]);
  model.apply(more);
  const after = await runReport(service, 'codeInventory', windowBody);
  assert.equal(after.items.length, before.items.length + 2);
  assert.deepEqual(after.items, codeItems(rows()));
});
