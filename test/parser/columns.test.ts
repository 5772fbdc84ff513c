// Columnar evaluation agrees with the scalar tests on random data, memoises per dictionary id, reuses masks.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createCatalog } from '../../src/parser/fields.ts';
import { compileFilter, evaluateConditions } from '../../src/parser/index.ts';
import type { Column, Condition, FieldDef } from '../../src/parser/index.ts';
import { seeded as random } from '../../src/seed/random.ts';

const NOW = Date.UTC(2026, 2, 31, 12, 0, 0);
const DAY = 86_400_000;

const catalog = createCatalog('component', [
  { name: 's', type: 'string', scope: 'vm' },
  { name: 'v', type: 'version', scope: 'component' },
  { name: 'e', type: 'enum', scope: 'vm', values: ['RUNNING', 'OFFLINE', 'TERMINATED'] },
  { name: 'i', type: 'integer', scope: 'time' },
  { name: 'n', type: 'number', scope: 'component' },
  { name: 't', type: 'time', scope: 'vm' },
]);

// Dictionary strings: id 0 is missing, so index 0 is null.
const DICT: (string | null)[] = [
  null, 'RUNNING', 'OFFLINE', 'TERMINATED', 'prod', 'dev', 'staging', 'Prod-EU', '', 'host-1', 'host-2', 'Zürich', '東京',
  '1.0', '1', '1.0.1', '2.0-SNAPSHOT', '2.0', '2.17.0', '2.17.0-rc1', '10.0', "it's", 'a.b', '😀',
];
const lookup = (id: number): string | null => DICT[id] ?? null;

const ENTRIES = [
  "s = 'prod'", "s != 'prod'", "s < 'host-2'", "s >= 'dev'", 's = null', 's != null', "s LIKE '^host-\\d$'", "s LIKE '.'",
  "s CONTAINS 'PROD'", "s IN ('dev', 'staging', 'Zürich')", "s RANGE ('a', 'p')", "s = 'it''s'",
  "v = '1'", "v != '2.0'", "v < '2.0'", "v <= '2.17.0'", "v > '1.0.1'", "v >= '2.17.0-rc1'", "v IN ('1.0.0', '10')", "v RANGE ('1', '2.0')", 'v = null',
  "e = 'RUNNING'", "e != 'OFFLINE'", "e IN ('OFFLINE', 'TERMINATED')", 'e != null',
  'i = 3', 'i != 3', 'i < 0', 'i <= 2', 'i > 5', 'i >= -2', 'i IN (1, 2, 9)', 'i RANGE (-3, 3)', 'i = null', 'i != null',
  'n = 7.5', 'n != 7.5', 'n < 7.5', 'n <= 5', 'n > 9.9', 'n >= 0', 'n IN (0, 10, 7.5)', 'n RANGE (4, 8.5)', 'n = null',
  't = 0d', 't != 1d', 't < 2d', 't <= 2d', 't > 3d', 't >= 1m', 't IN (0d, 5d)', 't RANGE (10d, 3d)', 't = null', 't != null',
];

function numberValue(field: string, rnd: () => number): number {
  if (rnd() < 0.1) return Number.NaN;
  if (field === 'i') return Math.floor(rnd() * 21) - 10;
  // Half the numbers sit on the literals' bounds, where strict and inclusive comparisons differ.
  if (field === 'n') return rnd() < 0.5 ? [0, 7.5, 10, 5, 8.5, 4][Math.floor(rnd() * 6)] : Math.round(rnd() * 100) / 10;
  return NOW - Math.floor(rnd() * 40 * DAY);
}

function columns(rowCount: number, rnd: () => number): Map<string, Column> {
  const map = new Map<string, Column>();
  for (const name of ['s', 'v', 'e']) {
    const ids = new Uint32Array(rowCount);
    for (let r = 0; r < rowCount; r++) ids[r] = Math.floor(rnd() * DICT.length);
    map.set(name, { kind: 'dict', ids, lookup });
  }
  for (const name of ['i', 'n', 't']) {
    const values = new Float64Array(rowCount);
    for (let r = 0; r < rowCount; r++) values[r] = numberValue(name, rnd);
    map.set(name, { kind: 'number', values });
  }
  return map;
}

function scalarValue(column: Column, row: number): string | number | null {
  if (column.kind === 'dict') return column.lookup(column.ids[row]);
  const v = column.values[row];
  return Number.isNaN(v) ? null : v;
}

function scalarMask(conditions: Condition[], byName: Map<string, Column>, rowCount: number): Uint8Array {
  const mask = new Uint8Array(rowCount);
  for (let r = 0; r < rowCount; r++) {
    mask[r] = conditions.every((c) => c.test(scalarValue(byName.get(c.field.name) as Column, r))) ? 1 : 0;
  }
  return mask;
}

describe('evaluateConditions', () => {
  it('equals the scalar tests on random data and random filters', () => {
    const rnd = random(20261121);
    for (let round = 0; round < 300; round++) {
      // Some filters span several blocks of 4096 rows, where the stages run in their selectivity order.
      const rowCount = rnd() < 0.2 ? 4096 + Math.floor(rnd() * 9000) : Math.floor(rnd() * 3000);
      const byName = columns(rowCount, rnd);
      const entries = Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => ENTRIES[Math.floor(rnd() * ENTRIES.length)]);
      const { conditions } = compileFilter(entries, catalog, NOW);
      const columnar = evaluateConditions(conditions, (field) => byName.get(field.name) as Column, rowCount);
      assert.deepEqual(columnar, scalarMask(conditions, byName, rowCount), `filter ${JSON.stringify(entries)}`);
    }
  });

  it('every entry alone, over every dictionary id and a spread of numbers', () => {
    const rnd = random(7);
    const byName = columns(5000, rnd);
    for (const entry of ENTRIES) {
      const { conditions } = compileFilter([entry], catalog, NOW);
      const columnar = evaluateConditions(conditions, (field) => byName.get(field.name) as Column, 5000);
      assert.deepEqual(columnar, scalarMask(conditions, byName, 5000), entry);
    }
  });

  it('no conditions pass every row; zero rows give an empty mask', () => {
    assert.deepEqual(evaluateConditions([], () => assert.fail('no column needed'), 3), Uint8Array.of(1, 1, 1));
    const { conditions } = compileFilter(["s = 'a'"], catalog, NOW);
    assert.equal(evaluateConditions(conditions, () => ({ kind: 'dict', ids: new Uint32Array(0), lookup }), 0).length, 0);
  });

  it('tests each dictionary id once per condition, across calls with the same lookup', () => {
    const { conditions } = compileFilter(["s CONTAINS 'o'"], catalog, NOW);
    const seen: number[] = [];
    const counting = (id: number): string | null => {
      seen.push(id);
      return lookup(id);
    };
    const ids = Uint32Array.from({ length: 10_000 }, (_, r) => r % 7);
    const column: Column = { kind: 'dict', ids, lookup: counting };
    evaluateConditions(conditions, () => column, ids.length);
    evaluateConditions(conditions, () => column, ids.length);
    assert.deepEqual(seen.sort((a, b) => a - b), [0, 1, 2, 3, 4, 5, 6]);
    // A different dictionary starts afresh.
    const other = ['zero', 'one', 'two'];
    const mask = evaluateConditions(conditions, () => ({ kind: 'dict', ids: Uint32Array.of(0, 1, 2), lookup: (id) => other[id] }), 3);
    assert.deepEqual(mask, Uint8Array.of(1, 1, 1));
  });

  it('grows its memo for large ids', () => {
    const { conditions } = compileFilter(["s = 'big'"], catalog, NOW);
    const ids = Uint32Array.of(5, 3_000_000, 5, 3_000_000, 0);
    const mask = evaluateConditions(conditions, () => ({ kind: 'dict', ids, lookup: (id) => (id === 3_000_000 ? 'big' : id === 0 ? null : 'small') }), ids.length);
    assert.deepEqual(mask, Uint8Array.of(0, 1, 0, 1, 0));
  });

  it('writes into a given mask, only its first rowCount bytes', () => {
    const { conditions } = compileFilter(['n > 1'], catalog, NOW);
    const into = new Uint8Array(5).fill(7);
    const result = evaluateConditions(conditions, () => ({ kind: 'number', values: Float64Array.of(0, 2, Number.NaN, 3) }), 4, into);
    assert.equal(result, into);
    assert.deepEqual(into, Uint8Array.of(0, 1, 0, 1, 7));
  });

  it('a dict column also serves a numeric field, through its scalar test', () => {
    const { conditions } = compileFilter(['n >= 2'], catalog, NOW);
    const strings = [null, '1', '2.5', 'x'];
    const mask = evaluateConditions(conditions, () => ({ kind: 'dict', ids: Uint32Array.of(0, 1, 2, 3), lookup: (id) => strings[id] ?? null }), 4);
    assert.deepEqual(mask, Uint8Array.of(0, 0, 1, 0));
  });

  it('refuses a number column for a textual field and columns or masks shorter than rowCount', () => {
    const { conditions } = compileFilter(["s = 'a'"], catalog, NOW);
    const numbers = (field: FieldDef): Column => ({ kind: 'number', values: new Float64Array(field.name.length) });
    assert.throws(() => evaluateConditions(conditions, numbers, 1), TypeError);
    assert.throws(() => evaluateConditions(conditions, () => ({ kind: 'dict', ids: new Uint32Array(2), lookup }), 3), RangeError);
    assert.throws(() => evaluateConditions([], () => ({ kind: 'dict', ids: new Uint32Array(3), lookup }), 3, new Uint8Array(2)), RangeError);
  });
});
