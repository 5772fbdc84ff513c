// --compare: rows matched by suite and name, each figure with new/old, rows and sizes the saved run lacks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareRows, formatComparison } from '../../bench/compare.ts';
import type { BenchRow } from '../../bench/harness.ts';

const row = (overrides: Partial<BenchRow> = {}): BenchRow => ({
  suite: 'http', name: 'GET /opthub-health', size: '5k VMs', rate: 200, unit: 'req/s',
  meanMs: 1, p50Ms: 1, p99Ms: 4, rssMb: 100, ...overrides,
});

test('ratios are new/old for every figure, matched by suite and name', () => {
  const [comparison] = compareRows([row()], [row({ suite: 'other', rate: 1 }), row({ rate: 100, meanMs: 2, p50Ms: 0.5, p99Ms: 4, rssMb: 0 })]);
  assert.equal(comparison.inSaved, true);
  assert.equal(comparison.savedSize, null);
  assert.deepEqual(comparison.figures.map((f) => [f.figure, f.current, f.saved, f.ratio]), [
    ['req/s', 200, 100, 2],
    ['mean ms', 1, 2, 0.5],
    ['p50 ms', 1, 0.5, 2],
    ['p99 ms', 4, 4, 1],
    // old 0: no ratio rather than Infinity
    ['RSS MB', 100, 0, null],
  ]);
});

test('numeric extras are compared too; text extras are not', () => {
  const [comparison] = compareRows(
    [row({ extra: { vsNodeHttp: 3, load: 'autocannon', serverCpuUsPerReq: 10 } })],
    [row({ extra: { vsNodeHttp: 2, load: 'autocannon' } })],
  );
  assert.deepEqual(comparison.figures.slice(5).map((f) => [f.figure, f.saved, f.ratio]), [['vsNodeHttp', 2, 1.5], ['serverCpuUsPerReq', null, null]]);
});

test('a row the saved run lacks, and a row measured on other data', () => {
  const [missing, resized] = compareRows([row({ name: 'new row' }), row({ size: '100k VMs' })], [row()]);
  assert.equal(missing.inSaved, false);
  assert.ok(missing.figures.every((f) => f.saved === null && f.ratio === null));
  assert.equal(resized.savedSize, '5k VMs');
  const text = formatComparison([missing, resized]);
  assert.match(text, /new row\s+5k VMs\s+req\/s\s+200\s+not in saved run\s+-/);
  assert.match(text, /100k VMs \(saved: 5k VMs\)\s+req\/s\s+200\s+200\s+1\.00/);
  // The missing row takes one line; the compared one a line per figure; plus header and rule.
  assert.equal(text.split('\n').length, 2 + 1 + 5);
});
