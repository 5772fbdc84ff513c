// summary.totalCount of GET /public/cve/events: exact up to 10000, else 10000 with the lower-bound warning (interface §6.3, §8; decisions §11).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { checkEnvelope, componentsEvent, cveImport, CVSS, getEvents, GROUP, startEvent, walkEvents, writeAdvisories } from '../helpers/cve.ts';
import { compareEvents, CveFleetModel, ingestInto, stripWindows, timeText, withoutAnalysisTime } from './fleet-model.ts';
import type { EventQuery, SyntheticCve } from '../helpers/cve.ts';
import { startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

const CAP = 10_000;
const WARNING = 'the exact count is unknown and not less than 10000';
const VMS = 111;
/** cap-lib versions 1 to 100 each carry one CVE; cap-clean carries none. */
const CAP_LIB: SyntheticCve = { osvId: 'GHSA-jvml-0009-cccc', cveId: 'CVE-2099-7001', groupId: GROUP, artifactId: 'cap-lib', versions: Array.from({ length: 100 }, (_, v) => String(v + 1)), severity: CVSS.score75 };
const base = Math.floor((Date.now() - 2 * 86_400_000) / 1000) * 1000;
/** VM i starts (and was last heard) at base + i seconds. */
const at = (i: number) => base + i * 1000;
const model = new CveFleetModel([CAP_LIB]);
let service: RunningService;

/** VMs 0 to 109 hold cap-lib 1..100 (100 rows each), the last VM holds cap-lib 1 only: 11,001 rows in all. */
function vmEvents(i: number): Record<string, unknown>[] {
  const vmId = `cap-${String(i).padStart(4, '0')}`;
  const versions = i === VMS - 1 ? ['1'] : CAP_LIB.versions;
  const items = [...versions.map((v) => ({ componentName: 'cap-lib', componentVersion: v, groupId: GROUP })), { componentName: 'cap-clean', componentVersion: '1', groupId: GROUP }];
  return [startEvent(vmId, at(i), `host-${i % 10}`, { set: i % 2 === 0 ? 'even' : 'odd' }), componentsEvent(vmId, at(i), items)];
}

before(async () => {
  const dataDir = tempDir();
  await cveImport(dataDir, [writeAdvisories([CAP_LIB])]);
  service = await startService({ dataDir });
  await ingestInto(service, model, Array.from({ length: VMS }, (_, i) => vmEvents(i)).flat());
  assert.equal(model.expected().length, 110 * 100 + 1);
});

after(() => service?.stop());

async function summary(query: EventQuery): Promise<{ totalCount: number; warnings: string[] }> {
  const page = await getEvents(service, { ...query, limit: 5 });
  checkEnvelope(page, JSON.stringify(query));
  return page.body.summary;
}

const exact = (totalCount: number) => ({ totalCount, warnings: [] });
const capped = { totalCount: CAP, warnings: [WARNING] };

test('more than 10000 rows: totalCount 10000 and the warning', async () => {
  assert.deepEqual(await summary({}), capped);
  assert.deepEqual(await summary({ 'tags.set': 'even' }), exact(55 * 100 + 1));
  assert.deepEqual(await summary({ hostName: 'host-0' }), exact(11 * 100 + 1));
});

test('the edge: 10000 rows are counted exactly, 10001 are not', async () => {
  // endTime ≤ VM 99: VMs 0..99, 100 rows each.
  assert.equal(model.expected({ endTime: at(99) }).length, CAP);
  assert.deepEqual(await summary({ endTime: timeText(at(99), 'plain') }), exact(CAP));
  // startTime ≥ VM 10: 100 VMs of 100 rows and the last VM's one row.
  assert.equal(model.expected({ startTime: at(10) }).length, CAP + 1);
  assert.deepEqual(await summary({ startTime: timeText(at(10), 'Z') }), capped);
  assert.deepEqual(await summary({ startTime: String(at(11)) }), exact(CAP - 99));
  assert.deepEqual(await summary({ endTime: String(at(100)) }), capped);
});

test('the same edge when the count looks at every CVE (an analysis-time filter) and with showNotImpacted', async () => {
  assert.deepEqual(await summary({ cveAnalysisStartTime: '0' }), capped);
  assert.deepEqual(await summary({ cveAnalysisStartTime: '0', endTime: String(at(99)) }), exact(CAP));
  assert.deepEqual(await summary({ cveAnalysisEndTime: String(Date.now() + 60_000), startTime: String(at(10)) }), capped);
  // With cap-clean, a VM gives 101 rows: 99 VMs are 9999 rows, 100 are 10100.
  assert.equal(model.expected({ showNotImpacted: true, endTime: at(98) }).length, CAP - 1);
  assert.deepEqual(await summary({ showNotImpacted: true, endTime: String(at(98)) }), exact(CAP - 1));
  assert.deepEqual(await summary({ showNotImpacted: true, endTime: String(at(99)) }), capped);
});

test('the cap is on the count only: pages go on to the last of the 11001 rows', async () => {
  const walk = await walkEvents(service, { limit: 1000 });
  assert.equal(walk.pages.length, 12);
  for (const page of walk.pages) assert.deepEqual(page.body.summary, capped);
  const expected = model.expected();
  assert.equal(walk.items.length, expected.length);
  for (let i = 1; i < walk.items.length; i++) assert.ok(compareEvents(walk.items[i - 1], walk.items[i]) < 0, `order at ${i}`);
  assert.deepEqual(withoutAnalysisTime(walk.items, expected, 'capped walk'), stripWindows(expected));
});
