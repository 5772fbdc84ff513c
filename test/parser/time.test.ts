// Time expressions: relative days and months (with clamping), ISO 8601 with zones, epoch ms, open vs close.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../src/errors.ts';
import { resolveTime } from '../../src/parser/index.ts';

const at = (iso: string): number => Date.parse(iso);
// 31 March 2026, 12:34:56.789 UTC: the month after a short one, to show clamping.
const NOW = at('2026-03-31T12:34:56.789Z');

const resolved: [string | number, number, string, string][] = [
  // value, now, open, close
  ['0d', NOW, '2026-03-31T00:00:00.000Z', '2026-03-31T23:59:59.999Z'],
  ['3d', NOW, '2026-03-28T00:00:00.000Z', '2026-03-28T23:59:59.999Z'],
  ['31d', NOW, '2026-02-28T00:00:00.000Z', '2026-02-28T23:59:59.999Z'],
  ['365D', NOW, '2025-03-31T00:00:00.000Z', '2025-03-31T23:59:59.999Z'],
  ['0m', NOW, '2026-03-31T00:00:00.000Z', '2026-03-31T23:59:59.999Z'],
  ['1m', NOW, '2026-02-28T00:00:00.000Z', '2026-02-28T23:59:59.999Z'],
  ['1M', at('2024-03-31T08:00:00Z'), '2024-02-29T00:00:00.000Z', '2024-02-29T23:59:59.999Z'],
  ['2m', NOW, '2026-01-31T00:00:00.000Z', '2026-01-31T23:59:59.999Z'],
  ['3m', NOW, '2025-12-31T00:00:00.000Z', '2025-12-31T23:59:59.999Z'],
  ['13m', NOW, '2025-02-28T00:00:00.000Z', '2025-02-28T23:59:59.999Z'],
  ['1m', at('2026-05-31T23:59:59.999Z'), '2026-04-30T00:00:00.000Z', '2026-04-30T23:59:59.999Z'],
  ['1m', at('2026-03-15T00:00:00.000Z'), '2026-02-15T00:00:00.000Z', '2026-02-15T23:59:59.999Z'],
  ['1d', at('2026-03-01T00:00:00.000Z'), '2026-02-28T00:00:00.000Z', '2026-02-28T23:59:59.999Z'],
  // ISO 8601: an instant, whatever the role
  ['2026-11-21T10:00:00.000Z', NOW, '2026-11-21T10:00:00.000Z', '2026-11-21T10:00:00.000Z'],
  ['2026-11-21T10:00:00.000+02:00', NOW, '2026-11-21T08:00:00.000Z', '2026-11-21T08:00:00.000Z'],
  ['2026-11-21T10:00:00.000+0200', NOW, '2026-11-21T08:00:00.000Z', '2026-11-21T08:00:00.000Z'],
  ['2026-11-21T10:00:00.000-05:30', NOW, '2026-11-21T15:30:00.000Z', '2026-11-21T15:30:00.000Z'],
  ['2026-11-21T10:00:00.000+02', NOW, '2026-11-21T08:00:00.000Z', '2026-11-21T08:00:00.000Z'],
  ['2026-11-21T10:00:00.000', NOW, '2026-11-21T10:00:00.000Z', '2026-11-21T10:00:00.000Z'],
  ['2026-11-21T10:00:00', NOW, '2026-11-21T10:00:00.000Z', '2026-11-21T10:00:00.000Z'],
  ['2026-11-21T10:00', NOW, '2026-11-21T10:00:00.000Z', '2026-11-21T10:00:00.000Z'],
  ['2026-11-21T10:00:00.5Z', NOW, '2026-11-21T10:00:00.500Z', '2026-11-21T10:00:00.500Z'],
  ['2026-11-21T10:00:00.123456789Z', NOW, '2026-11-21T10:00:00.123Z', '2026-11-21T10:00:00.123Z'],
  ['2026-11-21t10:00:00z', NOW, '2026-11-21T10:00:00.000Z', '2026-11-21T10:00:00.000Z'],
  ['2024-02-29T23:59:59.999Z', NOW, '2024-02-29T23:59:59.999Z', '2024-02-29T23:59:59.999Z'],
  ['0001-01-01T00:00:00Z', NOW, '0001-01-01T00:00:00.000Z', '0001-01-01T00:00:00.000Z'],
  // a bare date is a day, like a relative one
  ['2026-11-21', NOW, '2026-11-21T00:00:00.000Z', '2026-11-21T23:59:59.999Z'],
  // epoch ms, as a number or as digits
  [1_700_000_000_000, NOW, '2023-11-14T22:13:20.000Z', '2023-11-14T22:13:20.000Z'],
  ['1700000000000', NOW, '2023-11-14T22:13:20.000Z', '2023-11-14T22:13:20.000Z'],
  [0, NOW, '1970-01-01T00:00:00.000Z', '1970-01-01T00:00:00.000Z'],
  ['  3d  ', NOW, '2026-03-28T00:00:00.000Z', '2026-03-28T23:59:59.999Z'],
];

describe('resolveTime', () => {
  for (const [value, now, open, close] of resolved) {
    it(`${JSON.stringify(value)} at ${new Date(now).toISOString()}`, () => {
      assert.equal(new Date(resolveTime(value, 'open', now, 'from')).toISOString(), open);
      assert.equal(new Date(resolveTime(value, 'close', now, 'to')).toISOString(), close);
    });
  }

  it('from: 0d, to: 0d is today; from: 3d, to: 3d the whole day three days ago (decisions §6.1)', () => {
    assert.equal(resolveTime('0d', 'close', NOW, 'to') - resolveTime('0d', 'open', NOW, 'from'), 86_400_000 - 1);
    assert.equal(resolveTime('3d', 'open', NOW, 'from'), at('2026-03-28T00:00:00.000Z'));
  });
});

const rejected: [unknown, number, string][] = [
  // value, column, text
  ['2026-13-01', 1, '2026-13-01'],
  ['2026-00-10', 1, '2026-00-10'],
  ['2026-02-29', 1, '2026-02-29'],
  ['2024-02-30', 1, '2024-02-30'],
  ['2026-04-31', 1, '2026-04-31'],
  ['2026-01-00', 1, '2026-01-00'],
  ['2026-01-01T24:00:00', 1, '2026-01-01T24:00:00'],
  ['2026-01-01T10:60', 1, '2026-01-01T10:60'],
  ['2026-01-01T10:00:60', 1, '2026-01-01T10:00:60'],
  ['2026-01-01T10:00+25:00', 1, '2026-01-01T10:00+25:00'],
  ['2026-01-01T10:00+02:75', 1, '2026-01-01T10:00+02:75'],
  ['2026-1-1', 5, '-1'],
  ['2026-01-01 10:00:00', 12, '10'],
  ['2026-01-01T10', 11, 'T10'],
  ['yesterday', 1, 'yesterday'],
  ['3x', 2, 'x'],
  ['3 d', 3, 'd'],
  ['-3d', 3, 'd'],
  ['3d 4d', 4, '4d'],
  ['3w', 2, 'w'],
  ['1.5', 1, '1.5'],
  ['', 1, ''],
  ['   ', 4, ''],
  ["'3d'", 1, "'3d'"],
  ['99999999999d', 1, '99999999999d'],
  ['9999999999m', 1, '9999999999m'],
  ['99999999999999999', 1, '99999999999999999'],
  ['3d\u0000', 3, '\u0000'],
  [1.5, 1, '1.5'],
  [Number.NaN, 1, 'null'],
  [Number.POSITIVE_INFINITY, 1, 'null'],
  [1e20, 1, '100000000000000000000'],
  [null, 1, 'null'],
  [true, 1, 'true'],
  [{}, 1, '{}'],
  [['3d'], 1, '["3d"]'],
  [undefined, 1, 'undefined'],
];

describe('resolveTime errors', () => {
  for (const [value, column, text] of rejected) {
    it(JSON.stringify(value) ?? String(value), () => {
      assert.throws(
        () => resolveTime(value, 'open', NOW, 'startTime'),
        (error: unknown) => {
          assert.ok(error instanceof ApiError);
          assert.equal(error.status, 400);
          assert.equal(error.code, 'BAD_TIME');
          assert.deepEqual(error.details?.[0], {
            parameter: 'startTime',
            column,
            text,
            expected: ['Xd (days before now)', 'Xm (months before now)', 'yyyy-MM-ddTHH:mm:ss.SSS with an optional zone (Z, +02:00, +0200)', 'epoch milliseconds'],
          });
          assert.match(error.message, new RegExp(`^startTime at column ${column}: `));
          return true;
        },
      );
    });
  }
});
