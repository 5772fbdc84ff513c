// Fuzz: random and mutated inputs either parse or fail with a 400 ApiError; nothing else ever escapes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../src/errors.ts';
import { codeInventoryFields, compileFilter, componentFields, jvmInventoryFields, parseGroupBy, parseSortBy, resolveTime } from '../../src/parser/index.ts';
import { seeded as random } from '../../src/seed/random.ts';

const NOW = Date.UTC(2026, 2, 31, 12, 0, 0);
const CODES = new Set(['BAD_FILTER', 'BAD_GROUP_BY', 'BAD_SORT_BY', 'BAD_TIME']);

const rnd = random(0x5eed);
const pick = <T>(items: readonly T[]): T => items[Math.floor(rnd() * items.length)];

const SEEDS = [
  "hostName = 'web-1'", "tags.env != 'prod'", "state IN ('RUNNING', 'OFFLINE')", "vmId LIKE '^a.*z$'", "mainMethod CONTAINS 'Main'",
  'startTime >= 3d', "lastHeardTime < '2026-03-01T00:00:00.000+02:00'", 'startTime RANGE (1m, 0d)', 'lastHeardTime = 1700000000000',
  "systemProperties.java.version = '21'", 'AppEnv = null', 'AppEnv != NULL', "componentVersion RANGE ('2.0', '2.17.1')",
  "componentName = 'log4j-core'", 'score > 7.5', 'cveId != null', "cveId IN ('CVE-2021-44228')", 'className:com/acme/Foo$1',
  'methodName:run(int, java.lang.String)', "sourceName CONTAINS 'jar'", "s = 'it''s'", "tags.x = 'Zürich 東京 😀'",
];
const TIME_SEEDS = ['0d', '3d', '12m', '2026-11-21T10:00:00.000Z', '2026-11-21T10:00:00+0200', '2026-02-28', '1700000000000', '2024-02-29T23:59:59.999-05:30'];
const GROUP_SEEDS = ['hostName', 'tags.env', 'year', 'month', 'week', 'day', 'sourceName', 'className', 'methodName', 'componentVersion', 'state'];
const SORT_SEEDS = ['count=DESC', 'hostName=asc', 'tags.env = Desc', 'componentVersion=ASC'];

const FRAGMENTS = [
  ' ', '  ', '\t', '\n', "'", "''", '(', ')', ',', ':', '=', '!=', '<', '<=', '>', '>=', '!', '-', '.', '+', '*', '\\', '"',
  'LIKE', 'like', 'CONTAINS', 'IN', 'in', 'RANGE', 'NULL', 'null', 'ASC', 'DESC', 'AND', 'OR', 'NOT',
  'hostName', 'vmId', 'state', 'tags.', 'tags.env', 'systemProperties.', 'score', 'cveId', 'componentVersion', 'startTime',
  'sourceName', 'className', 'year', 'count', 'x', 'T', 'Z', 'd', 'm', 'D', 'M',
  '0', '1', '7', '-1', '3.5', '2026', '2026-02-30', '2026-11-21T10:00', '99999999999999999999', '1e5', '0x1F',
  'é', '東', '😀', '\u0000', '\u00a0', '\u2028', '\ud800', '[', ']', '{', '}', '^', '$', '|', '?', '(?<', '\\u{',
];

function randomText(): string {
  let text = '';
  const parts = Math.floor(rnd() * 8);
  for (let k = 0; k < parts; k++) text += rnd() < 0.85 ? pick(FRAGMENTS) : String.fromCharCode(Math.floor(rnd() * 0x3000));
  return text;
}

function mutate(text: string): string {
  let out = text;
  const edits = 1 + Math.floor(rnd() * 3);
  for (let k = 0; k < edits; k++) {
    const at = Math.floor(rnd() * (out.length + 1));
    switch (Math.floor(rnd() * 5)) {
      case 0: out = out.slice(0, at) + out.slice(at + 1); break;
      case 1: out = out.slice(0, at) + pick(FRAGMENTS) + out.slice(at); break;
      case 2: out = out.slice(0, at) + pick(FRAGMENTS) + out.slice(at + 1 + Math.floor(rnd() * 3)); break;
      case 3: out = out.slice(at) + out.slice(0, at); break;
      default: out = out.slice(0, at) + out.slice(Math.floor(rnd() * out.length)); break;
    }
  }
  return out;
}

function randomValue(): unknown {
  return pick<() => unknown>([
    () => undefined, () => null, () => true, () => Math.floor(rnd() * 1e6), () => rnd() * 1e20, () => -rnd(), () => Number.NaN,
    () => ({}), () => ({ length: 2 }), () => [1, 'a'], () => [[randomText()]], () => [null], () => Object.create(null), () => randomText(),
  ])();
}

function text(seeds: readonly string[]): string {
  const r = rnd();
  if (r < 0.5) return mutate(pick(seeds));
  if (r < 0.8) return randomText();
  return pick(seeds);
}

function entries(seeds: readonly string[]): unknown {
  if (rnd() < 0.05) return randomValue();
  return Array.from({ length: Math.floor(rnd() * 4) }, () => (rnd() < 0.03 ? randomValue() : text(seeds)));
}

const SAMPLES = ['', 'prod', 'Zürich', '2.17.0', 'CVE-2021-44228', null, 0, 7.5, NOW, -1];

function expectCleanOutcome(run: () => unknown, input: unknown): 'ok' | 'rejected' {
  try {
    run();
    return 'ok';
  } catch (error) {
    if (error instanceof ApiError && error.status === 400 && CODES.has(error.code) && Array.isArray(error.details)) {
      const detail = error.details[0];
      assert.ok(typeof detail.column === 'number' && detail.column >= 1, `no column for ${JSON.stringify(input)}`);
      assert.ok(Array.isArray(detail.expected) && detail.expected.length > 0, `nothing expected for ${JSON.stringify(input)}`);
      return 'rejected';
    }
    assert.fail(`${JSON.stringify(input) ?? String(input)} threw ${error instanceof Error ? error.stack : String(error)}`);
  }
}

describe('fuzz', () => {
  it('100,000+ random and mutated inputs: a result or a 400 ApiError, never anything else', () => {
    const counts = { ok: 0, rejected: 0 };
    const catalogs = [jvmInventoryFields, codeInventoryFields, componentFields];
    for (let k = 0; k < 40_000; k++) {
      const input = entries(SEEDS);
      const outcome = expectCleanOutcome(() => {
        for (const condition of compileFilter(input, pick(catalogs), NOW).conditions) {
          for (const sample of SAMPLES) condition.test(sample);
        }
      }, input);
      counts[outcome]++;
    }
    for (let k = 0; k < 30_000; k++) {
      const input = rnd() < 0.1 ? randomValue() : text(TIME_SEEDS);
      counts[expectCleanOutcome(() => resolveTime(input, rnd() < 0.5 ? 'open' : 'close', NOW, 'from'), input)]++;
    }
    for (let k = 0; k < 20_000; k++) {
      const input = entries(GROUP_SEEDS);
      counts[expectCleanOutcome(() => parseGroupBy(input, pick(catalogs)), input)]++;
    }
    for (let k = 0; k < 20_000; k++) {
      const input = entries(SORT_SEEDS);
      counts[expectCleanOutcome(() => parseSortBy(input, ['count', 'hostName', 'componentVersion', 'tags.<key>']), input)]++;
    }
    assert.ok(counts.ok + counts.rejected >= 100_000);
    // Both outcomes are exercised, so the generator is neither all noise nor all valid.
    assert.ok(counts.ok > 10_000 && counts.rejected > 10_000, JSON.stringify(counts));
  });
});
