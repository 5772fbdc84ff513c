// Component inventory reports filtered on cveId and score (decisions §9), and their agreement with CVE events.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { componentsEvent, cveImport, CVSS, getEvents, GROUP, startEvent, writeAdvisories } from '../helpers/cve.ts';
import { ADVISORIES, compareCodePoints, CveFleetModel, ingestInto, syntheticVm } from './fleet-model.ts';
import type { SyntheticCve } from '../helpers/cve.ts';
import type { ModelVm } from './fleet-model.ts';
import { runReport } from '../helpers/reports.ts';
import { startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

const NARROW: SyntheticCve = { osvId: 'GHSA-jvml-0300-nnnn', cveId: 'CVE-2099-9001', groupId: GROUP, artifactId: 'narrow-lib', versions: ['1.0'], severity: CVSS.score81 };
const advisories = [...ADVISORIES, NARROW];
const model = new CveFleetModel(advisories);
// Recent VMs: the component report's default population is VMs heard from in the last 3 months.
const base = Math.floor((Date.now() - 2 * 86_400_000) / 60_000) * 60_000;
let service: RunningService;

before(async () => {
  const dataDir = tempDir();
  await cveImport(dataDir, [writeAdvisories(advisories)]);
  service = await startService({ dataDir });
  await ingestInto(service, model, Array.from({ length: 40 }, (_, i) => syntheticVm(i, `rep-${String(i).padStart(2, '0')}`, base)).flat());
});

after(() => service?.stop());

interface Expected {
  componentName: string;
  componentVersion: string;
  count: number;
}

/** Components of the fleet (VMs kept by `keepVm`) whose CVEs pass `keep`, with their VM counts. */
function expectedComponents(keep: (cves: { cveId: string; score: number }[]) => boolean, keepVm: (vm: ModelVm) => boolean = () => true): { items: Expected[]; vmCount: number } {
  const counts = new Map<string, Expected>();
  const vms = new Set<string>();
  for (const vm of model.vms.values()) {
    if (!keepVm(vm)) continue;
    for (const component of vm.components.values()) {
      if (!keep(model.cves(component))) continue;
      const key = `${component.componentName}\u0000${component.componentVersion}`;
      const entry = counts.get(key) ?? { componentName: component.componentName, componentVersion: component.componentVersion, count: 0 };
      entry.count++;
      counts.set(key, entry);
      vms.add(vm.vmId);
    }
  }
  return { items: [...counts.values()].sort(byComponent), vmCount: vms.size };
}

const byComponent = (a: { componentName: unknown; componentVersion: unknown }, b: typeof a) => compareCodePoints(String(a.componentName), String(b.componentName)) || compareCodePoints(String(a.componentVersion), String(b.componentVersion));
const maxScore = (cves: { score: number }[]) => Math.max(...cves.map((c) => c.score));

async function check(filter: string[], keep: (cves: { cveId: string; score: number }[]) => boolean, keepVm?: (vm: ModelVm) => boolean): Promise<void> {
  const run = await runReport(service, 'component', { filter });
  const expected = expectedComponents(keep, keepVm);
  assert.ok(expected.items.length > 0, `${filter} selects something`);
  const items = run.items.map((item) => ({ componentName: item.componentName, componentVersion: item.componentVersion, count: item.count })).sort(byComponent);
  assert.deepEqual(items, expected.items, JSON.stringify(filter));
  assert.deepEqual(run.first.body.summary, { vmCount: expected.vmCount, componentCount: expected.items.length }, `summary of ${filter}`);
}

test("cveId != null: the components with known CVEs", async () => {
  await check(['cveId != null'], (cves) => cves.length > 0);
});

test('cveId = null: the components without; delta-lib is among them (its advisory names another groupId)', async () => {
  await check(['cveId = null'], (cves) => cves.length === 0);
  assert.ok(expectedComponents((cves) => cves.length === 0).items.some((c) => c.componentName === 'delta-lib'));
});

test('score >= 9: components whose highest CVE score is at least 9; with a tag; cveId = a given CVE', async () => {
  await check(['score >= 9'], (cves) => cves.length > 0 && maxScore(cves) >= 9);
  await check(['score >= 9', "tags.env = 'prod'"], (cves) => cves.length > 0 && maxScore(cves) >= 9, (vm) => vm.tags.env === 'prod');
  await check(['score < 7'], (cves) => cves.length > 0 && maxScore(cves) < 7);
  await check(["cveId = 'CVE-2099-1002'"], (cves) => cves.some((c) => c.cveId === 'CVE-2099-1002'));
});

test('events and component reports agree after a later report narrows a component by its groupId', async () => {
  // rep-n1 reports narrow-lib without a groupId: matched by artifactId alone.
  await ingestInto(service, model, [startEvent('rep-n1', base, 'host-n'), componentsEvent('rep-n1', base, [{ componentName: 'narrow-lib', componentVersion: '1.0' }])]);
  assert.deepEqual((await getEvents(service, { vmId: 'rep-n1' })).body.data.map((e: any) => e.cveId), ['CVE-2099-9001']);
  // rep-n2 reports the same component with a groupId the advisory does not name: the component's record gains it.
  await ingestInto(service, model, [startEvent('rep-n2', base, 'host-n'), componentsEvent('rep-n2', base, [{ componentName: 'narrow-lib', componentVersion: '1.0', groupId: 'org.elsewhere' }])]);
  assert.deepEqual(model.expected({ hostName: 'host-n' }), [], 'the model: no CVE once the groupId is known');
  const run = await runReport(service, 'component', { filter: ["componentName = 'narrow-lib'", 'cveId = null'] });
  assert.deepEqual(run.items.map((i) => [i.componentName, i.count]), [['narrow-lib', 2]], 'component reports: narrow-lib has no CVE');
  const events = (await getEvents(service, { hostName: 'host-n' })).body.data;
  assert.deepEqual(events.map((e: any) => `${e.vmId} ${e.cveId}`), [], 'CVE events say the same as component reports');
});
