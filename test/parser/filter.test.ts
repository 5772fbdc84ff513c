// Filter entries: every operator on every field type, literal forms, keyword case, and every error with its position.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../src/errors.ts';
import { createCatalog } from '../../src/parser/fields.ts';
import { codeInventoryFields, compileFilter, componentFields, jvmInventoryFields } from '../../src/parser/index.ts';
import type { FieldCatalog } from '../../src/parser/index.ts';

// 31 March 2026, 12:34:56.789 UTC.
const NOW = Date.UTC(2026, 2, 31, 12, 34, 56, 789);
const DAY = 86_400_000;
const TODAY = Date.UTC(2026, 2, 31);

// One field of each type, so that every operator meets every type.
const catalog: FieldCatalog = createCatalog('jvmInventory', [
  { name: 's', type: 'string', scope: 'vm' },
  { name: 'v', type: 'version', scope: 'component' },
  { name: 'e', type: 'enum', scope: 'vm', values: ['A', 'B', 'C'] },
  { name: 'i', type: 'integer', scope: 'vm' },
  { name: 'n', type: 'number', scope: 'component' },
  { name: 't', type: 'time', scope: 'vm' },
]);

type Value = string | number | null;

function passing(entry: string, values: readonly Value[], on: FieldCatalog = catalog): Value[] {
  const [condition] = compileFilter([entry], on, NOW).conditions;
  return values.filter((value) => condition.test(value));
}

function rejection(entries: unknown, on: FieldCatalog = catalog): ApiError {
  try {
    compileFilter(entries, on, NOW);
  } catch (error) {
    assert.ok(error instanceof ApiError, `not an ApiError: ${String(error)}`);
    return error;
  }
  assert.fail(`accepted ${JSON.stringify(entries)}`);
}

const STRINGS: Value[] = ['abc', 'ABC', 'abd', '', null];
const VERSIONS: Value[] = ['1.0', '1', '1.0.1', '2.0-SNAPSHOT', '2.0', '10.0', null];
const ENUMS: Value[] = ['A', 'B', 'C', null];
const INTEGERS: Value[] = [1, 2, 3, -5, null];
const NUMBERS: Value[] = [7.5, 7.4999, 10, -0.5, null];
const T = {
  yesterdayStart: TODAY - DAY,
  yesterdayEnd: TODAY - 1,
  todayStart: TODAY,
  now: NOW,
  todayEnd: TODAY + DAY - 1,
  instant: Date.parse('2026-03-30T10:00:00.000Z'),
  longAgo: Date.parse('2025-01-01T00:00:00.000Z'),
};
const TIMES: Value[] = [...Object.values(T), null];

const operatorTable: [string, readonly Value[], Value[]][] = [
  // string: code-point order, exact equality
  ["s = 'abc'", STRINGS, ['abc']],
  ["s != 'abc'", STRINGS, ['ABC', 'abd', '', null]],
  ["s < 'abd'", STRINGS, ['abc', 'ABC', '']],
  ["s <= 'abd'", STRINGS, ['abc', 'ABC', 'abd', '']],
  ["s > 'ABC'", STRINGS, ['abc', 'abd']],
  ["s >= 'ABC'", STRINGS, ['abc', 'ABC', 'abd']],
  ['s = null', STRINGS, [null]],
  ['s != null', STRINGS, ['abc', 'ABC', 'abd', '']],
  ["s LIKE '^ab'", STRINGS, ['abc', 'abd']],
  ["s LIKE '^a.{1,3}?$'", STRINGS, ['abc', 'abd']],
  ["s LIKE 'B'", STRINGS, ['ABC']],
  ["s LIKE '^$'", STRINGS, ['']],
  ["s CONTAINS 'AB'", STRINGS, ['abc', 'ABC', 'abd']],
  ["s IN ('abc', 'abd')", STRINGS, ['abc', 'abd']],
  ["s RANGE ('abc', 'abd')", STRINGS, ['abc', 'abd']],
  ["s RANGE ('', '')", STRINGS, ['']],
  // version: Maven order, and equality in that order
  ["v = '1'", VERSIONS, ['1.0', '1']],
  ["v != '1'", VERSIONS, ['1.0.1', '2.0-SNAPSHOT', '2.0', '10.0', null]],
  ["v < '2.0'", VERSIONS, ['1.0', '1', '1.0.1', '2.0-SNAPSHOT']],
  ["v <= '2.0'", VERSIONS, ['1.0', '1', '1.0.1', '2.0-SNAPSHOT', '2.0']],
  ["v > '1.0.1'", VERSIONS, ['2.0-SNAPSHOT', '2.0', '10.0']],
  ["v >= '2.0'", VERSIONS, ['2.0', '10.0']],
  ['v = null', VERSIONS, [null]],
  ['v != null', VERSIONS, ['1.0', '1', '1.0.1', '2.0-SNAPSHOT', '2.0', '10.0']],
  ["v LIKE '^1\\.'", VERSIONS, ['1.0', '1.0.1']],
  ["v CONTAINS 'snapshot'", VERSIONS, ['2.0-SNAPSHOT']],
  ["v IN ('1.0.0', '10')", VERSIONS, ['1.0', '1', '10.0']],
  ["v RANGE ('1.0.1', '2.0')", VERSIONS, ['1.0.1', '2.0-SNAPSHOT', '2.0']],
  // enum
  ["e = 'A'", ENUMS, ['A']],
  ["e != 'A'", ENUMS, ['B', 'C', null]],
  ["e IN ('A', 'C')", ENUMS, ['A', 'C']],
  ['e = null', ENUMS, [null]],
  ['e != null', ENUMS, ['A', 'B', 'C']],
  // integer
  ['i = 2', INTEGERS, [2]],
  ['i != 2', INTEGERS, [1, 3, -5, null]],
  ['i < 2', INTEGERS, [1, -5]],
  ['i <= 2', INTEGERS, [1, 2, -5]],
  ['i > 1', INTEGERS, [2, 3]],
  ['i >= 2', INTEGERS, [2, 3]],
  ['i = null', INTEGERS, [null]],
  ['i != null', INTEGERS, [1, 2, 3, -5]],
  ['i IN (1, 3)', INTEGERS, [1, 3]],
  ['i RANGE (-5, 1)', INTEGERS, [1, -5]],
  // number: strict bounds stay strict next to decimals
  ['n = 7.5', NUMBERS, [7.5]],
  ['n != 7.5', NUMBERS, [7.4999, 10, -0.5, null]],
  ['n < 7.5', NUMBERS, [7.4999, -0.5]],
  ['n <= 7.5', NUMBERS, [7.5, 7.4999, -0.5]],
  ['n > 7.4999', NUMBERS, [7.5, 10]],
  ['n >= -0.5', NUMBERS, [7.5, 7.4999, 10, -0.5]],
  ['n > -0.5', NUMBERS, [7.5, 7.4999, 10]],
  ['n = null', NUMBERS, [null]],
  ['n != null', NUMBERS, [7.5, 7.4999, 10, -0.5]],
  ['n IN (10, -0.5)', NUMBERS, [10, -0.5]],
  ['n RANGE (7.4999, 7.5)', NUMBERS, [7.5, 7.4999]],
  // time: a relative day is a whole day; `>=`/`<` use its start, `<=`/`>` its end
  ['t = 0d', TIMES, [T.todayStart, T.now, T.todayEnd]],
  ['t != 0d', TIMES, [T.yesterdayStart, T.yesterdayEnd, T.instant, T.longAgo, null]],
  ['t < 0d', TIMES, [T.yesterdayStart, T.yesterdayEnd, T.instant, T.longAgo]],
  ['t <= 1d', TIMES, [T.yesterdayStart, T.yesterdayEnd, T.instant, T.longAgo]],
  ['t > 1d', TIMES, [T.todayStart, T.now, T.todayEnd]],
  ['t >= 1d', TIMES, [T.yesterdayStart, T.yesterdayEnd, T.todayStart, T.now, T.todayEnd, T.instant]],
  ['t = null', TIMES, [null]],
  ['t != null', TIMES, Object.values(T)],
  ['t IN (0d, 1d)', TIMES, [T.yesterdayStart, T.yesterdayEnd, T.todayStart, T.now, T.todayEnd, T.instant]],
  ['t RANGE (1d, 1d)', TIMES, [T.yesterdayStart, T.yesterdayEnd, T.instant]],
  ['t RANGE (3m, 1d)', TIMES, [T.yesterdayStart, T.yesterdayEnd, T.instant]],
  // an instant is itself, whichever way it is written
  ["t = '2026-03-30T10:00:00.000Z'", TIMES, [T.instant]],
  ['t = 2026-03-30T12:00:00+02:00', TIMES, [T.instant]],
  ["t = '2026-03-30T10:00'", TIMES, [T.instant]],
  [`t = ${T.instant}`, TIMES, [T.instant]],
  ["t < '2026-03-30T10:00:00.000Z'", TIMES, [T.yesterdayStart, T.longAgo]],
  ["t <= '2026-03-30T10:00:00.000Z'", TIMES, [T.yesterdayStart, T.instant, T.longAgo]],
  ["t > '2026-03-31T12:34:56.789Z'", TIMES, [T.todayEnd]],
  // a bare date is a day, like a relative one
  ["t = '2026-03-30'", TIMES, [T.yesterdayStart, T.yesterdayEnd, T.instant]],
  ["t > '2026-03-30'", TIMES, [T.todayStart, T.now, T.todayEnd]],
];

describe('filter operators', () => {
  for (const [entry, values, expected] of operatorTable) {
    it(entry, () => assert.deepEqual(passing(entry, values), expected));
  }
});

describe('literals, whitespace and keyword case', () => {
  const table: [string, readonly Value[], Value[]][] = [
    ["s = 'it''s'", ["it's", 'its', "it''s"], ["it's"]],
    ["s = ''''", ["'", "''", ''], ["'"]],
    ["s = ''", ['', ' ', null], ['']],
    ["s CONTAINS ''''", ["it's", 'its'], ["it's"]],
    ["s = 'a b  c'", ['a b  c', 'a b c'], ['a b  c']],
    ["s='abc'", STRINGS, ['abc']],
    ["   s   =   'abc'   ", STRINGS, ['abc']],
    ["s\t=\n'abc'\r\n", STRINGS, ['abc']],
    ["s\u00a0=\u3000'abc'", STRINGS, ['abc']],
    ["s IN('abc','abd')", STRINGS, ['abc', 'abd']],
    ["s IN ( 'abc' , 'abd' )", STRINGS, ['abc', 'abd']],
    ["s RANGE('abc','abd')", STRINGS, ['abc', 'abd']],
    ["s like '^ab'", STRINGS, ['abc', 'abd']],
    ["s Like '^ab'", STRINGS, ['abc', 'abd']],
    ["s contains 'ab'", STRINGS, ['abc', 'ABC', 'abd']],
    ["s CoNtAiNs 'ab'", STRINGS, ['abc', 'ABC', 'abd']],
    ["s in ('abc')", STRINGS, ['abc']],
    ["s range ('abc', 'abd')", STRINGS, ['abc', 'abd']],
    ['s = NULL', STRINGS, [null]],
    ['s != Null', STRINGS, ['abc', 'ABC', 'abd', '']],
    ["s = 'null'", ['null', null], ['null']],
    ["s = 'LIKE'", ['LIKE', 'like'], ['LIKE']],
    ["s = 'a,b)'", ['a,b)'], ['a,b)']],
    ['i = -5', INTEGERS, [-5]],
    ['i=-5', INTEGERS, [-5]],
    ['i >= -0', INTEGERS, [1, 2, 3]],
    ['n = 10.0', NUMBERS, [10]],
    ['n = 0007.5', NUMBERS, [7.5]],
    ['t = 0D', TIMES, [T.todayStart, T.now, T.todayEnd]],
    ['t = 2026-03-30t10:00:00z', TIMES, [T.instant]],
    ["t = ' 1d '", TIMES, [T.yesterdayStart, T.yesterdayEnd, T.instant]],
  ];
  for (const [entry, values, expected] of table) {
    it(JSON.stringify(entry), () => assert.deepEqual(passing(entry, values), expected));
  }
});

describe('unicode literals', () => {
  const table: [string, readonly Value[], Value[]][] = [
    ["s = 'Zürich'", ['Zürich', 'Zurich', 'zürich'], ['Zürich']],
    ["s CONTAINS 'ZÜRICH'", ['Zürich', 'Zurich', 'zürich'], ['Zürich', 'zürich']],
    ["s = '東京'", ['東京', '京都'], ['東京']],
    ["s IN ('😀', 'ß')", ['😀', 'ß', 'ss'], ['😀', 'ß']],
    ["s LIKE '^Ω+$'", ['ΩΩ', 'Ω1'], ['ΩΩ']],
    ["s LIKE '^.$'", ['é', 'e\u0301'], ['é']],
    // code-point order: U+1F600 sorts after U+FFFD although its UTF-16 form starts with 0xD83D
    ["s > '\uFFFD'", ['😀', '\uFFFC', 'z'], ['😀']],
  ];
  for (const [entry, values, expected] of table) {
    it(entry, () => assert.deepEqual(passing(entry, values), expected));
  }
});

describe('catalogues', () => {
  it('jvmInventory: tags, system properties, AppEnv, state, times', () => {
    const { conditions } = compileFilter(
      ["tags.env = 'prod'", "systemProperties.java.vm.vendor CONTAINS 'azul'", "AppEnv != null", "state IN ('RUNNING', 'OFFLINE')", 'lastHeardTime > 1d'],
      jvmInventoryFields,
      NOW,
    );
    assert.deepEqual(conditions.map((c) => [c.entry, c.field.name, c.field.type, c.field.scope, c.op]), [
      [0, 'tags.env', 'string', 'vm', '='],
      [1, 'systemProperties.java.vm.vendor', 'string', 'vm', 'CONTAINS'],
      [2, 'AppEnv', 'string', 'vm', '!= null'],
      [3, 'state', 'enum', 'vm', 'IN'],
      [4, 'lastHeardTime', 'time', 'vm', '>'],
    ]);
    assert.equal(conditions[0].field.tagKey, 'env');
    assert.equal(conditions[1].field.propertyKey, 'java.vm.vendor');
    assert.equal(conditions[2].field.tagKey, 'AppEnv');
  });

  it('component: cveId presence and equality, score, componentVersion in Maven order', () => {
    assert.deepEqual(passing('cveId = null', ['CVE-2021-44228', null], componentFields), [null]);
    assert.deepEqual(passing('cveId != null', ['CVE-2021-44228', null], componentFields), ['CVE-2021-44228']);
    assert.deepEqual(passing("cveId = 'CVE-2021-44228'", ['CVE-2021-44228', 'CVE-2021-45046'], componentFields), ['CVE-2021-44228']);
    assert.deepEqual(passing('score >= 9', [10, 9, 8.9, null], componentFields), [10, 9]);
    assert.deepEqual(passing("componentVersion < '2.17.0'", ['2.9.1', '2.17.0', '2.16.0', '2.17.0-rc1'], componentFields), ['2.9.1', '2.16.0', '2.17.0-rc1']);
    assert.deepEqual(passing("state = 'OFFLINE'", ['OFFLINE', 'RUNNING'], componentFields), ['OFFLINE']);
    const [tag] = compileFilter(["tags.team = 'a'"], componentFields, NOW).conditions;
    assert.equal(tag.field.scope, 'vm');
  });

  it('codeInventory: field:value is a raw, case-sensitive substring match', () => {
    assert.deepEqual(passing('className:com/acme/Foo$1', ['com/acme/Foo$1', 'com/acme/foo$1', 'x/com/acme/Foo$12'], codeInventoryFields), ['com/acme/Foo$1', 'x/com/acme/Foo$12']);
    assert.deepEqual(passing('methodName:run(int, java.lang.String)', ['run(int, java.lang.String)', 'run(int,java.lang.String)'], codeInventoryFields), ['run(int, java.lang.String)']);
    assert.deepEqual(passing("sourceName:it's a 'jar' = x", ["it's a 'jar' = x"], codeInventoryFields), ["it's a 'jar' = x"]);
    assert.deepEqual(passing('sourceName: log4j', [' log4j-core.jar', 'log4j-core.jar'], codeInventoryFields), [' log4j-core.jar']);
    const [condition] = compileFilter(['sourceName:x'], codeInventoryFields, NOW).conditions;
    assert.equal(condition.op, ':');
  });

  it('codeInventory: the full grammar on sourceName, className, methodName and AppEnv', () => {
    assert.deepEqual(passing("sourceName CONTAINS 'LOG4J'", ['log4j-core.jar', 'guava.jar'], codeInventoryFields), ['log4j-core.jar']);
    assert.deepEqual(passing("className LIKE '^com/acme/'", ['com/acme/A', 'org/acme/B'], codeInventoryFields), ['com/acme/A']);
    assert.deepEqual(passing("methodName = 'main([Ljava/lang/String;)'", ['main([Ljava/lang/String;)', 'main()'], codeInventoryFields), ['main([Ljava/lang/String;)']);
    assert.deepEqual(passing("AppEnv IN ('prod', '')", ['prod', '', 'dev'], codeInventoryFields), ['prod', '']);
  });

  it('no filter, an empty filter', () => {
    assert.deepEqual(compileFilter(undefined, catalog, NOW), { conditions: [] });
    assert.deepEqual(compileFilter([], catalog, NOW), { conditions: [] });
  });

  it('entries keep their index', () => {
    const { conditions } = compileFilter(["s = 'a'", 'i = 1', 'n = null'], catalog, NOW);
    assert.deepEqual(conditions.map((c) => [c.entry, c.field.name, c.op]), [[0, 's', '='], [1, 'i', '='], [2, 'n', '= null']]);
  });
});

const TIME_FORMS = ['Xd (days before now)', 'Xm (months before now)', 'yyyy-MM-ddTHH:mm:ss.SSS with an optional zone (Z, +02:00, +0200)', 'epoch milliseconds'];
const LITERALS = ['a quoted string', 'a number', 'an ISO 8601 time', 'a relative time (Xd or Xm)'];

interface ErrorCase {
  name: string;
  entries: unknown;
  catalog?: FieldCatalog;
  entry?: number;
  column: number;
  text: string;
  expected: string[] | ((expected: string[]) => boolean);
}

const errorTable: ErrorCase[] = [
  { name: 'not an array', entries: "s = 'a'", column: 1, text: '"s = \'a\'"', expected: ['an array of strings'] },
  { name: 'null for the array', entries: null, column: 1, text: 'null', expected: ['an array of strings'] },
  { name: 'an entry that is not a string', entries: ["s = 'a'", 3], entry: 1, column: 1, text: '3', expected: ['a string'] },
  { name: 'empty entry', entries: [''], entry: 0, column: 1, text: '', expected: ['a field name'] },
  { name: 'blank entry', entries: ['   '], entry: 0, column: 4, text: '', expected: ['a field name'] },
  { name: 'unexpected character', entries: ["s ~ 'a'"], entry: 0, column: 3, text: '~', expected: (e) => e.length === 1 },
  { name: 'unexpected character in another script', entries: ["s = 'é' é"], entry: 0, column: 9, text: 'é', expected: (e) => e.length === 1 },
  { name: 'unterminated string', entries: ["s = 'abc"], entry: 0, column: 5, text: "'abc", expected: ["a closing quote (')"] },
  { name: 'escaped quote at the end', entries: ["s = 'abc''"], entry: 0, column: 10, text: "'", expected: ["a closing quote (')"] },
  { name: 'missing operator', entries: ['s'], entry: 0, column: 2, text: '', expected: ['=', '!=', '<', '<=', '>', '>=', 'LIKE', 'CONTAINS', 'IN', 'RANGE'] },
  { name: 'misspelt operator', entries: ["s LIKES 'a'"], entry: 0, column: 3, text: 'LIKES', expected: ['=', '!=', '<', '<=', '>', '>=', 'LIKE', 'CONTAINS', 'IN', 'RANGE'] },
  { name: 'missing literal', entries: ['s = '], entry: 0, column: 5, text: '', expected: ['NULL', ...LITERALS] },
  { name: 'unquoted string', entries: ['s = abc'], entry: 0, column: 5, text: 'abc', expected: ['NULL', ...LITERALS] },
  { name: 'double-quoted string', entries: ['s = "abc"'], entry: 0, column: 5, text: '"', expected: (e) => e.length === 1 },
  { name: 'null with an ordering operator', entries: ['i < null'], entry: 0, column: 5, text: 'null', expected: LITERALS },
  { name: 'redundant input', entries: ["s = 'a' 'b'"], entry: 0, column: 9, text: "'b'", expected: ['end of the entry'] },
  { name: 'AND is not a keyword: entries are ANDed', entries: ["s = 'a' AND i = 1"], entry: 0, column: 9, text: 'AND', expected: ['end of the entry'] },
  { name: 'empty IN list', entries: ['s IN ()'], entry: 0, column: 7, text: ')', expected: LITERALS },
  { name: 'IN without parentheses', entries: ["s IN 'a'"], entry: 0, column: 6, text: "'a'", expected: ['('] },
  { name: 'trailing comma in IN', entries: ["s IN ('a',)"], entry: 0, column: 11, text: ')', expected: LITERALS },
  { name: 'unclosed IN', entries: ["s IN ('a'"], entry: 0, column: 10, text: '', expected: [')'] },
  { name: 'RANGE with one bound', entries: ["s RANGE ('a')"], entry: 0, column: 13, text: ')', expected: [','] },
  { name: 'RANGE with three bounds', entries: ["s RANGE ('a', 'b', 'c')"], entry: 0, column: 18, text: ',', expected: [')'] },
  { name: 'LIKE with a number', entries: ['s LIKE 1'], entry: 0, column: 8, text: '1', expected: ['a quoted string'] },
  { name: 'unknown field', entries: ["hostName = 'a'", "hostname = 'a'"], catalog: jvmInventoryFields, entry: 1, column: 1, text: 'hostname', expected: (e) => e.includes('hostName') && e.includes('tags.<key>') && !e.includes('year') },
  { name: 'unknown field in the component catalogue', entries: ["startTime > 1d"], catalog: componentFields, entry: 0, column: 1, text: 'startTime', expected: (e) => e.includes('cveId') && e.includes('score') },
  { name: 'invalid tag key', entries: ["tags.1x = 'a'"], catalog: jvmInventoryFields, entry: 0, column: 1, text: 'tags.1x', expected: (e) => e.includes('tags.<key>') },
  { name: 'a time bucket is not a filter field', entries: ['year = 2026'], catalog: jvmInventoryFields, entry: 0, column: 1, text: 'year', expected: (e) => e.includes('vmId') && !e.includes('year') },
  { name: 'firstSeen is not a filter field', entries: ['firstSeen > 1d'], catalog: codeInventoryFields, entry: 0, column: 1, text: 'firstSeen', expected: ['sourceName', 'className', 'methodName', 'AppEnv'] },
  { name: 'LIKE on an integer', entries: ["i LIKE '1'"], entry: 0, column: 3, text: 'LIKE', expected: ['=', '!=', '<', '<=', '>', '>=', '= null', '!= null', 'IN', 'RANGE'] },
  { name: 'CONTAINS on a number', entries: ["n CONTAINS '1'"], entry: 0, column: 3, text: 'CONTAINS', expected: (e) => !e.includes('CONTAINS') },
  { name: 'LIKE on a time', entries: ["t LIKE '2026'"], entry: 0, column: 3, text: 'LIKE', expected: (e) => !e.includes('LIKE') },
  { name: 'ordering on an enum', entries: ["e < 'B'"], entry: 0, column: 3, text: '<', expected: ['=', '!=', 'IN', '= null', '!= null'] },
  { name: 'RANGE on an enum', entries: ["e RANGE ('A', 'B')"], entry: 0, column: 3, text: 'RANGE', expected: ['=', '!=', 'IN', '= null', '!= null'] },
  { name: 'LIKE on cveId', entries: ["cveId LIKE 'CVE'"], catalog: componentFields, entry: 0, column: 7, text: 'LIKE', expected: ['=', '!=', '= null', '!= null', 'IN'] },
  { name: 'field:value outside code reports', entries: ['hostName:web'], catalog: jvmInventoryFields, entry: 0, column: 9, text: ':', expected: (e) => !e.includes(':') && e.includes('CONTAINS') },
  { name: 'field:value on AppEnv', entries: ['AppEnv:prod'], catalog: codeInventoryFields, entry: 0, column: 7, text: ':', expected: (e) => !e.includes(':') },
  { name: 'field:value with no value', entries: ['sourceName:'], catalog: codeInventoryFields, entry: 0, column: 12, text: '', expected: ['a value'] },
  { name: 'a parse error outside code reports does not offer ":"', entries: ['hostName web'], catalog: jvmInventoryFields, entry: 0, column: 10, text: 'web', expected: (e) => !e.includes(':') && e.includes('=') },
  { name: 'a parse error in code reports offers ":"', entries: ['className Foo'], catalog: codeInventoryFields, entry: 0, column: 11, text: 'Foo', expected: (e) => e[0] === ':' },
  { name: 'number for a string', entries: ['s = 1'], entry: 0, column: 5, text: '1', expected: ['a quoted string'] },
  { name: 'number for a version', entries: ['v > 2'], entry: 0, column: 5, text: '2', expected: ['a quoted string'] },
  { name: 'relative time for a string', entries: ['s = 3d'], entry: 0, column: 5, text: '3d', expected: ['a quoted string'] },
  { name: 'string for an integer', entries: ["i = '1'"], entry: 0, column: 5, text: "'1'", expected: ['an integer'] },
  { name: 'decimal for an integer', entries: ['i IN (1, 1.5)'], entry: 0, column: 10, text: '1.5', expected: ['an integer'] },
  { name: 'string for a number', entries: ["n >= '7'"], entry: 0, column: 6, text: "'7'", expected: ['a number'] },
  { name: 'time for a number', entries: ['n >= 2026-01-01'], entry: 0, column: 6, text: '2026-01-01', expected: ['a number'] },
  { name: 'enum value', entries: ["e = 'a'"], entry: 0, column: 5, text: "'a'", expected: ["'A'", "'B'", "'C'"] },
  { name: 'enum value in IN', entries: ["state IN ('RUNNING', 'STOPPED')"], catalog: jvmInventoryFields, entry: 0, column: 22, text: "'STOPPED'", expected: ["'RUNNING'", "'OFFLINE'", "'TERMINATED'"] },
  { name: 'invalid regular expression', entries: ["s LIKE 'a('"], entry: 0, column: 8, text: "'a('", expected: ['a JavaScript regular expression'] },
  { name: 'invalid regular expression quantifier', entries: ["s LIKE '*'"], entry: 0, column: 8, text: "'*'", expected: ['a JavaScript regular expression'] },
  // V8's linear-time engine cannot run these: on the backtracking engine a match could take hours.
  { name: 'backreference', entries: ["s LIKE '^zz(.|.)*\\1!$'"], entry: 0, column: 8, text: "'^zz(.|.)*\\1!$'", expected: ['a regular expression without backreferences, lookarounds or large counted repetitions'] },
  { name: 'named backreference', entries: ["s LIKE '(?<x>a)\\k<x>'"], entry: 0, column: 8, text: "'(?<x>a)\\k<x>'", expected: ['a regular expression without backreferences, lookarounds or large counted repetitions'] },
  { name: 'lookahead', entries: ["s LIKE '(?=a)a'"], entry: 0, column: 8, text: "'(?=a)a'", expected: ['a regular expression without backreferences, lookarounds or large counted repetitions'] },
  { name: 'lookbehind', entries: ["s LIKE '(?<!a)b'"], entry: 0, column: 8, text: "'(?<!a)b'", expected: ['a regular expression without backreferences, lookarounds or large counted repetitions'] },
  { name: 'large counted repetition', entries: ["s LIKE '(a|a){1,200}!'"], entry: 0, column: 8, text: "'(a|a){1,200}!'", expected: ['a regular expression without backreferences, lookarounds or large counted repetitions'] },
  { name: 'RANGE bounds reversed (string)', entries: ["s RANGE ('b', 'a')"], entry: 0, column: 10, text: "'b'", expected: ['a low bound not above the high bound'] },
  { name: 'RANGE bounds reversed (version)', entries: ["v RANGE ('2.0', '2.0-SNAPSHOT')"], entry: 0, column: 10, text: "'2.0'", expected: ['a low bound not above the high bound'] },
  { name: 'RANGE bounds reversed (number)', entries: ['n RANGE (2, 1)'], entry: 0, column: 10, text: '2', expected: ['a low bound not above the high bound'] },
  { name: 'RANGE bounds reversed (time)', entries: ['t RANGE (0d, 1d)'], entry: 0, column: 10, text: '0d', expected: ['a low bound not above the high bound'] },
  { name: 'quoted text that is no time, positioned inside the quotes', entries: ["t > 'yesterday'"], entry: 0, column: 6, text: 'yesterday', expected: TIME_FORMS },
  { name: 'impossible date in a quoted time', entries: ["t = '2026-02-29'"], entry: 0, column: 6, text: '2026-02-29', expected: TIME_FORMS },
  { name: 'impossible date unquoted', entries: ['t = 2026-13-01'], entry: 0, column: 5, text: '2026-13-01', expected: TIME_FORMS },
  { name: 'decimal epoch', entries: ['t = 1.5'], entry: 0, column: 5, text: '1.5', expected: TIME_FORMS },
  { name: 'column counts code points', entries: ["s = '😀😀' x"], entry: 0, column: 10, text: 'x', expected: ['end of the entry'] },
];

describe('filter errors', () => {
  for (const c of errorTable) {
    it(c.name, () => {
      const error = rejection(c.entries, c.catalog);
      assert.equal(error.status, 400);
      assert.equal(error.code, 'BAD_FILTER');
      assert.equal(error.details?.length, 1);
      const detail = error.details[0];
      assert.equal(detail.parameter, 'filter');
      assert.equal(detail.entry, c.entry);
      assert.equal(detail.column, c.column);
      assert.equal(detail.text, c.text);
      const expected = detail.expected as string[];
      if (typeof c.expected === 'function') assert.ok(c.expected(expected), `expected: ${JSON.stringify(expected)}`);
      else assert.deepEqual(expected, c.expected);
      // The message names the same place.
      assert.match(error.message, new RegExp(`^filter${c.entry === undefined ? '' : `\\[${c.entry}\\]`} at column ${c.column}: `));
    });
  }
});

describe('hints for the commonest mistakes', () => {
  const message = (entry: string) => rejection([entry], componentFields).message;
  it('a value written without its quotes is shown quoted, dashes included', () => {
    assert.match(message('componentName = log4j-core'), /at column 22: unexpected character '-'; text is quoted, as in 'log4j-core';/);
    assert.match(message('componentName = log4j'), /at column 17: unexpected 'log4j'; text is quoted, as in 'log4j';/);
    assert.match(message('cveId = CVE-2021-44228'), /text is quoted, as in 'CVE-2021-44228';/);
    assert.match(message("componentName IN ('a', log4j-core)"), /text is quoted, as in 'log4j-core';/);
  });
  it('no quoting hint where no value was expected, or for a number', () => {
    assert.doesNotMatch(message("componentName = 'a' b-c"), /quoted/);
    assert.doesNotMatch(message('score > 7-'), /quoted/);
  });
  it('a mistyped field name gets the nearest one', () => {
    assert.match(message("componentNam = 'x'"), /unknown field 'componentNam' \(did you mean componentName\?\);/);
    assert.doesNotMatch(message("zzzz = 'x'"), /did you mean/);
  });
});

describe('long input', () => {
  it('an error echoes at most 200 characters of the offending text', () => {
    const long = 'x'.repeat(100_000);
    const error = rejection([`s = 'a' '${long}'`]);
    assert.equal(error.details?.[0].text, `'${'x'.repeat(199)}…`);
    assert.ok(error.message.length < 600);
  });

  it('a long literal compiles', () => {
    const long = 'ü'.repeat(100_000);
    assert.deepEqual(passing(`s = '${long}'`, [long, 'ü']), [long]);
  });
});
