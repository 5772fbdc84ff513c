// Terminal output of a run: number formatting, the aligned table, the extra figures.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BenchRow } from '../../bench/harness.ts';
import { formatExtras, formatNumber, formatRows, renderTable } from '../../bench/table.ts';

const row = (overrides: Partial<BenchRow> = {}): BenchRow => ({
  suite: 'http', name: 'GET /opthub-health', size: '5k VMs', rate: 52_134.6, unit: 'req/s',
  meanMs: 0.19234, p50Ms: 0.18, p99Ms: 1.5, rssMb: 130, ...overrides,
});

for (const [value, text] of [
  [52_134.6, '52,135'],
  [1000, '1,000'],
  [999.4, '999'],
  [12.345, '12.3'],
  [0.19234, '0.192'],
  [0, '0'],
  [-1500, '-1,500'],
  [Number.NaN, '-'],
  [Number.POSITIVE_INFINITY, '-'],
  [null, '-'],
  [undefined, '-'],
] as const) {
  test(`formatNumber(${value}) is ${text}`, () => assert.equal(formatNumber(value), text));
}

test('renderTable pads columns, right-aligns numbers, underlines the header', () => {
  const text = renderTable(['name', 'n'], [['a', '1'], ['bbb', '100']], new Set([1]));
  assert.equal(text, ['name    n', '----  ---', 'a       1', 'bbb   100'].join('\n'));
});

test('formatRows: one line per row under a header naming every figure', () => {
  const lines = formatRows([row(), row({ suite: 'parser', name: 'compile', unit: 'ops/s', rate: 1.5 })]).split('\n');
  assert.equal(lines.length, 4);
  assert.deepEqual(lines[0].split(/\s{2,}/), ['suite', 'name', 'size', 'rate', 'unit', 'mean ms', 'p50 ms', 'p99 ms', 'RSS MB']);
  assert.deepEqual(lines[2].split(/\s{2,}/), ['http', 'GET /opthub-health', '5k VMs', '52,135', 'req/s', '0.192', '0.18', '1.5', '130']);
  assert.equal(lines[2].length, lines[3].length);
});

test('formatExtras: a line per row that has extras, numbers formatted', () => {
  const text = formatExtras([row(), row({ name: 'b', extra: { vsNodeHttp: 2.345, load: 'autocannon' } }), row({ extra: {} })]);
  assert.equal(text, 'http / b: vsNodeHttp=2.35, load=autocannon');
});
