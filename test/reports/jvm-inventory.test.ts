// JVM inventory reports (interface §4.3, decisions §7) checked against a model of the fleet the test ingested.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fleetBatches } from '../../src/seed/fleet.ts';
import { vmStart } from '../helpers/events.ts';
import { ingestAll, ISO_UTC, iso, runReport } from '../helpers/reports.ts';
import type { ReportRun } from '../helpers/reports.ts';
import { request, startService } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';
import { jvmGroups, jvmItems, jvmPopulation } from './expected.ts';
import type { VmTest, Window } from './expected.ts';
import { asc, DAY, dayStart, desc, FleetModel, javaVersion, sortItems } from './fleet-model.ts';
import type { Item, ModelVm } from './fleet-model.ts';

// Generous, so that no fleet VM changes state while the file runs.
const OFFLINE_AFTER_MS = 1_800_000;
const fleetNow = Date.now();
// The report window: odd instants, well inside the fleet's 30 days.
const FROM = fleetNow - 20 * DAY + 12_345;
const TO = fleetNow - 4 * DAY - 6_789;

/** VMs whose lives end or begin exactly at the window's edges (tag edge=yes). */
function edgeEvents(): Record<string, unknown>[] {
  const edge = (vmId: string, time: number) => vmStart(vmId, time, { tags: { edge: 'yes', AppEnv: 'edges' } });
  return [
    edge('edge-stopped-before-from', FROM - 60_000), { type: 'vm.stop', vmId: 'edge-stopped-before-from', time: FROM - 1 },
    edge('edge-stopped-at-from', FROM - 60_000), { type: 'vm.stop', vmId: 'edge-stopped-at-from', time: FROM },
    edge('edge-silent-before-from', FROM - 60_000), { type: 'vm.heartbeat', vmId: 'edge-silent-before-from', time: FROM - 1 },
    edge('edge-heard-at-from', FROM - 60_000), { type: 'vm.heartbeat', vmId: 'edge-heard-at-from', time: FROM },
    edge('edge-started-at-to', TO),
    edge('edge-started-after-to', TO + 1),
    // Host names that order differently by code point (U+FFFD < U+1F600) and by UTF-16 unit (0xFFFD > 0xD83D).
    hostNamed('collation-astral', `zz-\u{1F600}`),
    hostNamed('collation-bmp', `zz-\uFFFD`),
  ];
}

function hostNamed(vmId: string, hostName: string): Record<string, unknown> {
  const event = vmStart(vmId, FROM + DAY, { tags: { collation: 'yes' } });
  return { ...event, inventory: { ...(event.inventory as Record<string, unknown>), hostName } };
}

const events = [...fleetBatches({ vms: 300, componentsPerVm: 3, methods: 100, appEnvs: 3, tags: 4, seed: 11, now: fleetNow, days: 30 }, 250), edgeEvents()];
const model = new FleetModel();
for (const batch of events) model.apply(batch);
const fleet = [...model.vms.values()];
const someHost = fleet[7].hostName!;

let service: RunningService;

before(async () => {
  service = await startService({ args: ['--offline-after-ms', String(OFFLINE_AFTER_MS)] });
  await ingestAll(service, events);
});

after(() => service.stop());

/** The request time of a finished report, in epoch ms: "now" for VM states and running lives. */
const requestTime = (run: ReportRun): number => Date.parse(run.first.body.requestTime);

function windowOf(run: ReportRun, from = FROM, to = TO): Window {
  return { from, to, now: requestTime(run), offlineAfterMs: OFFLINE_AFTER_MS };
}

const population = (window: Window, keep?: VmTest): ModelVm[] => jvmPopulation(model, window, keep);

const FROM_ISO = iso(FROM);
const TO_ISO = iso(TO);
const windowBody = { from: FROM_ISO, to: TO_ISO };

// One row per operator of decisions §6.2, on representative fields of every type.
const FILTERS: { filter: string[]; keep: (vm: ModelVm, state: string) => boolean }[] = [
  { filter: [`hostName = '${someHost}'`], keep: (vm) => vm.hostName === someHost },
  { filter: ["tags.env != 'prod'"], keep: (vm) => vm.tags.env !== 'prod' },
  { filter: ["agentVersion < '1.5.0'"], keep: (vm) => vm.agentVersion! < '1.5.0' },
  { filter: ["agentVersion <= '1.5.0'"], keep: (vm) => vm.agentVersion! <= '1.5.0' },
  { filter: [`startTime > '${iso(fleetNow - 10 * DAY)}'`], keep: (vm) => vm.startTime > fleetNow - 10 * DAY },
  { filter: [`startTime >= ${fleetNow - 10 * DAY}`], keep: (vm) => vm.startTime >= fleetNow - 10 * DAY },
  { filter: [`lastHeardTime < '${iso(fleetNow - 2 * DAY)}'`], keep: (vm) => vm.lastHeardTime < fleetNow - 2 * DAY },
  { filter: [`lastHeardTime <= ${fleetNow - 2 * DAY}`], keep: (vm) => vm.lastHeardTime <= fleetNow - 2 * DAY },
  { filter: ['tags.env = null'], keep: (vm) => vm.tags.env === undefined },
  { filter: ['tags.env != NULL'], keep: (vm) => vm.tags.env !== undefined },
  { filter: ["hostName LIKE '^checkout-eu-.*-00[0-4]'"], keep: (vm) => /^checkout-eu-.*-00[0-4]/.test(vm.hostName!) },
  { filter: ["javaVendor CONTAINS 'AZUL'"], keep: (vm) => (vm.systemProperties['java.vm.vendor'] ?? '').toLowerCase().includes('azul') },
  { filter: ["tags.region IN ('eu-west-1', 'ap-south-1')"], keep: (vm) => ['eu-west-1', 'ap-south-1'].includes(vm.tags.region) },
  { filter: ["tags.team RANGE ('core', 'edge')"], keep: (vm) => vm.tags.team >= 'core' && vm.tags.team <= 'edge' },
  { filter: [`startTime RANGE ('${iso(fleetNow - 15 * DAY)}', '${iso(fleetNow - 12 * DAY)}')`], keep: (vm) => vm.startTime >= fleetNow - 15 * DAY && vm.startTime <= fleetNow - 12 * DAY },
  { filter: ["state = 'TERMINATED'"], keep: (_, state) => state === 'TERMINATED' },
  { filter: ["state IN ('RUNNING', 'OFFLINE')"], keep: (_, state) => state !== 'TERMINATED' },
  { filter: ["state != 'RUNNING'"], keep: (_, state) => state !== 'RUNNING' },
  { filter: ["systemProperties.os.arch = 'aarch64'"], keep: (vm) => vm.systemProperties['os.arch'] === 'aarch64' },
  { filter: ["osArch != 'aarch64'"], keep: (vm) => vm.systemProperties['os.arch'] !== 'aarch64' },
  // javaVersion falls back to java.version when java.runtime.version is absent (the edge VMs).
  { filter: ["javaVersion = '17.0.10'"], keep: (vm) => javaVersion(vm) === '17.0.10' },
  { filter: ["javaVersion CONTAINS '+7-lts'"], keep: (vm) => (javaVersion(vm) ?? '').toLowerCase().includes('+7-lts') },
  { filter: ["AppEnv = 'payments'", "tags.env IN ('prod', 'staging')"], keep: (vm) => vm.tags.AppEnv === 'payments' && ['prod', 'staging'].includes(vm.tags.env) },
  { filter: ["vmId LIKE '^[0-7]'", "mainMethod CONTAINS 'search'"], keep: (vm) => /^[0-7]/.test(vm.vmId) && vm.mainMethod!.includes('search') },
];

for (const { filter, keep } of FILTERS) {
  test(`filter ${JSON.stringify(filter)}: exactly the VMs of the window that pass, as items in hostName, vmId order`, async () => {
    const run = await runReport(service, 'jvmInventory', { ...windowBody, filter });
    const window = windowOf(run);
    const expected = jvmItems(population(window, keep), window);
    assert.ok(expected.length > 0 && expected.length < fleet.length, `the filter selects some but not all VMs (${expected.length})`);
    assert.deepEqual(run.items, expected);
  });
}

test('window edges: a life ending at from or starting at to is in; one ending 1 ms before from or starting 1 ms after to is out', async () => {
  const run = await runReport(service, 'jvmInventory', { ...windowBody, filter: ["tags.edge = 'yes'"] });
  assert.deepEqual(run.items.map((item) => item.vmId), ['edge-heard-at-from', 'edge-started-at-to', 'edge-stopped-at-from']);
  assert.deepEqual(run.items.map((item) => item.state), ['OFFLINE', 'OFFLINE', 'TERMINATED']);
});

test('strings sort by code point, not by UTF-16 unit (decisions §6.3)', async () => {
  const run = await runReport(service, 'jvmInventory', { ...windowBody, filter: ["tags.collation = 'yes'"] });
  assert.deepEqual(run.items.map((item) => item.hostName), ['zz-\uFFFD', 'zz-\u{1F600}']);
  const descending = await runReport(service, 'jvmInventory', { ...windowBody, filter: ["tags.collation = 'yes'"], sortBy: ['hostName=DESC'] });
  assert.deepEqual(descending.items.map((item) => item.hostName), ['zz-\u{1F600}', 'zz-\uFFFD']);
});

test('ungrouped items carry vmId, hostName, state, agentVersion, javaVersion, javaVendor, ISO times and tags', async () => {
  const run = await runReport(service, 'jvmInventory', windowBody);
  const window = windowOf(run);
  assert.deepEqual(run.items, jvmItems(population(window), window));
  for (const item of run.items) {
    assert.deepEqual(Object.keys(item).sort(), ['agentVersion', 'hostName', 'javaVendor', 'javaVersion', 'lastHeardTime', 'startTime', 'state', 'tags', 'vmId']);
    assert.match(item.startTime as string, ISO_UTC);
  }
});

test('defaults: from is the start of the UTC day 30 days before the request, to is the request time', async () => {
  const run = await runReport(service, 'jvmInventory', {});
  const now = requestTime(run);
  const from = dayStart(now) - 30 * DAY;
  assert.equal(run.first.body.params.resolvedFrom, iso(from));
  assert.equal(run.first.body.params.resolvedTo, iso(now));
  const window = windowOf(run, from, now);
  assert.deepEqual(run.items, jvmItems(population(window), window));
});

test('from with a zone offset and a relative to (1d = end of yesterday, UTC) resolve to UTC instants', async () => {
  const withOffset = new Date(FROM + 5.5 * 3_600_000).toISOString().replace('Z', '+05:30');
  const run = await runReport(service, 'jvmInventory', { from: withOffset, to: '1d' });
  const to = dayStart(requestTime(run)) - 1;
  assert.equal(run.first.body.params.resolvedFrom, FROM_ISO);
  assert.equal(run.first.body.params.resolvedTo, iso(to));
  assert.equal(run.first.body.to, iso(to));
  const window = windowOf(run, FROM, to);
  assert.deepEqual(run.items, jvmItems(population(window), window));
});

test('sortBy on item fields, ties broken by hostName then vmId', async () => {
  for (const [sortBy, keys] of [
    [['startTime=DESC'], [desc('startTime', 'number')]],
    [['javaVendor=ASC', 'lastHeardTime=desc'], [asc('javaVendor'), desc('lastHeardTime', 'number')]],
    [['state=DESC', 'agentVersion=ASC'], [desc('state'), asc('agentVersion')]],
  ] as const) {
    const run = await runReport(service, 'jvmInventory', { ...windowBody, sortBy });
    const window = windowOf(run);
    assert.deepEqual(run.items, jvmItems(population(window), window, keys), JSON.stringify(sortBy));
  }
});

// decisions §7: tags.K are item fields too; VMs without the tag sort last.
test('sortBy a tag of ungrouped items, ties broken by hostName then vmId', async () => {
  const keys = [asc('tags.team'), desc('lastHeardTime', 'number')];
  const run = await runReport(service, 'jvmInventory', { ...windowBody, sortBy: ['tags.team=ASC', 'lastHeardTime=desc'] });
  const window = windowOf(run);
  assert.deepEqual(run.items, jvmItems(population(window), window, keys));
});

/** Grouped items: counts per group over the filtered population. */
const groups = (window: Window, groupBy: string[], keep?: VmTest): Item[] => jvmGroups(population(window, keep), groupBy, window);

test('groupBy a tag: VMs without it form the null group, which sorts last', async () => {
  const run = await runReport(service, 'jvmInventory', { ...windowBody, groupBy: ['tags.env'] });
  const expected = sortItems(groups(windowOf(run), ['tags.env']), [asc('tags.env')]);
  assert.deepEqual(run.items, expected);
  assert.deepEqual(run.items.map((item) => item['tags.env']), ['dev', 'prod', 'staging', null]);
});

test('groupBy tags with sortBy count=DESC: ties broken by the group fields ascending', async () => {
  const groupBy = ['tags.env', 'state', 'agentVersion'];
  const run = await runReport(service, 'jvmInventory', { ...windowBody, groupBy, sortBy: ['count=DESC'] });
  const expected = sortItems(groups(windowOf(run), groupBy), [desc('count', 'number'), asc('tags.env'), asc('state'), asc('agentVersion')]);
  assert.deepEqual(run.items, expected);
  assert.ok(expected.some((item, k) => k > 0 && item.count === expected[k - 1].count), 'the fleet has ties to break');
  assert.ok(expected.some((item) => item['tags.env'] === null));
});

test('sortBy a group field DESC, the other group fields ascending after it', async () => {
  const groupBy = ['tags.region', 'agentVersion'];
  const run = await runReport(service, 'jvmInventory', { ...windowBody, groupBy, sortBy: ['agentVersion=DESC'] });
  assert.deepEqual(run.items, sortItems(groups(windowOf(run), groupBy), [desc('agentVersion'), asc('tags.region')]));
});

test('groupBy day: a VM counts once in every UTC day of the window it was alive in', async () => {
  const run = await runReport(service, 'jvmInventory', { ...windowBody, groupBy: ['day'] });
  const expected = sortItems(groups(windowOf(run), ['day']), [asc('day', 'number')]);
  assert.deepEqual(run.items, expected);
  // 17 UTC days touch the window; every fleet day has live VMs.
  assert.equal(run.items.length, Math.round((dayStart(TO) - dayStart(FROM)) / DAY) + 1);
});

test('groupBy year, month, day (calendar days) with a filter, sorted by count DESC', async () => {
  const groupBy = ['year', 'month', 'day'];
  const keep = (_: ModelVm, state: string) => state === 'TERMINATED';
  const run = await runReport(service, 'jvmInventory', { ...windowBody, groupBy, sortBy: ['count=DESC'], filter: ["state = 'TERMINATED'"] });
  const expected = sortItems(groups(windowOf(run), groupBy, keep), [desc('count', 'number'), asc('year', 'number'), asc('month', 'number'), asc('day', 'number')]);
  assert.deepEqual(run.items, expected);
});

test('calendar days of the default window: running VMs count up to the request time, today included', async () => {
  const groupBy = ['year', 'month', 'day'];
  const run = await runReport(service, 'jvmInventory', { groupBy });
  const now = requestTime(run);
  const window = windowOf(run, dayStart(now) - 30 * DAY, now);
  assert.deepEqual(run.items, sortItems(jvmGroups(population(window), groupBy, window), [asc('year', 'number'), asc('month', 'number'), asc('day', 'number')]));
  assert.equal(run.items.at(-1)!.day, new Date(now).getUTCDate());
});

test('groupBy week and a tag: ISO weeks of the window', async () => {
  const groupBy = ['week', 'tags.region'];
  const run = await runReport(service, 'jvmInventory', { ...windowBody, groupBy });
  assert.deepEqual(run.items, sortItems(groups(windowOf(run), groupBy), [asc('week', 'number'), asc('tags.region')]));
});

test('envelope: 202 with Location and params (resolvedFrom/resolvedTo); GET with ISO times, from, to, counts', async () => {
  const body = { ...windowBody, groupBy: ['tags.env'], reportName: 'jvm envelope' };
  const run = await runReport(service, 'jvmInventory', body);
  const { created, first } = run;
  assert.equal(created.headers.get('location'), `/public/report/jvmInventory/${run.reportId}`);
  assert.equal(created.body.state, 'PROCESSING');
  assert.equal(created.body.userId, 'admin');
  assert.match(created.body.requestTime, ISO_UTC);
  assert.ok(Array.isArray(created.body.stateMessages));
  assert.deepEqual(created.body.params, { ...body, resolvedFrom: FROM_ISO, resolvedTo: TO_ISO });

  const page = first.body;
  assert.equal(page.reportId, run.reportId);
  assert.equal(page.state, 'SUCCEEDED');
  assert.equal(page.userId, 'admin');
  assert.deepEqual(page.params, created.body.params);
  assert.equal(page.requestTime, created.body.requestTime);
  for (const field of ['requestTime', 'startTime', 'finishTime', 'from', 'to']) assert.match(page[field], ISO_UTC, field);
  assert.ok(page.requestTime <= page.startTime && page.startTime <= page.finishTime);
  assert.equal(page.from, FROM_ISO);
  assert.equal(page.to, TO_ISO);
  assert.ok(Array.isArray(page.stateMessages) && page.stateMessages.length > 0);
  assert.equal(page.errors, undefined, 'no errors on a report that succeeded');
  assert.equal(page.totalCount, 4);
  assert.equal(page.totalPages, 1);
  assert.equal(page.page, 0);
  assert.equal(page.afterToken, undefined, 'a single page has no afterToken');
});

test('an empty result is one empty page', async () => {
  const run = await runReport(service, 'jvmInventory', { ...windowBody, filter: ["hostName = 'no-such-host'"] });
  assert.deepEqual(run.items, []);
  assert.equal(run.first.body.totalCount, 0);
  assert.equal(run.first.body.totalPages, 1);
});

// decisions §5: tag changes apply to every report from then on. Last, as it changes the fleet.
test('tags set through the explorer regroup the VM in the next report', async () => {
  const vm = fleet.find((candidate) => candidate.tags.env === 'prod' && candidate.startTime <= TO && candidate.lastHeardTime >= FROM)!;
  const response = await request(`${service.apiUrl}/public/instance/${vm.vmId}/tags`, { method: 'PUT', key: service.apiKey, body: { AppEnv: vm.tags.AppEnv, env: 'qa' } });
  assert.equal(response.status, 200, response.text);
  vm.tags = { AppEnv: vm.tags.AppEnv, env: 'qa' };
  const run = await runReport(service, 'jvmInventory', { ...windowBody, groupBy: ['tags.env', 'tags.region'] });
  assert.deepEqual(run.items, sortItems(groups(windowOf(run), ['tags.env', 'tags.region']), [asc('tags.env'), asc('tags.region')]));
  assert.ok(run.items.some((item) => item['tags.env'] === 'qa' && item['tags.region'] === null && item.count === 1));
});
