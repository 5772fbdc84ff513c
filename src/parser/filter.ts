// Compiles a report's `filter` array once into typed conditions (decisions §6.2, §8).
import type { IToken } from 'chevrotain';
import { boundedRegExp, UnboundedPatternError } from './bounded-regexp.ts';
import type { FieldCatalog, FieldDef, FieldType } from './fields.ts';
import { CODE_PATH } from './fields.ts';
import type { FilterAst, Operator } from './grammar.ts';
import { parseFilterEntry, stringValue } from './grammar.ts';
import { NumberLiteral, StringLiteral } from './lexer.ts';
import { containsTest, likeTest, numericPredicate, numericTest, orderOf, textTest } from './predicate.ts';
import type { NumericTest, Test } from './predicate.ts';
import { didYouMean, entriesOf, Problem, withOrigin } from './problem.ts';
import type { TimeSpan } from './time.ts';
import { timeSpanOfText, timeSpanOfToken } from './time.ts';

export interface Condition {
  /** Index of the filter entry this condition came from. */
  entry: number;
  field: FieldDef;
  op: Operator;
  /** The condition on one value; `null` is a missing value. */
  test(value: string | number | null): boolean;
  /** For number, integer and time fields: the same condition as intervals, which number columns evaluate. */
  numeric?: NumericTest;
}

export interface CompiledFilter {
  conditions: Condition[];
}

/**
 * A filter entry parsed and resolved at the edge (decisions §6.2): plain, serialisable data that a worker
 * thread (or another node) binds to predicates without parsing the entry again.
 */
export interface PlannedCondition {
  entry: number;
  /** The catalogue field's name (`tags.env`, `componentVersion`, …). */
  field: string;
  op: Operator;
  /** Textual fields: the literal values; a LIKE pattern's source; the raw text of `field:value`. */
  texts: string[];
  /** Number, integer and time fields: the literals as intervals, relative times resolved. */
  spans: TimeSpan[];
}

const ORDERED: readonly Operator[] = ['=', '!=', '<', '<=', '>', '>=', '= null', '!= null', 'IN', 'RANGE'];
const TEXTUAL: readonly Operator[] = [...ORDERED, 'LIKE', 'CONTAINS'];
const BY_TYPE: Record<FieldType, readonly Operator[]> = {
  string: TEXTUAL,
  version: TEXTUAL,
  enum: ['=', '!=', 'IN', '= null', '!= null'],
  integer: ORDERED,
  number: ORDERED,
  time: ORDERED,
};

function operatorsOf(field: FieldDef, catalog: FieldCatalog): Operator[] {
  const byType = BY_TYPE[field.type].filter((op) => field.operators === undefined || field.operators.includes(op));
  const codeForm = catalog.family === 'codeInventory' && (CODE_PATH as readonly string[]).includes(field.name);
  return codeForm ? [':', ...byType] : byType;
}

function filterableNames(catalog: FieldCatalog): string[] {
  return catalog.names().filter((name) => catalog.lookup(name)?.operators?.length !== 0);
}

function fieldOf(token: IToken, catalog: FieldCatalog): FieldDef {
  const field = catalog.lookup(token.image);
  if (field === undefined) {
    const names = filterableNames(catalog);
    throw new Problem(`unknown field '${token.image}'${didYouMean(token.image, names)}`, token.startOffset, token.image, names);
  }
  if (field.operators?.length === 0) {
    throw new Problem(`${field.name} cannot be filtered on`, token.startOffset, token.image, filterableNames(catalog));
  }
  return field;
}

function mismatch(token: IToken, field: FieldDef, expected: readonly string[]): Problem {
  return new Problem(`${field.name} (${field.type}) cannot be compared with ${token.image}`, token.startOffset, token.image, expected);
}

function textOf(token: IToken, field: FieldDef): string {
  if (token.tokenType !== StringLiteral) throw mismatch(token, field, ['a quoted string']);
  const value = stringValue(token);
  if (field.values !== undefined && !field.values.includes(value)) {
    throw new Problem(`${field.name} has no value ${token.image}`, token.startOffset, token.image, field.values.map((v) => `'${v}'`));
  }
  return value;
}

function spanOf(token: IToken, field: FieldDef, now: number): TimeSpan {
  if (field.type === 'time') {
    // A quoted time is read by the time grammar; its positions count from inside the quotes.
    if (token.tokenType === StringLiteral) {
      try {
        return timeSpanOfText(stringValue(token), now);
      } catch (error) {
        throw error instanceof Problem ? error.shifted(token.startOffset + 1) : error;
      }
    }
    return timeSpanOfToken(token, now);
  }
  const integer = field.type === 'integer';
  const valid = token.tokenType === NumberLiteral && (!integer || Number.isSafeInteger(Number(token.image)));
  if (!valid) throw mismatch(token, field, [integer ? 'an integer' : 'a number']);
  const value = Number(token.image);
  return { open: value, close: value };
}

function regExpOf(token: IToken, field: FieldDef): RegExp {
  const source = textOf(token, field);
  try {
    return boundedRegExp(source);
  } catch (error) {
    const reason = error instanceof SyntaxError ? error.message : 'Invalid regular expression';
    const expected = error instanceof UnboundedPatternError ? 'a regular expression without backreferences, lookarounds or large counted repetitions' : 'a JavaScript regular expression';
    throw new Problem(reason, token.startOffset, token.image, [expected]);
  }
}

function rangeProblem(ast: FilterAst): Problem {
  const low = ast.literals[0];
  return new Problem(`RANGE low bound ${low.image} is above its high bound ${ast.literals[1].image}`, low.startOffset, low.image, ['a low bound not above the high bound']);
}

/** The literals of a number, integer or time condition as intervals; RANGE bounds checked in order. */
function spansOf(ast: FilterAst, field: FieldDef, now: number): TimeSpan[] {
  const spans = ast.op === '= null' || ast.op === '!= null' ? [] : ast.literals.map((token) => spanOf(token, field, now));
  if (ast.op === 'RANGE' && spans[0].open > spans[1].close) throw rangeProblem(ast);
  return spans;
}

/** The literals of a textual condition; a LIKE pattern is compiled here once, to report its errors where it is. */
function textsOf(ast: FilterAst, field: FieldDef & { type: 'string' | 'version' | 'enum' }): string[] {
  const literal = ast.literals[0];
  switch (ast.op) {
    case 'LIKE':
      regExpOf(literal, field);
      return [textOf(literal, field)];
    case 'CONTAINS': return [textOf(literal, field)];
    // The raw rest of the entry, not a quoted literal (decisions §8).
    case ':': return [literal.image];
    case '= null':
    case '!= null': return [];
    default: {
      const values = ast.literals.map((token) => textOf(token, field));
      if (ast.op === 'RANGE' && orderOf(field.type)(values[0], values[1]) > 0) throw rangeProblem(ast);
      return values;
    }
  }
}

function isTextual(field: FieldDef): field is FieldDef & { type: 'string' | 'version' | 'enum' } {
  return field.type === 'string' || field.type === 'version' || field.type === 'enum';
}

function planEntry(text: string, entry: number, catalog: FieldCatalog, now: number): PlannedCondition {
  let ast: FilterAst;
  try {
    ast = parseFilterEntry(text);
  } catch (error) {
    // Only code reports know `field:value`; elsewhere the grammar's ':' alternative is noise.
    if (error instanceof Problem && catalog.family !== 'codeInventory' && error.expected.includes(':')) {
      throw new Problem(error.message, error.offset, error.text, error.expected.filter((e) => e !== ':'));
    }
    throw error;
  }
  const field = fieldOf(ast.field, catalog);
  const operators = operatorsOf(field, catalog);
  if (!operators.includes(ast.op)) {
    const op = ast.opToken;
    throw new Problem(`operator ${ast.op} does not apply to ${field.name} (${field.type})`, op.startOffset, op.image, operators);
  }
  return isTextual(field)
    ? { entry, field: field.name, op: ast.op, texts: textsOf(ast, field), spans: [] }
    : { entry, field: field.name, op: ast.op, texts: [], spans: spansOf(ast, field, now) };
}

/** The predicate of a planned textual condition. */
function textPredicate(planned: PlannedCondition, type: 'string' | 'version' | 'enum'): Test {
  const [first] = planned.texts;
  switch (planned.op) {
    case 'LIKE': return likeTest(boundedRegExp(first));
    case 'CONTAINS': return containsTest(first, false);
    case ':': return containsTest(first, true);
    case '= null':
    case '!= null': return textTest(planned.op, [], orderOf(type), true);
    default: return textTest(planned.op, planned.texts, orderOf(type), type !== 'version');
  }
}

/** Binds a planned condition to its catalogue field: builds its predicate, parses nothing. */
function bindCondition(planned: PlannedCondition, catalog: FieldCatalog): Condition {
  const field = catalog.lookup(planned.field);
  if (field === undefined) throw new Error(`a planned condition names ${planned.field}, which the ${catalog.family} catalogue lacks`);
  if (isTextual(field)) return { entry: planned.entry, field, op: planned.op, test: textPredicate(planned, field.type) };
  const numeric = numericTest(planned.op, planned.spans);
  return { entry: planned.entry, field, op: planned.op, test: numericPredicate(numeric), numeric };
}

/**
 * Parses and resolves `entries` (an array of strings, or undefined for no filter) once, at the edge, into
 * plain data: field names, operators and literal values, relative times resolved against `now` (epoch ms).
 * Entries are ANDed. Errors are BAD_FILTER ApiErrors at the position of the problem.
 */
export function planFilter(entries: unknown, catalog: FieldCatalog, now: number): PlannedCondition[] {
  return entriesOf(entries, 'BAD_FILTER', 'filter').map((text, entry) =>
    withOrigin({ code: 'BAD_FILTER', parameter: 'filter', source: text, entry }, () => planEntry(text, entry, catalog, now)),
  );
}

/** The conditions of a plan, bound to a catalogue: what kernels evaluate. */
export function bindFilter(planned: readonly PlannedCondition[], catalog: FieldCatalog): CompiledFilter {
  return { conditions: planned.map((condition) => bindCondition(condition, catalog)) };
}

/** planFilter then bindFilter, for callers that evaluate where they parse (tests, the parser bench). */
export function compileFilter(entries: unknown, catalog: FieldCatalog, now: number): CompiledFilter {
  return bindFilter(planFilter(entries, catalog, now), catalog);
}
