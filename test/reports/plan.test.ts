// A report request is parsed once, at the edge, into a plan of plain data (issue #13): workers bind it to
// their storage without parsing, and a plan stored by an older version is planned when its job re-runs.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { CATALOGS } from '../../src/engine/reports/family-fields.ts';
import { parseReportRequest, plannedRequest } from '../../src/engine/reports/report-request.ts';
import type { ReportRequest } from '../../src/engine/reports/report-types.ts';
import { bindFilter, compileFilter, planFilter } from '../../src/parser/index.ts';
import { ROOT } from '../helpers/service.ts';

const NOW = Date.UTC(2026, 10, 20);

test('kernels and the worker import no parser entry point that reads text, nor the request validator', () => {
  const dir = join(ROOT, 'src', 'engine', 'reports');
  const files = [join(dir, 'worker.ts'), ...readdirSync(join(dir, 'kernels')).map((name) => join(dir, 'kernels', name))];
  for (const file of files) {
    const source = readFileSync(file, 'utf8');
    assert.doesNotMatch(source, /\b(compileFilter|planFilter|parseGroupBy|parseSortBy|parseFilterEntry|resolveTime)\b|report-request\.ts/, file);
  }
});

test('the plan is plain data: a JSON copy binds to the same conditions as parsing the text', () => {
  const body = {
    filter: ["componentName LIKE '^log4j'", "tags.env IN ('prod', 'staging')", "componentVersion < '2.17.1'", 'score >= 9', 'cveId != null'],
    groupBy: ['tags.env'],
    sortBy: ['count=DESC'],
  };
  const { request } = parseReportRequest('component', body, NOW, 300_000);
  const copy = JSON.parse(JSON.stringify(request)) as ReportRequest;
  assert.deepEqual(copy, request);
  assert.deepEqual(request.sortBy, [{ field: 'count', direction: 'DESC' }]);
  const bound = bindFilter(copy.conditions, CATALOGS.component).conditions;
  const parsed = compileFilter(body.filter, CATALOGS.component, NOW).conditions;
  const samples = ['log4j-core', 'slf4j', 'prod', 'dev', '2.14.1', '2.17.1', 9.8, 5, NOW, NOW - 30 * 86_400_000, null];
  assert.equal(bound.length, parsed.length);
  bound.forEach((condition, i) => {
    assert.equal(condition.field.name, parsed[i].field.name);
    for (const value of samples) assert.equal(condition.test(value), parsed[i].test(value), `${body.filter[i]} on ${value}`);
  });
});

test('a request stored before the plan (filter and sortBy as text) is planned when its job re-runs', () => {
  const { request } = parseReportRequest('jvmInventory', { filter: ["hostName LIKE 'web-'"], groupBy: ['tags.env'], sortBy: ['count=DESC'] }, NOW, 300_000);
  const { conditions: _, ...rest } = request;
  const legacy = { ...rest, filter: ["hostName LIKE 'web-'"], sortBy: ['count=DESC'] } as unknown as ReportRequest;
  assert.deepEqual(plannedRequest(legacy), request);
  assert.equal(plannedRequest(request), request, 'a planned request is left as it is');
  assert.deepEqual(plannedRequest(legacy).conditions, planFilter(["hostName LIKE 'web-'"], CATALOGS.jvmInventory, NOW));
});
