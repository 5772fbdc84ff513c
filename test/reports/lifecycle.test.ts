// The report job lifecycle (decisions §6): PROCESSING pages, delete while running, 429 on a full queue, re-run after a restart.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fleetBatches } from '../../src/seed/fleet.ts';
import { createReport, FAMILIES, getPage, getPageMsgpack, ingestAll, iso, PATHS, readPages, waitFinal } from '../helpers/reports.ts';
import { request, startService } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';
import { jvmItems, jvmPopulation } from './expected.ts';
import { DAY, FleetModel } from './fleet-model.ts';

const OFFLINE_AFTER_MS = 1_800_000;
const fleetNow = Date.now();
const FROM = fleetNow - 25 * DAY;
const TO = fleetNow - DAY;
const body = { from: iso(FROM), to: iso(TO) };
const events = [...fleetBatches({ vms: 60, componentsPerVm: 4, methods: 100, appEnvs: 2, tags: 3, seed: 9, now: fleetNow, days: 30 }, 250)];
const model = new FleetModel();
for (const batch of events) model.apply(batch);

// One worker, and every partition takes 300 ms: jobs stay PROCESSING long enough to act on them.
let slow: RunningService;

before(async () => {
  slow = await startService({ args: ['--workers', '1', '--test-faults', 'slow-partition', '--offline-after-ms', String(OFFLINE_AFTER_MS)] });
  await ingestAll(slow, events);
});

after(() => slow.stop());

const deleteReport = (service: RunningService, base: string, reportId: string) => request(`${service.apiUrl}${base}/${reportId}`, { method: 'DELETE', key: service.apiKey });

test('while PROCESSING, a GET answers 200 with state PROCESSING, no data and no pages, in JSON and msgpack', async () => {
  for (const family of FAMILIES) {
    // A job ahead in the one-worker queue keeps this one PROCESSING for at least 300 ms more.
    const ahead = await createReport(slow, family, {});
    const created = await createReport(slow, family, {});
    assert.equal(created.status, 202);
    const page = await getPage(slow, family, created.body.reportId);
    assert.equal(page.status, 200);
    assert.equal(page.body.state, 'PROCESSING');
    assert.deepEqual(page.body.data, []);
    assert.equal(page.body.totalPages, 0);
    const packed = await getPageMsgpack(slow, family, created.body.reportId);
    assert.equal(packed.status, 200);
    assert.equal(packed.body.state, 'PROCESSING');
    assert.deepEqual(packed.body.data, []);
    assert.equal((await waitFinal(slow, family, created.body.reportId)).body.state, 'SUCCEEDED');
    assert.equal((await waitFinal(slow, family, ahead.body.reportId)).body.state, 'SUCCEEDED');
  }
});

test('DELETE of a finished report → 204 for every family, then 404, and its page files are gone', async () => {
  for (const family of FAMILIES) {
    const created = await createReport(slow, family, {});
    await waitFinal(slow, family, created.body.reportId);
    const pages = join(slow.dataDir, 'pages', created.body.reportId);
    assert.ok(existsSync(join(pages, '0.json')), 'page 0 is a file in the data directory');
    const removed = await deleteReport(slow, PATHS[family].base, created.body.reportId);
    assert.ok(!existsSync(pages), 'the report\'s page folder is removed');
    assert.equal(removed.status, 204);
    assert.equal(removed.text, '');
    assert.equal((await getPage(slow, family, created.body.reportId)).status, 404);
    assert.equal((await deleteReport(slow, PATHS[family].base, created.body.reportId)).status, 404);
  }
});

test('DELETE while running cancels the job: 204, then 404, gone from the list, and the queue moves on', async () => {
  for (const family of FAMILIES) {
    // The first runs at once (its partition sleeps 300 ms), the second waits behind it.
    const running = await createReport(slow, family, {});
    const waiting = await createReport(slow, family, {});
    assert.equal((await getPage(slow, family, waiting.body.reportId)).body.state, 'PROCESSING');
    for (const id of [running.body.reportId, waiting.body.reportId]) {
      assert.equal((await deleteReport(slow, PATHS[family].base, id)).status, 204, `${family} ${id}`);
      assert.equal((await getPage(slow, family, id)).status, 404);
    }
    const list = await request(`${slow.apiUrl}${PATHS[family].base}`, { key: slow.apiKey });
    assert.ok(!list.body.data.some((item: { reportId: string }) => item.reportId === running.body.reportId || item.reportId === waiting.body.reportId));
    const next = await createReport(slow, family, {});
    assert.equal((await waitFinal(slow, family, next.body.reportId)).body.state, 'SUCCEEDED');
  }
});

test('more than 100 waiting jobs → 429 with Retry-After; a deleted job frees its place', async () => {
  const accepted: string[] = [];
  let refused: Awaited<ReturnType<typeof createReport>> | undefined;
  // One POST after another fills the queue faster than one worker empties it (300 ms a job).
  while (refused === undefined && accepted.length < 400) {
    const response = await createReport(slow, 'jvmInventory', body);
    if (response.status === 202) accepted.push(response.body.reportId);
    else refused = response;
  }
  assert.ok(refused !== undefined, 'the queue filled up');
  assert.equal(refused.status, 429, refused.text);
  assert.equal(refused.body.error, 'QUEUE_FULL');
  const retryAfter = refused.headers.get('retry-after');
  assert.ok(retryAfter !== null && /^\d+$/.test(retryAfter), `Retry-After: ${retryAfter}`);
  // A refusal means 100 were waiting, and the first accepted went straight to the worker.
  assert.ok(accepted.length >= 101, `${accepted.length} accepted`);

  assert.equal((await deleteReport(slow, PATHS.jvmInventory.base, accepted.at(-1)!)).status, 204);
  const again = await createReport(slow, 'jvmInventory', body);
  assert.equal(again.status, 202, again.text);
  // Let the queue go: delete what still waits.
  for (const id of [...accepted.slice(0, -1), again.body.reportId]) await deleteReport(slow, PATHS.jvmInventory.base, id);
});

test('concurrent POSTs never queue more than 100 jobs', async () => {
  const responses = await Promise.all(Array.from({ length: 200 }, () => createReport(slow, 'jvmInventory', body)));
  const accepted = responses.filter((response) => response.status === 202).map((response) => response.body.reportId as string);
  assert.ok(responses.some((response) => response.status === 429));
  try {
    // At any moment at most one job runs (one worker) and 100 wait.
    const processing = await request(`${slow.apiUrl}${PATHS.jvmInventory.base}?state=PROCESSING&limit=1000`, { key: slow.apiKey });
    assert.ok(processing.body.data.length <= 101, `${processing.body.data.length} reports PROCESSING`);
  } finally {
    for (const id of accepted) await deleteReport(slow, PATHS.jvmInventory.base, id);
  }
});

test('jobs left PROCESSING by a shutdown (running or waiting) re-run at the next start, under the same id, with the right data', async () => {
  const first = await startService({ args: ['--workers', '1', '--test-faults', 'slow-partition', '--offline-after-ms', String(OFFLINE_AFTER_MS)] });
  let second: RunningService | undefined;
  try {
    await ingestAll(first, events);
    // One worker and 300 ms a job: the first may be running at shutdown, the others still wait.
    const created = await createReport(first, 'jvmInventory', body);
    const queued = [await createReport(first, 'component', {}), await createReport(first, 'codeInventory', {}), await createReport(first, 'jvmInventory', { groupBy: ['tags.env'] })];
    for (const response of [created, ...queued]) assert.equal(response.status, 202);
    assert.equal(await first.stop({ keepData: true }), 0);

    const restartedAt = Date.now();
    second = await startService({ dataDir: first.dataDir, args: ['--offline-after-ms', String(OFFLINE_AFTER_MS)] });
    const done = await waitFinal(second, 'jvmInventory', created.body.reportId);
    assert.equal(done.body.state, 'SUCCEEDED');
    assert.equal(done.body.requestTime, created.body.requestTime);
    assert.deepEqual(done.body.params, created.body.params);
    // States and running lives are taken at the request time, as on the first run.
    const window = { from: FROM, to: TO, now: Date.parse(created.body.requestTime), offlineAfterMs: OFFLINE_AFTER_MS };
    const items = (await readPages(second, 'jvmInventory', created.body.reportId)).flatMap((page) => page.body.data);
    assert.deepEqual(items, jvmItems(jvmPopulation(model, window), window));
    for (const [family, response] of [['component', queued[0]], ['codeInventory', queued[1]], ['jvmInventory', queued[2]]] as const) {
      const finished = await waitFinal(second, family, response.body.reportId);
      assert.equal(finished.body.state, 'SUCCEEDED', `${family}: a job waiting at shutdown runs too`);
    }
    // The last job had 900 ms of work ahead of it at shutdown: it certainly ran after the restart.
    assert.ok(Date.parse((await getPage(second, 'jvmInventory', queued[2].body.reportId)).body.startTime) >= restartedAt);
  } finally {
    await (second ?? first).stop();
  }
});
