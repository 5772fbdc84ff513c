// groupBy and sortBy: fields, tags and time buckets in order; sort keys with directions; their errors.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../src/errors.ts';
import { codeInventoryFields, componentFields, jvmInventoryFields, parseGroupBy, parseSortBy } from '../../src/parser/index.ts';
import type { FieldCatalog } from '../../src/parser/index.ts';

function failure(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ApiError, `not an ApiError: ${String(error)}`);
    return error;
  }
  assert.fail('accepted');
}

describe('parseGroupBy', () => {
  const accepted: [FieldCatalog, unknown, [string, string, string][]][] = [
    [jvmInventoryFields, undefined, []],
    [jvmInventoryFields, [], []],
    [jvmInventoryFields, ['tags.env', 'year', 'month', 'day', 'week', 'hostName'], [
      ['tags.env', 'string', 'vm'], ['year', 'integer', 'time'], ['month', 'integer', 'time'], ['day', 'integer', 'time'],
      ['week', 'integer', 'time'], ['hostName', 'string', 'vm'],
    ]],
    [jvmInventoryFields, [' state ', 'systemProperties.java.version', 'startTime'], [
      ['state', 'enum', 'vm'], ['systemProperties.java.version', 'string', 'vm'], ['startTime', 'time', 'vm'],
    ]],
    [componentFields, ['tags.AppEnv', 'AppEnv', 'componentVersion', 'score', 'year'], [
      ['tags.AppEnv', 'string', 'vm'], ['AppEnv', 'string', 'vm'], ['componentVersion', 'version', 'component'], ['score', 'number', 'component'],
      ['year', 'integer', 'time'],
    ]],
    [codeInventoryFields, ['sourceName'], [['sourceName', 'string', 'code']]],
    [codeInventoryFields, ['sourceName', 'className'], [['sourceName', 'string', 'code'], ['className', 'string', 'code']]],
    [codeInventoryFields, ['sourceName', 'className', 'methodName'], [['sourceName', 'string', 'code'], ['className', 'string', 'code'], ['methodName', 'string', 'code']]],
  ];
  for (const [catalog, entries, fields] of accepted) {
    it(`${catalog.family} ${JSON.stringify(entries)}`, () => {
      assert.deepEqual(parseGroupBy(entries, catalog).map((f) => [f.name, f.type, f.scope]), fields);
    });
  }

  it('a mistyped groupBy or sortBy field gets the nearest one', () => {
    assert.match(failure(() => parseGroupBy(['hostname'], jvmInventoryFields)).message, /hostname is not a groupBy field \(did you mean hostName\?\);/);
    assert.match(failure(() => parseSortBy(['cont=DESC'], ['count', 'hostName'])).message, /cont is not a sortBy field \(did you mean count\?\);/);
  });

  it('a tag field carries its key', () => {
    assert.equal(parseGroupBy(['tags.env'], jvmInventoryFields)[0].tagKey, 'env');
  });

  const rejected: [string, FieldCatalog, unknown, number | undefined, number, string, (expected: string[]) => boolean][] = [
    ['not an array', jvmInventoryFields, 'hostName', undefined, 1, '"hostName"', (e) => e[0] === 'an array of strings'],
    ['not a string', jvmInventoryFields, ['hostName', 1], 1, 1, '1', (e) => e[0] === 'a string'],
    ['unknown field', jvmInventoryFields, ['hostname'], 0, 1, 'hostname', (e) => e.includes('hostName') && e.includes('year') && e.includes('tags.<key>')],
    ['count is not a field', jvmInventoryFields, ['count'], 0, 1, 'count', (e) => e.includes('vmId')],
    ['duplicate', jvmInventoryFields, ['hostName', 'year', 'hostName'], 2, 1, 'hostName', (e) => !e.includes('hostName') && !e.includes('year') && e.includes('vmId')],
    ['duplicate tag', jvmInventoryFields, ['tags.env', 'tags.env'], 1, 1, 'tags.env', (e) => e.includes('tags.<key>')],
    ['cveId cannot group', componentFields, ['cveId'], 0, 1, 'cveId', (e) => !e.includes('cveId') && e.includes('componentName')],
    ['time buckets are not code fields', codeInventoryFields, ['year'], 0, 1, 'year', (e) => e.length === 1 && e[0] === 'sourceName'],
    ['code: not a prefix', codeInventoryFields, ['className'], 0, 1, 'className', (e) => e.length === 1 && e[0] === 'sourceName'],
    ['code: a gap', codeInventoryFields, ['sourceName', 'methodName'], 1, 1, 'methodName', (e) => e.length === 1 && e[0] === 'className'],
    ['code: a repeat', codeInventoryFields, ['sourceName', 'sourceName'], 1, 1, 'sourceName', (e) => e[0] === 'className'],
    ['code: too many', codeInventoryFields, ['sourceName', 'className', 'methodName', 'AppEnv'], 3, 1, 'AppEnv', (e) => e[0] === 'the end of groupBy'],
    ['an expression', jvmInventoryFields, ["tags.env = 'a'"], 0, 10, '=', (e) => e[0] === 'end of the entry'],
    ['empty', jvmInventoryFields, [''], 0, 1, '', (e) => e[0] === 'a field name'],
    ['a stray character', jvmInventoryFields, ['host-name'], 0, 5, '-', (e) => e.length === 1],
  ];
  for (const [name, catalog, entries, entry, column, text, expected] of rejected) {
    it(`rejects: ${name}`, () => {
      const error = failure(() => parseGroupBy(entries, catalog));
      assert.equal(error.status, 400);
      assert.equal(error.code, 'BAD_GROUP_BY');
      const detail = error.details?.[0] ?? {};
      assert.equal(detail.parameter, 'groupBy');
      assert.equal(detail.entry, entry);
      assert.equal(detail.column, column);
      assert.equal(detail.text, text);
      assert.ok(expected(detail.expected as string[]), JSON.stringify(detail.expected));
    });
  }
});

describe('parseSortBy', () => {
  const allowed = ['count', 'hostName', 'componentVersion', 'tags.<key>'];
  const accepted: [unknown, [string, string][]][] = [
    [undefined, []],
    [[], []],
    [['count=DESC'], [['count', 'DESC']]],
    [['hostName=asc', 'count = Desc', '  tags.env=ASC  '], [['hostName', 'ASC'], ['count', 'DESC'], ['tags.env', 'ASC']]],
    [['tags.a=desc', 'tags.b=asc'], [['tags.a', 'DESC'], ['tags.b', 'ASC']]],
  ];
  it("a catalogue's names() serve as the allowed fields", () => {
    const names = [...jvmInventoryFields.names(), 'count'];
    assert.deepEqual(parseSortBy(['tags.env=DESC', 'count=ASC', 'systemProperties.java.version=ASC'], names).map((k) => k.field), ['tags.env', 'count', 'systemProperties.java.version']);
  });
  for (const [entries, keys] of accepted) {
    it(JSON.stringify(entries), () => {
      assert.deepEqual(parseSortBy(entries, allowed).map((k) => [k.field, k.direction]), keys);
    });
  }

  const rejected: [string, unknown, readonly string[], number | undefined, number, string, string[]][] = [
    ['not an array', 'count=ASC', allowed, undefined, 1, '"count=ASC"', ['an array of strings']],
    ['not a string', [{ count: 'ASC' }], allowed, 0, 1, '{"count":"ASC"}', ['a string']],
    ['unknown field', ['vmId=ASC'], allowed, 0, 1, 'vmId', [...allowed]],
    ['count not allowed', ['count=ASC'], ['hostName'], 0, 1, 'count', ['hostName']],
    ['a tag when tags are not allowed', ['tags.env=ASC'], ['hostName'], 0, 1, 'tags.env', ['hostName']],
    ['a bare prefix', ['tags=ASC'], allowed, 0, 1, 'tags', [...allowed]],
    ['missing direction', ['hostName'], allowed, 0, 9, '', ['=']],
    ['missing direction after =', ['hostName='], allowed, 0, 10, '', ['ASC', 'DESC']],
    ['unknown direction', ['hostName=UP'], allowed, 0, 10, 'UP', ['ASC', 'DESC']],
    ['colon instead of =', ['hostName:ASC'], allowed, 0, 9, ':', ['=']],
    ['duplicate', ['count=ASC', 'hostName=ASC', 'count=DESC'], allowed, 2, 1, 'count', ['componentVersion', 'tags.<key>']],
    ['trailing text', ['count=ASC, hostName=DESC'], allowed, 0, 10, ',', ['end of the entry']],
  ];
  for (const [name, entries, allowedFields, entry, column, text, expected] of rejected) {
    it(`rejects: ${name}`, () => {
      const error = failure(() => parseSortBy(entries, allowedFields));
      assert.equal(error.status, 400);
      assert.equal(error.code, 'BAD_SORT_BY');
      assert.deepEqual(error.details?.[0], { parameter: 'sortBy', ...(entry === undefined ? {} : { entry }), column, text, expected });
    });
  }
});
