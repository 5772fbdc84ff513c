// Component inventory reports (interface §4.5, decisions §9) checked against a model of the fleet the test ingested.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fleetBatches } from '../../src/seed/fleet.ts';
import { compareMavenVersions } from '../../src/versions/maven.ts';
import { vmStart } from '../helpers/events.ts';
import { ingestAll, iso, runReport } from '../helpers/reports.ts';
import type { ReportRun } from '../helpers/reports.ts';
import { startService } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';
import { componentReport, nest } from './expected.ts';
import type { ComponentWindow, ModelComponent, VmTest } from './expected.ts';
import { DAY, dayStart, FleetModel } from './fleet-model.ts';

const OFFLINE_AFTER_MS = 1_800_000;
const fleetNow = Date.now();
// The population window: heard from since START, started by END.
const START = fleetNow - 12 * DAY + 12_345;
const END = fleetNow - 3 * DAY - 6_789;

/** VMs heard from or started exactly at the window's edges, each with the component edge-lib 1.0. */
function edgeEvents(): Record<string, unknown>[] {
  const edgeLib = (vmId: string, time: number) => ({ type: 'components', vmId, time, items: [{ componentName: 'edge-lib', componentVersion: '1.0' }] });
  const start = (vmId: string, time: number) => vmStart(vmId, time, { tags: { edge: 'yes' } });
  return [
    start('edge-heard-before-start', START - 60_000), edgeLib('edge-heard-before-start', START - 60_000), { type: 'vm.heartbeat', vmId: 'edge-heard-before-start', time: START - 1 },
    start('edge-heard-at-start', START - 60_000), edgeLib('edge-heard-at-start', START - 60_000), { type: 'vm.heartbeat', vmId: 'edge-heard-at-start', time: START },
    // The same component again, from another JAR: still one VM.
    { type: 'components', vmId: 'edge-heard-at-start', time: START - 30_000, items: [{ componentName: 'edge-lib', componentVersion: '1.0', sourceName: 'copy/edge-lib-1.0.jar' }] },
    start('edge-started-at-end', END), edgeLib('edge-started-at-end', END),
    start('edge-started-after-end', END + 1), edgeLib('edge-started-after-end', END + 1),
    // Components reported after a stop are stored, but do not make the VM heard from again (decisions §4).
    start('edge-stopped', START - 2 * DAY), { type: 'vm.stop', vmId: 'edge-stopped', time: START - DAY }, edgeLib('edge-stopped', START + 1_000),
  ];
}

const events = [...fleetBatches({ vms: 300, componentsPerVm: 20, methods: 40, appEnvs: 3, tags: 3, seed: 5, now: fleetNow, days: 30 }, 250), edgeEvents()];
const model = new FleetModel();
for (const batch of events) model.apply(batch);

let service: RunningService;

before(async () => {
  service = await startService({ args: ['--offline-after-ms', String(OFFLINE_AFTER_MS)] });
  await ingestAll(service, events);
});

after(() => service.stop());

const windowBody = { startTime: iso(START), endTime: iso(END) };

function windowOf(run: ReportRun, startTime: number = START, endTime: number | null = END): ComponentWindow {
  return { startTime, endTime, now: run.first.body.requestTime, offlineAfterMs: OFFLINE_AFTER_MS };
}

type Options = Parameters<typeof componentReport>[2];

/** Runs the report and checks items, summary and nesting against the model. */
async function check(body: Record<string, unknown>, options: Options, label = JSON.stringify(body)): Promise<ReportRun> {
  const run = await runReport(service, 'component', { ...windowBody, ...body });
  const expected = componentReport(model, windowOf(run), options);
  assert.deepEqual(run.items, expected.items, label);
  assert.deepEqual(run.first.body.summary, expected.summary, `summary of ${label}`);
  const groupBy = (body.groupBy as string[] | undefined) ?? [];
  assert.deepEqual(run.first.body.data, nest(expected.items, groupBy).slice(0, run.first.body.data.length), `nesting of ${label}`);
  return run;
}

const named = (name: string) => (c: ModelComponent) => c.componentName === name;
const version = (test: (order: number) => boolean, literal: string) => (c: ModelComponent) => test(compareMavenVersions(c.componentVersion, literal));

// One row per operator of decisions §6.2 on component and VM fields; versions compare in Maven order.
const FILTERS: { filter: string[]; keepComponent?: (c: ModelComponent) => boolean; keepVm?: VmTest }[] = [
  { filter: ["componentName = 'log4j-core'"], keepComponent: named('log4j-core') },
  { filter: ["componentName != 'log4j-core'"], keepComponent: (c) => c.componentName !== 'log4j-core' },
  { filter: ["componentName = 'spring-core'", "componentVersion < '5.3'"], keepComponent: (c) => named('spring-core')(c) && version((o) => o < 0, '5.3')(c) },
  { filter: ["componentName = 'spring-core'", "componentVersion <= '5.3.18'"], keepComponent: (c) => named('spring-core')(c) && version((o) => o <= 0, '5.3.18')(c) },
  { filter: ["componentVersion > '10.1.18'"], keepComponent: version((o) => o > 0, '10.1.18') },
  { filter: ["componentName = 'log4j-core'", "componentVersion >= '2.17.0'"], keepComponent: (c) => named('log4j-core')(c) && version((o) => o >= 0, '2.17.0')(c) },
  // Equality follows Maven order: '2' is 2.0.0.
  { filter: ["componentVersion = '2'"], keepComponent: version((o) => o === 0, '2') },
  { filter: ['tags.env = null'], keepVm: (vm) => vm.tags.env === undefined },
  { filter: ['tags.env != null', "componentName LIKE '^library-[0-4]$'"], keepVm: (vm) => vm.tags.env !== undefined, keepComponent: (c) => /^library-[0-4]$/.test(c.componentName) },
  { filter: ["componentName LIKE '^spring-(core|beans)$'"], keepComponent: (c) => /^spring-(core|beans)$/.test(c.componentName) },
  { filter: ["componentName CONTAINS 'JACKSON'"], keepComponent: (c) => c.componentName.includes('jackson') },
  { filter: ["componentVersion IN ('2.0', '1.70', '9.0.58')"], keepComponent: (c) => ['2.0', '1.70', '9.0.58'].some((v) => compareMavenVersions(c.componentVersion, v) === 0) },
  { filter: ["componentVersion RANGE ('1.1', '2.0.0')", "componentName LIKE '^library-'"], keepComponent: (c) => c.componentName.startsWith('library-') && version((o) => o >= 0, '1.1')(c) && version((o) => o <= 0, '2.0.0')(c) },
  { filter: ["state = 'TERMINATED'"], keepVm: (_, state) => state === 'TERMINATED' },
  { filter: ["state IN ('OFFLINE', 'TERMINATED')", "componentName = 'guava'"], keepVm: (_, state) => state !== 'RUNNING', keepComponent: named('guava') },
  { filter: ["AppEnv = 'search'", "tags.region != 'eu-west-1'"], keepVm: (vm) => vm.tags.AppEnv === 'search' && vm.tags.region !== 'eu-west-1' },
  { filter: ["hostName LIKE '-00[0-9][0-9]$'"], keepVm: (vm) => /-00[0-9][0-9]$/.test(vm.hostName!) },
  { filter: ["vmId RANGE ('4', '9')"], keepVm: (vm) => vm.vmId >= '4' && vm.vmId <= '9' },
  { filter: ["tags.team IN ('core', 'data')", "tags.region < 'eu'"], keepVm: (vm) => ['core', 'data'].includes(vm.tags.team) && vm.tags.region < 'eu' },
];

for (const { filter, keepComponent, keepVm } of FILTERS) {
  test(`filter ${JSON.stringify(filter)}: the pairs that pass, counted per component, with summary`, async () => {
    const run = await check({ filter }, { keepComponent, keepVm });
    const all = componentReport(model, windowOf(run)).items.length;
    assert.ok(run.items.length > 0 && run.items.length < all, `the filter selects some but not all components (${run.items.length} of ${all})`);
  });
}

test('cveId = null and cveId != null split the components; a famous CVE and a high score find log4j-core 2.14.1', async () => {
  const key = (item: Record<string, unknown>) => `${item.componentName}@${item.componentVersion}`;
  const all = await runReport(service, 'component', windowBody);
  const without = await runReport(service, 'component', { ...windowBody, filter: ['cveId = null'] });
  const withCves = await runReport(service, 'component', { ...windowBody, filter: ['cveId != null'] });
  assert.ok(without.items.length > 0 && withCves.items.length > 0);
  assert.deepEqual([...without.items, ...withCves.items].map(key).sort(), all.items.map(key).sort());
  assert.ok(withCves.items.some((item) => key(item) === 'log4j-core@2.14.1'));
  const log4shell = await runReport(service, 'component', { ...windowBody, filter: ["cveId = 'CVE-2021-44228'"] });
  assert.ok(log4shell.items.some((item) => key(item) === 'log4j-core@2.14.1'));
  assert.ok(!log4shell.items.some((item) => key(item) === 'log4j-core@2.17.1'));
  const severe = await runReport(service, 'component', { ...windowBody, filter: ['score >= 9.5'] });
  assert.ok(severe.items.some((item) => key(item) === 'log4j-core@2.14.1'));
  for (const item of severe.items) assert.ok(withCves.items.some((other) => key(other) === key(item)));
});

test('window edges: heard from at startTime or started at endTime is in; 1 ms outside is out; a stopped VM stays unheard; a VM counts once', async () => {
  const run = await check({ filter: ["componentName = 'edge-lib'"], detail: true }, { keepComponent: named('edge-lib'), detail: true });
  assert.deepEqual(run.items, [{ componentName: 'edge-lib', componentVersion: '1.0', count: 2, vmIds: ['edge-heard-at-start', 'edge-started-at-end'] }]);
  assert.deepEqual(run.first.body.summary, { vmCount: 2, componentCount: 1 });
});

test('no endTime: every VM heard from since startTime, however late it started', async () => {
  const run = await runReport(service, 'component', { startTime: START, filter: ["componentName = 'edge-lib'"], detail: true });
  assert.deepEqual(run.items.map((item) => item.vmIds), [['edge-heard-at-start', 'edge-started-after-end', 'edge-started-at-end']]);
  assert.deepEqual(run.items, componentReport(model, windowOf(run, START, null), { keepComponent: named('edge-lib'), detail: true }).items);
});

test('defaults: startTime 3 months back at the start of that UTC day, no endTime; default order name ASC, version DESC (Maven)', async () => {
  const run = await runReport(service, 'component', {});
  const now = run.first.body.requestTime as number;
  const today = new Date(now);
  const lastDay = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() - 2, 0)).getUTCDate();
  const startTime = Date.UTC(today.getUTCFullYear(), today.getUTCMonth() - 3, Math.min(today.getUTCDate(), lastDay));
  assert.equal(run.first.body.parameters.resolvedStartTime, startTime);
  assert.equal(run.first.body.parameters.resolvedEndTime, null);
  const expected = componentReport(model, windowOf(run, startTime, null));
  assert.deepEqual(run.items, expected.items);
  assert.deepEqual(run.first.body.summary, expected.summary);
  const springCore = run.items.filter((item) => item.componentName === 'spring-core').map((item) => item.componentVersion);
  assert.deepEqual(springCore, ['6.1.5', '5.3.31', '5.3.18', '5.3.17', '5.2.22.RELEASE', '4.3.30.RELEASE']);
});

test('groupBy a tag: one nesting level per value, VMs without the tag under null, last', async () => {
  const run = await check({ groupBy: ['tags.env'] }, { groupBy: ['tags.env'] });
  assert.deepEqual(run.first.body.data.map((level: Record<string, unknown>) => level['tags.env']), ['dev', 'prod', 'staging', null]);
});

test('groupBy two tags with sortBy count=DESC: groups stay contiguous and ascending, items by count then name, version', async () => {
  const groupBy = ['tags.env', 'AppEnv'];
  const run = await check({ groupBy, sortBy: ['count=DESC'] }, { groupBy, sortBy: [['count', 'DESC']] });
  assert.ok(run.items.some((item, k) => k > 0 && item.count === run.items[k - 1].count && item['tags.env'] === run.items[k - 1]['tags.env'] && item.AppEnv === run.items[k - 1].AppEnv), 'the fleet has ties to break');
});

test('sortBy a group field DESC and componentVersion ASC: nulls still last, versions in Maven order', async () => {
  const groupBy = ['tags.env'];
  const run = await check({ groupBy, sortBy: ['tags.env=DESC', 'componentVersion=ASC'] }, { groupBy, sortBy: [['tags.env', 'DESC'], ['componentVersion', 'ASC']] });
  assert.deepEqual(run.first.body.data.map((level: Record<string, unknown>) => level['tags.env']), ['staging', 'prod', 'dev', null]);
});

test('sortBy componentName DESC without groupBy', async () => {
  await check({ sortBy: ['componentName=DESC'] }, { sortBy: [['componentName', 'DESC']] });
});

// decisions §9: componentName and componentVersion are fields of the items, so they group too.
test('groupBy componentName: one level per name, versions inside in Maven order DESC', async () => {
  await check({ groupBy: ['componentName'], filter: ["componentName LIKE '^(log4j|spring)-'"] }, { groupBy: ['componentName'], keepComponent: (c) => /^(log4j|spring)-/.test(c.componentName) });
});

test('groupBy componentVersion then a tag: version groups ascending in Maven order', async () => {
  const groupBy = ['componentVersion', 'tags.env'];
  await check({ groupBy, filter: ["componentName = 'spring-core'"] }, { groupBy, keepComponent: named('spring-core') });
});

test('detail: each item lists the sorted vmIds it counts', async () => {
  const groupBy = ['AppEnv'];
  const run = await check({ groupBy, detail: true, filter: ["componentName LIKE '^(log4j|spring)-'"] }, { groupBy, detail: true, keepComponent: (c) => /^(log4j|spring)-/.test(c.componentName) });
  for (const item of run.items) assert.equal((item.vmIds as string[]).length, item.count);
});

test('groupBy day: a VM counts in every UTC day of [startTime, endTime] it was alive in', async () => {
  const run = await check({ groupBy: ['day'], filter: ["componentName = 'log4j-core'"] }, { groupBy: ['day'], keepComponent: named('log4j-core') });
  assert.equal(new Set(run.items.map((item) => item.day)).size, Math.round((dayStart(END) - dayStart(START)) / DAY) + 1);
});

test('groupBy day without endTime: running VMs count up to the request time', async () => {
  const run = await runReport(service, 'component', { startTime: START, groupBy: ['day'], filter: ["componentName = 'log4j-core'"] });
  const expected = componentReport(model, windowOf(run, START, null), { groupBy: ['day'], keepComponent: named('log4j-core') });
  assert.deepEqual(run.items, expected.items);
  assert.ok(run.items.some((item) => item.day === new Date(run.first.body.requestTime).getUTCDate()), 'today is a bucket');
});

test('groupBy year, month, day and a tag, sortBy count=DESC', async () => {
  const groupBy = ['year', 'month', 'day', 'tags.region'];
  await check({ groupBy, sortBy: ['count=DESC'], filter: ["componentName IN ('guava', 'h2')"] }, { groupBy, sortBy: [['count', 'DESC']], keepComponent: (c) => ['guava', 'h2'].includes(c.componentName) });
});

test('envelope: parameters with resolvedStartTime/resolvedEndTime, epoch ms times, summary and errors', async () => {
  const body = { startTime: START, endTime: iso(END), groupBy: ['tags.env'], detail: false, reportName: 'component envelope' };
  const run = await runReport(service, 'component', body);
  const { created, first } = run;
  assert.equal(created.headers.get('location'), `/public/component/report/${run.reportId}`);
  assert.equal(created.body.state, 'PROCESSING');
  assert.equal(created.body.userId, 'admin');
  assert.equal(created.body.params, undefined, 'component reports echo `parameters`, not `params`');
  assert.deepEqual(created.body.parameters, { ...body, resolvedStartTime: START, resolvedEndTime: END });
  assert.ok(Number.isSafeInteger(created.body.requestTime));

  const page = first.body;
  assert.equal(page.state, 'SUCCEEDED');
  assert.deepEqual(page.parameters, created.body.parameters);
  for (const field of ['requestTime', 'startTime', 'finishTime']) assert.ok(Number.isSafeInteger(page[field]), `${field} is epoch ms`);
  assert.equal(page.requestTime, created.body.requestTime);
  assert.ok(page.requestTime <= page.startTime && page.startTime <= page.finishTime);
  assert.equal(page.from, undefined);
  assert.deepEqual(page.errors, []);
  assert.deepEqual(page.summary, componentReport(model, windowOf(run), { groupBy: ['tags.env'] }).summary);
  assert.equal(page.totalPages, 1);
  assert.equal(page.page, 0);
  assert.equal(page.afterToken, undefined);
});
