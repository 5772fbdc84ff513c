// --filter as suites see it: substrings of the suite's or the row's name, applied to tinybench tasks too.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newBench, runTinybench, wanted, withFilterSuites } from '../../bench/harness.ts';

for (const [filter, row, expected] of [
  [undefined, 'anything', true],
  [[], 'anything', true],
  [['http'], 'GET /opthub-health', true],
  [['HEALTH'], 'GET /opthub-health', true],
  [['instance'], 'GET /opthub-health', false],
  [['instance', 'health'], 'GET /opthub-health', true],
  [['node:http'], 'GET /opthub-health node:http baseline', true],
] as const) {
  test(`wanted with filter ${JSON.stringify(filter)} and row '${row}' is ${expected}`, () => {
    assert.equal(wanted({ quick: true, filter: filter === undefined ? undefined : [...filter] }, 'http', row), expected);
  });
}

test('a --filter term that names a suite exactly selects that suite alone; other terms still match within names', () => {
  const options = withFilterSuites({ quick: false, filter: ['Reports', 'already known'] }, ['chaos', 'reports', 'cluster']);
  assert.deepEqual(options, { quick: false, filter: ['already known'], filterSuites: ['reports'] });
  assert.equal(wanted(options, 'reports', 'component report, 1 filter, groupBy tags.env: POST to SUCCEEDED'), true);
  assert.equal(wanted(options, 'chaos', 'SIGKILL or SIGSTOP of cluster nodes during ingestion and reports'), false);
  assert.equal(wanted(options, 'cluster', 'cluster: ingestion, NDJSON batches of 10,000 code items already known, acknowledged'), true);
  const suiteOnly = withFilterSuites({ quick: false, filter: ['reports'] }, ['reports']);
  assert.deepEqual(suiteOnly, { quick: false, filterSuites: ['reports'] });
  assert.equal(wanted(suiteOnly, 'chaos', 'reports'), false);
  // A term that names no suite whole matches suite names within, as before.
  assert.equal(wanted(withFilterSuites({ quick: false, filter: ['startup'] }, ['http-startup']), 'http-startup', 'start-up to UP'), true);
});

test('runTinybench runs only the tasks --filter selects, at the rate their mean latency gives', async () => {
  const bench = newBench({ quick: true, filter: ['kept'] });
  let dropped = 0;
  // A task of a few microseconds keeps the sample count (and the statistics over it) small.
  bench.add('kept task', () => new Promise<void>((resolve) => setImmediate(resolve)));
  bench.add('other task', () => {
    dropped++;
  });
  // tinybench calls each function once when it is added, to see whether it is async.
  dropped = 0;
  const rows = await runTinybench('suite', '1 row', bench, 10, 'items/s');
  assert.deepEqual(rows.map((row) => [row.suite, row.name, row.size, row.unit]), [['suite', 'kept task', '1 row', 'items/s']]);
  assert.equal(dropped, 0);
  // The rate is what the mean latency sustains (times items per operation), not a mean of per-sample rates.
  const [row] = rows;
  assert.ok(Math.abs(row.rate - (1000 / row.meanMs) * 10) <= row.rate * 1e-9, `${row.rate} vs mean ${row.meanMs} ms`);
});
