// Report requests are validated before anything is created (decisions §6, §10): 400 with the position, 404 for unknown ids and pages.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { vmStart } from '../helpers/events.ts';
import { createReport, FAMILIES, getPage, ingestAll, PATHS, runReport } from '../helpers/reports.ts';
import type { Family } from '../helpers/reports.ts';
import { request, startService } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

let service: RunningService;

before(async () => {
  service = await startService();
  await ingestAll(service, [[vmStart('vm-1', Date.now() - 60_000, { tags: { env: 'prod' } }), { type: 'code', vmId: 'vm-1', time: Date.now() - 1_000, items: [{ sourceName: 'a.jar', className: 'a/A', methodName: 'm()' }] }]]);
});

after(() => service.stop());

interface Case {
  family: Family;
  body: unknown;
  error: string;
  /** What `details[0]` must hold (a subset). */
  detail?: Record<string, unknown>;
}

const CASES: Case[] = [
  // Filters: the entry and the column of the offending token.
  { family: 'jvmInventory', body: { filter: ["hostName = 'x' AND"] }, error: 'BAD_FILTER', detail: { parameter: 'filter', entry: 0, column: 16, text: 'AND' } },
  { family: 'jvmInventory', body: { filter: ["state = 'RUNNING'", "colour = 'red'"] }, error: 'BAD_FILTER', detail: { parameter: 'filter', entry: 1, column: 1, text: 'colour' } },
  { family: 'jvmInventory', body: { filter: ["hostName LIKE '('"] }, error: 'BAD_FILTER', detail: { parameter: 'filter', entry: 0, column: 15 } },
  { family: 'jvmInventory', body: { filter: ["state = 'ASLEEP'"] }, error: 'BAD_FILTER', detail: { parameter: 'filter', entry: 0, column: 9 } },
  { family: 'jvmInventory', body: { filter: ["startTime > 'soon'"] }, error: 'BAD_FILTER', detail: { parameter: 'filter', entry: 0, column: 14 } },
  { family: 'jvmInventory', body: { filter: ["hostName IN ('a', "] }, error: 'BAD_FILTER', detail: { parameter: 'filter', entry: 0 } },
  { family: 'jvmInventory', body: { filter: 'hostName CONTAINS x' }, error: 'BAD_REQUEST' },
  { family: 'codeInventory', body: { filter: ['sourceName:a', 'nope:1'] }, error: 'BAD_FILTER', detail: { parameter: 'filter', entry: 1, column: 1, text: 'nope' } },
  { family: 'codeInventory', body: { filter: ["firstSeen > '2026-01-01'"] }, error: 'BAD_FILTER', detail: { parameter: 'filter', entry: 0, column: 1 } },
  { family: 'component', body: { filter: ['componentVersion > 1'] }, error: 'BAD_FILTER', detail: { parameter: 'filter', entry: 0, column: 20, text: '1' } },
  { family: 'component', body: { filter: ["componentName RANGE ('b', 'a')"] }, error: 'BAD_FILTER', detail: { parameter: 'filter', entry: 0, column: 22 } },
  // groupBy and sortBy.
  { family: 'jvmInventory', body: { groupBy: ['tags.env', 'bogus'] }, error: 'BAD_GROUP_BY', detail: { parameter: 'groupBy', entry: 1, column: 1, text: 'bogus' } },
  { family: 'jvmInventory', body: { groupBy: ['day', 'day'] }, error: 'BAD_GROUP_BY', detail: { parameter: 'groupBy', entry: 1 } },
  { family: 'codeInventory', body: { groupBy: ['className'] }, error: 'BAD_GROUP_BY', detail: { parameter: 'groupBy', entry: 0, column: 1, expected: ['sourceName'] } },
  { family: 'component', body: { groupBy: ['cveId'] }, error: 'BAD_GROUP_BY', detail: { parameter: 'groupBy', entry: 0, column: 1 } },
  { family: 'jvmInventory', body: { sortBy: ['count=UP'] }, error: 'BAD_SORT_BY', detail: { parameter: 'sortBy', entry: 0, column: 7, text: 'UP' } },
  { family: 'jvmInventory', body: { groupBy: ['hostName'], sortBy: ['vmId=ASC'] }, error: 'BAD_SORT_BY', detail: { parameter: 'sortBy', entry: 0, column: 1, expected: ['hostName', 'count'] } },
  { family: 'jvmInventory', body: { sortBy: ['count=DESC'] }, error: 'BAD_SORT_BY', detail: { parameter: 'sortBy', entry: 0, column: 1 } },
  { family: 'codeInventory', body: { sortBy: ['count=DESC'] }, error: 'BAD_SORT_BY', detail: { parameter: 'sortBy', entry: 0, column: 1, text: 'count' } },
  { family: 'component', body: { sortBy: ['componentName=ASC', 'hostName=DESC'] }, error: 'BAD_SORT_BY', detail: { parameter: 'sortBy', entry: 1, column: 1, text: 'hostName' } },
  // Times.
  { family: 'jvmInventory', body: { from: '2026-13-01T00:00:00.000' }, error: 'BAD_TIME', detail: { parameter: 'from', column: 1 } },
  { family: 'jvmInventory', body: { to: 'yesterday' }, error: 'BAD_TIME', detail: { parameter: 'to', column: 1, text: 'yesterday' } },
  { family: 'jvmInventory', body: { from: '2026-01-02T00:00:00.000Z', to: '2026-01-01T00:00:00.000Z' }, error: 'BAD_TIME', detail: { parameter: 'from' } },
  { family: 'codeInventory', body: { from: true }, error: 'BAD_TIME', detail: { parameter: 'from' } },
  { family: 'component', body: { startTime: '3x' }, error: 'BAD_TIME', detail: { parameter: 'startTime', column: 2, text: 'x' } },
  { family: 'component', body: { endTime: '2026-02-30T00:00:00.000' }, error: 'BAD_TIME', detail: { parameter: 'endTime', column: 1 } },
  // Unknown or wrongly typed body fields: each family has its own fields.
  { family: 'jvmInventory', body: { colour: 'red' }, error: 'UNKNOWN_FIELD', detail: { parameter: 'colour' } },
  { family: 'jvmInventory', body: { startTime: '1d' }, error: 'UNKNOWN_FIELD', detail: { parameter: 'startTime' } },
  { family: 'codeInventory', body: { detail: true }, error: 'UNKNOWN_FIELD', detail: { parameter: 'detail' } },
  { family: 'component', body: { from: '1d' }, error: 'UNKNOWN_FIELD', detail: { parameter: 'from' } },
  { family: 'component', body: { detail: 'yes' }, error: 'BAD_REQUEST' },
  { family: 'jvmInventory', body: { reportName: 42 }, error: 'BAD_REQUEST' },
  { family: 'component', body: ['not', 'an', 'object'], error: 'BAD_REQUEST' },
];

for (const { family, body, error, detail } of CASES) {
  test(`${family} ${JSON.stringify(body)} → 400 ${error}`, async () => {
    const response = await createReport(service, family, body);
    assert.equal(response.status, 400, response.text);
    assert.equal(response.body.error, error);
    assert.equal(typeof response.body.message, 'string');
    if (detail !== undefined) {
      const [first] = response.body.details as Record<string, unknown>[];
      for (const [field, value] of Object.entries(detail)) assert.deepEqual(first[field], value, `details[0].${field} in ${response.text}`);
      if ('column' in detail) assert.match(response.body.message, new RegExp(`column ${detail.column}\\b`));
    }
  });
}

test('malformed JSON → 400', async () => {
  for (const family of FAMILIES) {
    const response = await request(`${service.apiUrl}${PATHS[family].create}`, { method: 'POST', key: service.apiKey, rawBody: '{"filter": [' });
    assert.equal(response.status, 400, `${family}: ${response.text}`);
  }
});

test('nothing is created by a rejected request', async () => {
  for (const family of FAMILIES) {
    const list = await request(`${service.apiUrl}${PATHS[family].base}`, { key: service.apiKey });
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.data, [], family);
  }
});

test('unknown report id → 404 REPORT_NOT_FOUND for GET and DELETE of every family', async () => {
  for (const family of FAMILIES) {
    const get = await getPage(service, family, 'no-such-report');
    assert.equal(get.status, 404, get.text);
    assert.equal(get.body.error, 'REPORT_NOT_FOUND');
    const removed = await request(`${service.apiUrl}${PATHS[family].base}/no-such-report`, { method: 'DELETE', key: service.apiKey });
    assert.equal(removed.status, 404);
  }
});

test("a report is not found under another family's path", async () => {
  const run = await runReport(service, 'jvmInventory', {});
  for (const family of ['codeInventory', 'component'] as const) {
    assert.equal((await getPage(service, family, run.reportId)).status, 404);
    const removed = await request(`${service.apiUrl}${PATHS[family].base}/${run.reportId}`, { method: 'DELETE', key: service.apiKey });
    assert.equal(removed.status, 404);
  }
  assert.equal((await getPage(service, 'jvmInventory', run.reportId)).status, 200, 'still there');
});

test('page past the end → 404 PAGE_NOT_FOUND; bad page numbers and afterTokens → 400', async () => {
  for (const family of FAMILIES) {
    const run = await runReport(service, family, {});
    assert.equal(run.first.body.totalPages, 1);
    const past = await getPage(service, family, run.reportId, { page: 1 });
    assert.equal(past.status, 404, past.text);
    assert.equal(past.body.error, 'PAGE_NOT_FOUND');
    assert.equal((await getPage(service, family, run.reportId, { page: 1_000_000 })).status, 404);
    for (const page of ['-1', 'x', '1.5']) {
      const bad = await request(`${service.apiUrl}${PATHS[family].base}/${run.reportId}?page=${page}`, { key: service.apiKey });
      assert.equal(bad.status, 400, `page=${page}: ${bad.text}`);
    }
    const bad = await getPage(service, family, run.reportId, { afterToken: 'garbage' });
    assert.equal(bad.status, 400, bad.text);
  }
});
