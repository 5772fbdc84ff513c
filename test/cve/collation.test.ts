// Code-point string order (decisions §6.3), which differs from JavaScript's UTF-16 order above the BMP.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareCodePoints } from '../../src/collation.ts';

test('orders by code point', () => {
  const sorted = ['b', 'a', 'B', '', 'ab', '\u{1F600}', '\uFFFD', 'é'].sort(compareCodePoints);
  assert.deepEqual(sorted, ['', 'B', 'a', 'ab', 'b', 'é', '\uFFFD', '\u{1F600}']);
  assert.equal(compareCodePoints('x', 'x'), 0);
});
