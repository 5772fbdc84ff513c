// GET /public/cve/events filters (interface §4.6, decisions §11) checked item by item against a model of the ingested fleet.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { codeEvent, componentsEvent, cveImport, GROUP, startEvent, writeAdvisories } from '../helpers/cve.ts';
import { ADVISORIES, checkQuery, compareCodePoints, CveFleetModel, ingestInto, LIBS, nextWholeSecond, syntheticVm, timeText, TIME_FORMS } from './fleet-model.ts';
import type { EventQuery } from '../helpers/cve.ts';
import type { ModelFilter } from './fleet-model.ts';
import { request, startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

const DAY = 86_400_000;
// Whole minutes, so every VM time is a whole second and second-precision forms can hit it exactly.
const base = Math.floor((Date.now() - 20 * DAY) / 60_000) * 60_000;
const model = new CveFleetModel(ADVISORIES);
const vmIdOf = (i: number) => (i % 7 === 3 ? `VM-${String(i).padStart(2, '0')}` : `vm-${String(i).padStart(2, '0')}`);
/** Components first seen in the second ingestion, so their analysis time is later. */
const LATE = new Set(['Zeta-lib@10.0', 'beta-lib@3.2.1', 'beta-lib@3.3', 'epsilon-lib@2.0']);
const earlyLibs = LIBS.filter((l) => !LATE.has(`${l.componentName}@${l.componentVersion}`));
/** startTime boundary: VM 20 starts exactly there, vm-edge one millisecond before. */
const START_EDGE = base + 20 * 60_000;
/** endTime boundary: vm-09 was last heard exactly there (its heartbeat), vm-edge one millisecond after. */
const END_EDGE = base + 9 * 60_000 + 3_600_000 + 3_000;
/** cveAnalysis boundary: a whole second between the two ingestions. */
let analysisEdge = 0;

let service: RunningService;

before(async () => {
  const dataDir = tempDir();
  await cveImport(dataDir, [writeAdvisories(ADVISORIES)]);
  service = await startService({ dataDir });
  const early = Array.from({ length: 36 }, (_, i) => syntheticVm(i, vmIdOf(i), base, earlyLibs)).flat();
  early.push(
    startEvent('vm-edge', START_EDGE - 1, 'host-edge', { env: 'prod', team: 'edge' }),
    componentsEvent('vm-edge', START_EDGE - 1, [{ componentName: 'alpha-lib', componentVersion: '1.0', groupId: GROUP, sourceName: 'alpha-lib-1.0.jar' }]),
    { type: 'vm.heartbeat', vmId: 'vm-edge', time: END_EDGE + 1 },
  );
  await ingestInto(service, model, early);
  analysisEdge = await nextWholeSecond();
  const late = Array.from({ length: 16 }, (_, k) => syntheticVm(36 + k, vmIdOf(36 + k), base)).flat();
  // VMs of the first ingestion gain components the fleet has not seen before.
  late.push(componentsEvent('vm-01', base + 60_000, [{ componentName: 'Zeta-lib', componentVersion: '10.0', groupId: GROUP, sourceName: 'Zeta-lib-10.0.jar' }, { componentName: 'beta-lib', componentVersion: '3.2.1', groupId: GROUP }]));
  late.push(componentsEvent('VM-10', base + 600_000, [{ componentName: 'epsilon-lib', componentVersion: '2.0', groupId: GROUP, sourceName: 'eps.jar' }]), codeEvent('VM-10', base + 600_000, ['eps.jar']));
  await ingestInto(service, model, late);
});

after(() => service?.stop());

test('the test fleet covers what the filters distinguish', () => {
  const all = model.expected();
  assert.ok(all.length > 150, `${all.length} rows`);
  assert.ok(all.some((e) => e.cveState === 'USED') && all.some((e) => e.cveState === 'PRESENT'), 'USED and PRESENT rows');
  assert.ok(all.some((e) => e.tags === null), 'rows of VMs without tags');
  assert.ok(all.some((e) => e.vmId.startsWith('VM-')) && all.some((e) => e.componentName === 'Zeta-lib'), 'upper-case ids and names sort first by code point');
  assert.ok(model.expected({ showNotImpacted: true }).some((e) => e.componentName === 'delta-lib'), 'delta-lib is clean: its advisory names another groupId');
  assert.equal(model.expected({ vmId: 'vm-00' }).some((e) => e.componentName === 'delta-lib'), false);
});

test('no filter: every (VM, component, CVE) in vmId, componentName, componentVersion, cveId order, with the fields of interface §2.5', async () => {
  const walk = await checkQuery(service, model, { limit: 1000 }, {});
  assert.deepEqual(Object.keys(walk.items[0]).sort(), ['componentName', 'componentVersion', 'cveAnalysisTime', 'cveId', 'cveState', 'hostName', 'lastHeardTime', 'score', 'startTime', 'tags', 'vmId'].sort());
  // Code-point order: 'Zeta-lib' before 'alpha-lib', '10.0' before '9.0', 'CVE-2099-10001' before 'CVE-2099-2001'.
  const zeta = walk.items.filter((e) => e.vmId === 'vm-01' && e.componentName === 'Zeta-lib').map((e) => `${e.componentVersion} ${e.cveId}`);
  assert.deepEqual(zeta.slice(0, 2), ['10.0 CVE-2099-10001', '10.0 CVE-2099-2001']);
  assert.equal(walk.items[0].vmId.startsWith('VM-'), true);
});

test('the default page (no limit) is the first 100 items of the same order', async () => {
  const page = await request(`${service.apiUrl}/public/cve/events`, { key: service.apiKey });
  assert.equal(page.status, 200);
  assert.equal(page.body.limit, 100);
  const expected = model.expected().slice(0, 100);
  assert.deepEqual(page.body.data.map((e: any) => `${e.vmId}|${e.componentName}|${e.componentVersion}|${e.cveId}`), expected.map((e) => `${e.vmId}|${e.componentName}|${e.componentVersion}|${e.cveId}`));
});

const EXACT: { query: EventQuery; filter: ModelFilter }[] = [
  { query: { hostName: 'host-b' }, filter: { hostName: 'host-b' } },
  { query: { hostName: 'host-edge' }, filter: { hostName: 'host-edge' } },
  // Exact match: no prefix, no case folding.
  { query: { hostName: 'host' }, filter: { hostName: 'host' } },
  { query: { hostName: 'HOST-A' }, filter: { hostName: 'HOST-A' } },
  { query: { vmId: 'VM-10' }, filter: { vmId: 'VM-10' } },
  { query: { vmId: 'vm-01' }, filter: { vmId: 'vm-01' } },
  { query: { vmId: 'vm-1' }, filter: { vmId: 'vm-1' } },
  { query: { vmId: 'no-such-vm' }, filter: { vmId: 'no-such-vm' } },
  { query: { 'tags.env': 'prod' }, filter: { tags: { env: 'prod' } } },
  { query: { 'tags.team': 'edge' }, filter: { tags: { team: 'edge' } } },
  { query: { 'tags.env': 'prod', 'tags.team': 'edge' }, filter: { tags: { env: 'prod', team: 'edge' } } },
  { query: { 'tags.env': 'staging', 'tags.team': 'core' }, filter: { tags: { env: 'staging', team: 'core' } } },
  { query: { 'tags.env': 'Prod' }, filter: { tags: { env: 'Prod' } } },
  { query: { 'tags.nokey': 'prod' }, filter: { tags: { nokey: 'prod' } } },
  { query: { 'tags.env': 'prod', hostName: 'host-a', vmId: 'vm-00' }, filter: { tags: { env: 'prod' }, hostName: 'host-a', vmId: 'vm-00' } },
  { query: { 'tags.env': 'prod', hostName: 'host-b', vmId: 'vm-00' }, filter: { tags: { env: 'prod' }, hostName: 'host-b', vmId: 'vm-00' } },
];

test('hostName, vmId and tags.K match exactly; several tags.K are ANDed', async () => {
  for (const { query, filter } of EXACT) await checkQuery(service, model, { ...query, limit: 1000 }, filter);
  assert.ok(model.expected({ tags: { env: 'prod', team: 'edge' } }).length > 0, 'the ANDed tags select something');
});

test('startTime keeps VMs started at or after it, in every time form', async () => {
  assert.ok(model.expected({ vmId: 'vm-20' }).length > 0 && model.expected({ vmId: 'vm-edge' }).length > 0);
  for (const form of TIME_FORMS) {
    const text = timeText(START_EDGE, form, form === 'compactOffset' ? -330 : 120);
    const walk = await checkQuery(service, model, { startTime: text, limit: 1000 }, { startTime: START_EDGE }, `startTime=${text}`);
    assert.ok(walk.items.some((e) => e.vmId === 'vm-20') && !walk.items.some((e) => e.vmId === 'vm-edge'), `edges of startTime=${text}`);
  }
});

test('endTime keeps VMs last heard at or before it, in every time form', async () => {
  assert.equal(model.vms.get('vm-09')!.lastHeardTime, END_EDGE);
  for (const form of TIME_FORMS) {
    const text = timeText(END_EDGE, form, form === 'compactOffset' ? -330 : 120);
    const walk = await checkQuery(service, model, { endTime: text, limit: 1000 }, { endTime: END_EDGE }, `endTime=${text}`);
    assert.ok(walk.items.some((e) => e.vmId === 'vm-09') && !walk.items.some((e) => e.vmId === 'vm-edge'), `edges of endTime=${text}`);
  }
});

test('startTime and endTime together, with a tag; a window after every VM is empty', async () => {
  await checkQuery(service, model, { startTime: timeText(START_EDGE, 'Z'), endTime: timeText(END_EDGE + 3_600_000, 'plain'), 'tags.env': 'prod' }, { startTime: START_EDGE, endTime: END_EDGE + 3_600_000, tags: { env: 'prod' } });
  const empty = await checkQuery(service, model, { startTime: String(Date.now() + DAY) }, { startTime: Date.now() + DAY });
  assert.deepEqual(empty.items, []);
  assert.equal(empty.pages[0].body.hasNext, false);
});

test('cveAnalysisStartTime and cveAnalysisEndTime split the two ingestions, in every time form', async () => {
  const early = model.expected({ cveAnalysisEndTime: analysisEdge });
  const late = model.expected({ cveAnalysisStartTime: analysisEdge });
  assert.ok(early.length > 0 && late.length > 0, 'both sides are populated');
  assert.equal(early.length + late.length, model.expected().length);
  for (const form of TIME_FORMS) {
    const text = timeText(analysisEdge, form, form === 'compactOffset' ? -330 : 120);
    await checkQuery(service, model, { cveAnalysisEndTime: text, limit: 1000 }, { cveAnalysisEndTime: analysisEdge }, `cveAnalysisEndTime=${text}`);
    await checkQuery(service, model, { cveAnalysisStartTime: text, limit: 1000 }, { cveAnalysisStartTime: analysisEdge }, `cveAnalysisStartTime=${text}`);
  }
  await checkQuery(service, model, { cveAnalysisStartTime: analysisEdge, cveAnalysisEndTime: analysisEdge }, { cveAnalysisStartTime: analysisEdge, cveAnalysisEndTime: analysisEdge });
  await checkQuery(service, model, { cveAnalysisStartTime: analysisEdge, 'tags.env': 'staging', hostName: 'host-c' }, { cveAnalysisStartTime: analysisEdge, tags: { env: 'staging' }, hostName: 'host-c' });
});

test('showNotImpacted=true adds one item per clean component (cveId, score, cveState, cveAnalysisTime null); false is the default', async () => {
  const walk = await checkQuery(service, model, { showNotImpacted: true, limit: 1000 }, { showNotImpacted: true });
  const clean = walk.items.filter((e) => e.cveId === null);
  assert.ok(clean.length > 0);
  for (const item of clean) assert.deepEqual([item.score, item.cveState, item.cveAnalysisTime], [null, null, null]);
  assert.ok(clean.some((e) => e.componentName === 'delta-lib') && clean.some((e) => e.componentName === 'alpha-lib' && e.componentVersion === '2.0'));
  await checkQuery(service, model, { showNotImpacted: false, limit: 1000 }, {});
  await checkQuery(service, model, { showNotImpacted: true, 'tags.team': 'core', hostName: 'host-a' }, { showNotImpacted: true, tags: { team: 'core' }, hostName: 'host-a' });
  await checkQuery(service, model, { showNotImpacted: true, vmId: 'vm-04' }, { showNotImpacted: true, vmId: 'vm-04' });
});

test('cveId keeps the items of one CVE, with other filters, showNotImpacted and small pages', async () => {
  for (const advisory of ADVISORIES) {
    await checkQuery(service, model, { cveId: advisory.cveId, limit: 7 }, { cveId: advisory.cveId });
  }
  await checkQuery(service, model, { cveId: 'CVE-2099-1001', 'tags.env': 'prod', showNotImpacted: true, limit: 3 }, { cveId: 'CVE-2099-1001', tags: { env: 'prod' }, showNotImpacted: true });
  await checkQuery(service, model, { cveId: 'CVE-2099-1001', hostName: 'host-b' }, { cveId: 'CVE-2099-1001', hostName: 'host-b' });
  const unknown = await checkQuery(service, model, { cveId: 'CVE-1999-0001' }, { cveId: 'CVE-1999-0001' });
  assert.equal(unknown.items.length, 0);
});

/** The summary the model predicts: per CVE its score, the VMs with a USED row and those with PRESENT rows only. */
function expectedSummary(filter: ModelFilter): { cveId: string; score: number | null; usedVmCount: number; presentVmCount: number; components: string[] }[] {
  const byCve = new Map<string, { score: number | null; used: Set<string>; all: Set<string>; components: Set<string> }>();
  for (const row of model.expected(filter)) {
    const entry = byCve.get(row.cveId!) ?? { score: row.score, used: new Set<string>(), all: new Set<string>(), components: new Set<string>() };
    byCve.set(row.cveId!, entry);
    entry.all.add(row.vmId);
    if (row.cveState === 'USED') entry.used.add(row.vmId);
    entry.components.add(`${row.componentName} ${row.componentVersion}`);
  }
  return [...byCve]
    .map(([cveId, entry]) => ({ cveId, score: entry.score, usedVmCount: entry.used.size, presentVmCount: entry.all.size - entry.used.size, components: [...entry.components].sort(compareCodePoints) }))
    .sort((a, b) => (b.score ?? -1) - (a.score ?? -1) || compareCodePoints(a.cveId, b.cveId));
}

test('the CVE summary counts each VM once per CVE, USED when any of its components with the CVE ran', async () => {
  const cases: { query: string; filter: ModelFilter }[] = [
    { query: '', filter: {} },
    { query: '?tags.env=prod', filter: { tags: { env: 'prod' } } },
    { query: '?tags.env=staging&tags.team=edge', filter: { tags: { env: 'staging', team: 'edge' } } },
    { query: '?hostName=host-a', filter: { hostName: 'host-a' } },
    { query: `?startTime=${START_EDGE}`, filter: { startTime: START_EDGE } },
    { query: '?tags.env=nowhere', filter: { tags: { env: 'nowhere' } } },
  ];
  for (const { query, filter } of cases) {
    const response = await request(`${service.apiUrl}/public/cve/summary${query}`, { key: service.apiKey });
    assert.equal(response.status, 200, response.text);
    const actual = response.body.data.map((cve: any) => ({ ...cve, components: cve.components.map((c: any) => `${c.componentName} ${c.componentVersion}`) }));
    const expected = expectedSummary(filter);
    assert.deepEqual(actual.map(({ severity, ...rest }: any) => rest), expected, query);
    assert.ok(actual.every((cve: any) => cve.severity === (cve.score >= 9 ? 'critical' : cve.score >= 7 ? 'high' : cve.score >= 4 ? 'medium' : 'low')), query);
    const selected = [...model.vms.values()].filter((vm) => (filter.hostName === undefined || vm.hostName === filter.hostName) && Object.entries(filter.tags ?? {}).every(([key, value]) => vm.tags[key] === value) && (filter.startTime === undefined || vm.startTime >= filter.startTime));
    assert.deepEqual(response.body.summary, { vmCount: selected.length, cveCount: expected.length }, query);
  }
  // The counting rule the model encodes is exercised: some VM has one CVE USED in one component and PRESENT in another.
  const mixed = [...model.vms.values()].some((vm) => {
    const rows = model.expected({ vmId: vm.vmId, cveId: 'CVE-2099-1002' });
    return rows.some((row) => row.cveState === 'USED') && rows.some((row) => row.cveState === 'PRESENT');
  });
  assert.ok(mixed, 'a VM has CVE-2099-1002 both USED (one version) and PRESENT (another)');
  const bad = await request(`${service.apiUrl}/public/cve/summary?vmId=x`, { key: service.apiKey });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error, 'BAD_PARAMETER');
});

test('cveState: USED once code was loaded from the component\'s sourceName, PRESENT before and without a sourceName', async () => {
  const rows = model.expected({ vmId: 'vm-07' });
  const present = rows.find((e) => e.cveState === 'PRESENT' && model.vms.get('vm-07')!.components.get(`${e.componentName}\u0000${e.componentVersion}`)!.sourceName !== null)!;
  assert.ok(present !== undefined, 'vm-07 has a PRESENT component with a sourceName');
  const jar = `${present.componentName}-${present.componentVersion}.jar`;
  await checkQuery(service, model, { vmId: 'vm-07' }, { vmId: 'vm-07' });
  await ingestInto(service, model, [codeEvent('vm-07', base + 7 * 60_000 + 5_000, [jar])]);
  const after = model.expected({ vmId: 'vm-07' }).filter((e) => e.componentName === present.componentName && e.componentVersion === present.componentVersion);
  assert.ok(after.every((e) => e.cveState === 'USED'));
  await checkQuery(service, model, { vmId: 'vm-07' }, { vmId: 'vm-07' });
});

test('tags changed through the explorer API (PUT, DELETE) apply to tag filters at once', async () => {
  const put = await request(`${service.apiUrl}/public/instance/vm-00/tags`, { method: 'PUT', key: service.apiKey, body: [{ key: 'env', value: 'qa' }, { key: 'owner', value: 'payments' }] });
  assert.equal(put.status, 200, put.text);
  model.setTags('vm-00', { env: 'qa', owner: 'payments' });
  await checkQuery(service, model, { 'tags.env': 'prod', limit: 1000 }, { tags: { env: 'prod' } });
  const qa = await checkQuery(service, model, { 'tags.env': 'qa', 'tags.owner': 'payments' }, { tags: { env: 'qa', owner: 'payments' } });
  assert.ok(qa.items.length > 0 && qa.items.every((e) => e.vmId === 'vm-00'));
  await checkQuery(service, model, { 'tags.team': 'core', limit: 1000 }, { tags: { team: 'core' } });

  const removed = await request(`${service.apiUrl}/public/instance/vm-02/tags`, { method: 'DELETE', key: service.apiKey });
  assert.equal(removed.status, 204);
  model.setTags('vm-02', {});
  const bare = await checkQuery(service, model, { vmId: 'vm-02' }, { vmId: 'vm-02' });
  assert.ok(bare.items.length > 0 && bare.items.every((e) => e.tags === null));
  await checkQuery(service, model, { 'tags.env': 'prod', limit: 1000 }, { tags: { env: 'prod' } });
});

test('heartbeats, vm.stop and a new vm.start move VMs in and out of the startTime and endTime filters', async () => {
  // vm-09 sat exactly on the endTime edge; a later heartbeat takes it out.
  await ingestInto(service, model, [{ type: 'vm.heartbeat', vmId: 'vm-09', time: END_EDGE + 60_000 }]);
  // vm-13, last heard before the edge, stops after it: its lastHeardTime becomes the stop time.
  await ingestInto(service, model, [{ type: 'vm.stop', vmId: 'vm-13', time: base + 13 * 60_000 + 2 * 3_600_000 }]);
  assert.equal(model.vms.get('vm-13')!.lastHeardTime, base + 13 * 60_000 + 2 * 3_600_000);
  // vm-edge starts again, later and on another host: it now passes startTime.
  await ingestInto(service, model, [startEvent('vm-edge', START_EDGE + 5_000, 'host-moved')]);
  for (const form of ['plain', 'epoch'] as const) {
    await checkQuery(service, model, { endTime: timeText(END_EDGE, form), limit: 1000 }, { endTime: END_EDGE });
    await checkQuery(service, model, { startTime: timeText(START_EDGE, form), limit: 1000 }, { startTime: START_EDGE });
  }
  await checkQuery(service, model, { hostName: 'host-moved' }, { hostName: 'host-moved' });
  await checkQuery(service, model, { hostName: 'host-edge' }, { hostName: 'host-edge' });
  const edge = await checkQuery(service, model, { vmId: 'vm-edge' }, { vmId: 'vm-edge' });
  assert.ok(edge.items.every((e) => e.startTime === START_EDGE + 5_000 && e.hostName === 'host-moved'));
  await checkQuery(service, model, { limit: 1000 }, {});
});
