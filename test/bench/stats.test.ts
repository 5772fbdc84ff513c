// Latency summaries: nearest-rank percentiles and a sample buffer that grows.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Samples, summarize } from '../../bench/stats.ts';

test('nearest-rank percentiles of 1..100', () => {
  const values = Array.from({ length: 100 }, (_, i) => 100 - i);
  assert.deepEqual(summarize(values), { count: 100, mean: 50.5, min: 1, p50: 50, p99: 99, max: 100 });
});

test('one sample is every percentile', () => {
  assert.deepEqual(summarize([7]), { count: 1, mean: 7, min: 7, p50: 7, p99: 7, max: 7 });
});

test('no samples: NaN, never a made-up number', () => {
  assert.ok(Number.isNaN(summarize([]).p50));
});

test('Samples keeps every value past its initial capacity and merges', () => {
  const a = new Samples();
  for (let i = 0; i < 5000; i++) a.add(i);
  const b = new Samples();
  b.add(-1);
  b.addAll(a);
  assert.equal(b.count, 5001);
  assert.equal(b.values()[0], -1);
  assert.equal(b.values()[5000], 4999);
});
