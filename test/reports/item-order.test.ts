// The one item order every report uses (decisions §6.3): code points for strings, Maven order for versions,
// numbers as numbers, null last whichever the direction, ties kept in their order.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sortedIndexes, sortItems } from '../../src/engine/reports/item-order.ts';
import type { OrderKey } from '../../src/engine/reports/item-order.ts';

const asc = (field: string, collation: OrderKey['collation'] = 'string'): OrderKey => ({ field, direction: 'ASC', collation });
const desc = (field: string, collation: OrderKey['collation'] = 'string'): OrderKey => ({ field, direction: 'DESC', collation });

test('strings by code point, beyond the basic plane too; null and undefined last in either direction', () => {
  // UTF-16 order would put U+FF5E (one unit, 0xFF5E) after U+1F600 (surrogates 0xD83D…); code points do not.
  const values = ['b', null, '\u{1F600}', 'a', undefined, '\uFF5E', 'B'];
  assert.deepEqual(sortedIndexes(values.length, [values], [asc('v')]).map((i) => values[i]), ['B', 'a', 'b', '\uFF5E', '\u{1F600}', null, undefined]);
  assert.deepEqual(sortedIndexes(values.length, [values], [desc('v')]).map((i) => values[i]), ['\u{1F600}', '\uFF5E', 'b', 'a', 'B', null, undefined]);
});

test('versions in Maven order, equal versions tied; numbers as numbers; a number in a text field as its string', () => {
  const versions = ['1.10', '1.9', '1.0.0', '2.0-SNAPSHOT', '1.0', '2.0'];
  assert.deepEqual(sortedIndexes(versions.length, [versions], [asc('v', 'version')]).map((i) => versions[i]), ['1.0.0', '1.0', '1.9', '1.10', '2.0-SNAPSHOT', '2.0']);
  const numbers = [10, 9, 100, -1];
  assert.deepEqual(sortedIndexes(numbers.length, [numbers], [desc('n', 'number')]).map((i) => numbers[i]), [100, 10, 9, -1]);
  const mixed = ['10', 9, '100'];
  assert.deepEqual(sortedIndexes(mixed.length, [mixed], [asc('m')]).map((i) => mixed[i]), ['10', '100', 9]);
});

test('keys in turn, ties kept in their order; sortItems sorts in place by the same rule', () => {
  const items = [
    { team: 'b', version: '1.0', n: 1 },
    { team: 'a', version: '1.0', n: 2 },
    { team: 'b', version: '1.2', n: 3 },
    { team: null, version: '9', n: 4 },
    { team: 'a', version: '1.0', n: 5 },
  ];
  const sorted = sortItems(items, [asc('team'), desc('version', 'version')]);
  assert.equal(sorted, items);
  assert.deepEqual(items.map((item) => item.n), [2, 5, 3, 1, 4]);
  assert.deepEqual(sortedIndexes(3, [], []), [0, 1, 2]);
});
