// GET /public/cve/events paging (interface §6, §8; decisions §11): keyset walks, also while another client ingests, and limit, afterToken and parameter errors.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { checkEnvelope, componentsEvent, cveImport, CVSS, getEvents, GROUP, walkEvents, writeAdvisories } from '../helpers/cve.ts';
import { ADVISORIES, compareEvents, CveFleetModel, eventKey, ingestInto, stripWindows, syntheticVm, withoutAnalysisTime } from './fleet-model.ts';
import type { EventQuery, SyntheticCve } from '../helpers/cve.ts';
import type { ExpectedEvent, ModelFilter } from './fleet-model.ts';
import { startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

const base = Math.floor((Date.now() - 5 * 86_400_000) / 60_000) * 60_000;
/** omega-lib: every version is vulnerable, so a new version is a component the fleet has never seen, with a CVE. */
const OMEGA: SyntheticCve = { osvId: 'GHSA-jvml-0008-oooo', cveId: 'CVE-2099-6001', groupId: GROUP, artifactId: 'omega-lib', versions: Array.from({ length: 400 }, (_, v) => `${v}.0`), severity: CVSS.score81 };
const model = new CveFleetModel([...ADVISORIES, OMEGA]);
/** Even numbers at start; odd numbers arrive during the walks, so new VMs fall on both sides of a cursor. */
const vmId = (n: number) => `vm-${String(n).padStart(4, '0')}`;
const INITIAL_VMS = 150;
let service: RunningService;

before(async () => {
  const dataDir = tempDir();
  await cveImport(dataDir, [writeAdvisories([...ADVISORIES, OMEGA])]);
  service = await startService({ dataDir });
  await ingestInto(service, model, Array.from({ length: INITIAL_VMS }, (_, i) => syntheticVm(i, vmId(2 * i), base)).flat());
});

after(() => service?.stop());

/** Walks with a small limit and compares with the model: same items, same order. */
async function checkWalk(query: EventQuery, filter: ModelFilter): Promise<void> {
  const expected = model.expected(filter);
  const walk = await walkEvents(service, query);
  assert.deepEqual(withoutAnalysisTime(walk.items, expected, JSON.stringify(query)), stripWindows(expected), JSON.stringify(query));
  assert.equal(walk.pages.length, Math.max(1, Math.ceil(expected.length / Number(query.limit))), 'full pages until the last');
  for (const page of walk.pages) assert.equal(page.body.summary.totalCount, expected.length);
  assert.equal(walk.pages[walk.pages.length - 1].body.afterToken, undefined, 'the last page has no afterToken');
}

test('a walk with a small limit returns every item once, in order, with no gaps', async () => {
  await checkWalk({ limit: 7 }, {});
  await checkWalk({ limit: 1, vmId: vmId(10) }, { vmId: vmId(10) });
  await checkWalk({ limit: 3, 'tags.env': 'prod', 'tags.team': 'edge' }, { tags: { env: 'prod', team: 'edge' } });
  await checkWalk({ limit: 4, hostName: 'host-c', startTime: base + 60 * 60_000 }, { hostName: 'host-c', startTime: base + 60 * 60_000 });
  // Components without CVEs have a null cveId: the cursor passes over them too.
  await checkWalk({ limit: 5, showNotImpacted: true }, { showNotImpacted: true });
  // A page boundary that falls exactly at the end: hasNext false, no afterToken.
  const all = model.expected().length;
  await checkWalk({ limit: all }, {});
});

/** Batch k of the other client: a new VM somewhere in the vmId order, and components new to the fleet (omega-lib k.0) plus known ones for an existing VM. */
function otherClientBatch(k: number): Record<string, unknown>[] {
  const newcomer = 2 * ((k * 37) % INITIAL_VMS) + 1;
  const existing = (k * 53) % INITIAL_VMS;
  const existingStart = base + existing * 60_000;
  return [
    ...syntheticVm(newcomer, vmId(newcomer), base),
    // At the VM's own start time: its existing items keep their lastHeardTime.
    componentsEvent(vmId(2 * existing), existingStart, [
      { componentName: 'omega-lib', componentVersion: `${k}.0`, groupId: GROUP },
      { componentName: 'Zeta-lib', componentVersion: '10.0', groupId: GROUP },
    ]),
  ];
}

function checkConcurrentWalk(items: any[], before: ExpectedEvent[]): void {
  for (let i = 1; i < items.length; i++) assert.ok(compareEvents(items[i - 1], items[i]) < 0, `strictly increasing at ${i}: ${eventKey(items[i - 1])} then ${eventKey(items[i])}`);
  const walked = new Set(items.map(eventKey));
  const missing = before.filter((e) => !walked.has(eventKey(e)));
  assert.deepEqual(missing.map(eventKey), [], 'every item that existed when the walk started is returned');
  // Whatever the walk returned is a real item, as it is now.
  const now = new Map(model.expected().map((e) => [eventKey(e), e]));
  const unknown = items.filter((item) => !now.has(eventKey(item)));
  assert.deepEqual(unknown.map(eventKey), [], 'no item the fleet does not have');
  const expected = items.map((item) => now.get(eventKey(item))!);
  assert.deepEqual(withoutAnalysisTime(items, expected, 'concurrent walk'), stripWindows(expected));
}

test('a walk stays exact while another client ingests new VMs and components between its pages', async () => {
  const before = model.expected();
  let k = 0;
  const addedBehind: string[] = [];
  const addedAhead: string[] = [];
  const walk = await walkEvents(service, { limit: 11 }, async (_page, last) => {
    const batch = otherClientBatch(k++);
    const touched = [...new Set(batch.map((event) => event.vmId as string))];
    const rowsOf = () => touched.flatMap((id) => (model.vms.has(id) ? model.expected({ vmId: id }) : []));
    const known = new Set(rowsOf().map(eventKey));
    await ingestInto(service, model, batch);
    for (const row of rowsOf()) {
      if (known.has(eventKey(row))) continue;
      (compareEvents(row, last) < 0 ? addedBehind : addedAhead).push(eventKey(row));
    }
  });
  assert.ok(k > 50 && addedBehind.length > 0 && addedAhead.length > 0, `${k} batches; items added behind (${addedBehind.length}) and ahead (${addedAhead.length}) of the cursor`);
  checkConcurrentWalk(walk.items, before);
  const walked = new Set(walk.items.map(eventKey));
  assert.deepEqual(addedBehind.filter((key) => walked.has(key)), [], 'items added behind the cursor never appear');
  assert.deepEqual(addedAhead.filter((key) => !walked.has(key)), [], 'items added ahead of the cursor appear (keyset cursor)');
});

test('a walk stays exact while another client ingests at the same time', async () => {
  const before = model.expected();
  let stop = false;
  let batches = 0;
  const other = (async () => {
    for (let k = 1000; !stop && k < 1400; k++) {
      await ingestInto(service, model, otherClientBatch(k));
      batches++;
    }
  })();
  const walk = await walkEvents(service, { limit: 5 });
  stop = true;
  await other;
  assert.ok(batches > 0, 'the other client ingested during the walk');
  checkConcurrentWalk(walk.items, before);
});

test('after the concurrent ingestion, a walk equals the model: no VM is listed twice, none is lost', async () => {
  await checkWalk({ limit: 1000 }, {});
  await checkWalk({ limit: 1000, 'tags.env': 'prod' }, { tags: { env: 'prod' } });
});

test('pages requested many at a time each arrive whole: the same bytes as one at a time', async () => {
  // Bodies are written into one buffer that the server reuses: no response may carry another's bytes.
  const queries: EventQuery[] = Array.from({ length: 60 }, (_, k) => ({ limit: 1 + (k % 9) * 11, ...(k % 3 === 0 ? { 'tags.env': 'prod' } : {}), ...(k % 4 === 1 ? { vmId: vmId(2 * k) } : {}) }));
  const alone: string[] = [];
  for (const query of queries) alone.push((await getEvents(service, query)).text);
  const together = await Promise.all(queries.map((query) => getEvents(service, query)));
  assert.deepEqual(together.map((page) => page.text), alone);
});

test('limit: default 100, at most 1000, larger is lowered with a warning, and the returned limit carries on', async () => {
  const total = model.expected().length;
  assert.ok(total > 1000, `${total} rows`);
  let page = await getEvents(service);
  checkEnvelope(page, 'default');
  assert.equal(page.body.limit, 100);
  assert.equal(page.body.size, 100);
  assert.equal(page.body.hasNext, true);
  page = await getEvents(service, { limit: 1000 });
  checkEnvelope(page, 'limit=1000');
  assert.deepEqual([page.body.limit, page.body.size, page.body.summary.warnings], [1000, 1000, []]);
  for (const asked of ['1001', '5000', '99999999999']) {
    page = await getEvents(service, { limit: asked });
    checkEnvelope(page, `limit=${asked}`);
    assert.equal(page.body.limit, 1000, `limit=${asked} is lowered to 1000`);
    assert.equal(page.body.size, 1000);
    assert.equal(page.body.summary.warnings.length, 1, `limit=${asked} warns`);
    assert.match(page.body.summary.warnings[0], /1000/);
  }
  const walk = await walkEvents(service, { limit: 2000 });
  assert.equal(walk.items.length, total);
  assert.ok(walk.pages.slice(1).every((p) => p.body.limit === 1000 && p.body.summary.warnings.length === 0), 'later pages ask with the returned limit');
});

test('limit that is not an integer ≥ 1 → 400 with the error body of decisions §10', async () => {
  for (const limit of ['0', '-1', 'x', '1.5', '', '1e2', ' 5']) {
    const response = await getEvents(service, { limit });
    assert.equal(response.status, 400, `limit=${JSON.stringify(limit)}: ${response.text}`);
    assert.equal(typeof response.body.error, 'string');
    assert.match(response.body.message, /limit/);
  }
});

test('an afterToken that is not one this endpoint gave → 400', async () => {
  const json = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  for (const afterToken of ['garbage!', 'bm90IGpzb24', json({ vmId: 'x' }), json([1, 2, 3, 4]), json(['a', 'b', 'c']), json(['a', 'b', 'c', 'd', 'e'])]) {
    const response = await getEvents(service, { afterToken, limit: 5 });
    assert.equal(response.status, 400, `afterToken=${afterToken}: ${response.text}`);
    assert.equal(typeof response.body.error, 'string');
    assert.match(response.body.message, /afterToken/);
  }
});

test('unknown parameters, a bad boolean or time → 400; no key → 401', async () => {
  for (const query of [{ foo: '1' }, { hostname: 'host-a' }, { tag: 'x' }, { 'tag.env': 'prod' }, { 'tags.': 'x' }, { page: '2' }, { cve: 'CVE-2099-1001' }] as EventQuery[]) {
    const response = await getEvents(service, query);
    assert.equal(response.status, 400, `${JSON.stringify(query)}: ${response.text}`);
    assert.match(response.body.message, new RegExp(Object.keys(query)[0].replace('.', '\\.')));
  }
  for (const query of [{ showNotImpacted: 'yes' }, { showNotImpacted: '1' }, { startTime: 'yesterday' }, { endTime: '2026-13-01T00:00:00' }, { cveAnalysisStartTime: '12:00' }, { cveAnalysisEndTime: '2026-01-01T25:00:00' }] as EventQuery[]) {
    const response = await getEvents(service, query);
    assert.equal(response.status, 400, `${JSON.stringify(query)}: ${response.text}`);
  }
  assert.equal((await getEvents(service, {}, null)).status, 401);
  assert.equal((await getEvents(service, {}, 'not-a-key')).status, 401);
});
