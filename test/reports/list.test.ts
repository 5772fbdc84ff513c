// Report lists (decisions §6): userId, reportName, state, from/to on requestTime, limit and the afterToken cursor, newest first.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { vmStart } from '../helpers/events.ts';
import { createReport, FAMILIES, ingestAll, PATHS, waitFinal } from '../helpers/reports.ts';
import type { Family } from '../helpers/reports.ts';
import { request, runCli, startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

let service: RunningService;
let bobKey: string;

interface Created {
  reportId: string;
  userId: string;
  reportName: string | null;
  requestTime: string | number;
}

/** Reports per family, in creation order: admin's and bob's, named and not. */
const created: Record<Family, Created[]> = { jvmInventory: [], codeInventory: [], component: [] };

const PLAN: { user: 'admin' | 'bob'; reportName?: string }[] = [
  { user: 'admin', reportName: 'daily fleet' },
  { user: 'bob', reportName: 'Bob daily' },
  { user: 'admin' },
  { user: 'admin', reportName: 'weekly fleet' },
  { user: 'bob', reportName: 'bob adhoc' },
];

before(async () => {
  const dataDir = tempDir();
  const cli = await runCli(['keys', 'create', '--user', 'bob', '--scopes', 'read,write', '--data-dir', dataDir]);
  assert.equal(cli.code, 0, cli.stderr);
  bobKey = /key: +(\S+)/.exec(cli.stdout)![1];
  service = await startService({ dataDir });
  await ingestAll(service, [[vmStart('vm-1', Date.now() - 60_000, { tags: { env: 'prod' } })]]);
  for (const family of FAMILIES) {
    for (const { user, reportName } of PLAN) {
      const response = await createReport(service, family, reportName === undefined ? {} : { reportName }, user === 'admin' ? service.apiKey : bobKey);
      assert.equal(response.status, 202, response.text);
      await waitFinal(service, family, response.body.reportId);
      created[family].push({ reportId: response.body.reportId, userId: user, reportName: reportName ?? null, requestTime: response.body.requestTime });
    }
  }
});

after(() => service.stop());

const list = (family: Family, query = '', key = service.apiKey) => request(`${service.apiUrl}${PATHS[family].base}${query}`, { key });
const ids = (items: { reportId: string }[]) => items.map((item) => item.reportId);
const millis = (time: string | number) => (typeof time === 'number' ? time : Date.parse(time));

/** Newest first: request times never increase down the list. */
function assertNewestFirst(items: { requestTime: string | number }[]): void {
  for (let k = 1; k < items.length; k++) assert.ok(millis(items[k - 1].requestTime) >= millis(items[k].requestTime), `item ${k} is not newer than item ${k - 1}`);
}

for (const family of FAMILIES) {
  test(`${family}: the list holds this family's reports only, newest first, as metadata`, async () => {
    const response = await list(family);
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(ids(response.body.data).sort(), ids(created[family]).sort());
    assert.equal(response.body.afterToken, undefined, 'everything fits the default limit');
    assertNewestFirst(response.body.data);
    for (const item of response.body.data) {
      const mine = created[family].find((c) => c.reportId === item.reportId)!;
      assert.equal(item.state, 'SUCCEEDED');
      assert.equal(item.userId, mine.userId);
      assert.equal(item.requestTime, mine.requestTime);
      assert.equal(item.data, undefined, 'no report data in a list');
      if (mine.reportName !== null) assert.equal(item.reportName, mine.reportName);
      if (family === 'component') {
        assert.ok(item.parameters !== undefined && item.params === undefined);
        assert.ok(Number.isSafeInteger(item.requestTime) && Number.isSafeInteger(item.finishTime));
        assert.equal(typeof item.summary, 'object');
      } else {
        assert.ok(item.params !== undefined && item.parameters === undefined);
        assert.ok(Array.isArray(item.stateMessages));
        for (const field of ['requestTime', 'startTime', 'finishTime']) assert.equal(typeof item[field], 'string', field);
      }
    }
  });

  test(`${family}: userId, reportName (substring) and state filters`, async () => {
    const byUser = await list(family, '?userId=bob');
    assert.deepEqual(ids(byUser.body.data).sort(), ids(created[family].filter((c) => c.userId === 'bob')).sort());
    const byName = await list(family, '?reportName=daily');
    assert.deepEqual(ids(byName.body.data).sort(), ids(created[family].filter((c) => c.reportName?.includes('daily'))).sort());
    const both = await list(family, `?userId=admin&reportName=${encodeURIComponent('fleet')}`);
    assert.deepEqual(ids(both.body.data).sort(), ids(created[family].filter((c) => c.userId === 'admin' && c.reportName?.includes('fleet'))).sort());
    assert.equal((await list(family, '?state=SUCCEEDED')).body.data.length, created[family].length);
    assert.deepEqual((await list(family, '?state=FAILED')).body.data, []);
    assert.equal((await list(family, '?state=DONE')).status, 400);
  });

  test(`${family}: from/to select on requestTime, inclusive`, async () => {
    const times = created[family].map((c) => millis(c.requestTime));
    const pivot = times[2];
    const from = await list(family, `?from=${encodeURIComponent(new Date(pivot).toISOString())}`);
    assert.deepEqual(ids(from.body.data).sort(), ids(created[family].filter((_, k) => times[k] >= pivot)).sort());
    const to = await list(family, `?to=${pivot}`);
    assert.deepEqual(ids(to.body.data).sort(), ids(created[family].filter((_, k) => times[k] <= pivot)).sort());
    const window = await list(family, `?from=${times[1]}&to=${times[3]}`);
    assert.deepEqual(ids(window.body.data).sort(), ids(created[family].filter((_, k) => times[k] >= times[1] && times[k] <= times[3])).sort());
    assert.equal((await list(family, '?from=soon')).status, 400);
  });

  test(`${family}: limit and the afterToken cursor walk the whole list once, in order`, async () => {
    const whole = (await list(family)).body.data;
    const walked: { reportId: string }[] = [];
    let query = '?limit=2';
    for (let pages = 0; pages < 10; pages++) {
      const response = await list(family, query);
      assert.equal(response.status, 200, response.text);
      assert.ok(response.body.data.length <= 2);
      walked.push(...response.body.data);
      if (response.body.afterToken === undefined) break;
      query = `?limit=2&afterToken=${encodeURIComponent(response.body.afterToken)}`;
    }
    assert.deepEqual(ids(walked), ids(whole));
    const filtered = await list(family, '?userId=admin&limit=1');
    assert.equal(filtered.body.data.length, 1);
    const rest = await list(family, `?userId=admin&limit=10&afterToken=${encodeURIComponent(filtered.body.afterToken)}`);
    assert.deepEqual([...ids(filtered.body.data), ...ids(rest.body.data)], ids(whole.filter((item: { userId: string }) => item.userId === 'admin')));
    for (const bad of ['?limit=0', '?limit=-1', '?limit=many', '?afterToken=garbage']) assert.equal((await list(family, bad)).status, 400, bad);
    assert.equal((await list(family, '?limit=5000')).status, 200, 'a large limit is lowered');
  });
}

test('a deleted report leaves the list', async () => {
  const [victim] = created.codeInventory;
  assert.equal((await request(`${service.apiUrl}${PATHS.codeInventory.base}/${victim.reportId}`, { method: 'DELETE', key: service.apiKey })).status, 204);
  assert.ok(!ids((await list('codeInventory')).body.data).includes(victim.reportId));
});
