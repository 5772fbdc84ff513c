// The one lexer of the query language: tokens of filter entries, time expressions, groupBy and sortBy.
import { createToken, Lexer } from './chevrotain.ts';
import type { TokenType } from 'chevrotain';

export const WhiteSpace = createToken({ name: 'WhiteSpace', pattern: /\s+/, group: Lexer.SKIPPED });

// A field name, or a dynamic one: `tags.KEY`, `systemProperties.java.vm.vendor`.
export const Identifier = createToken({ name: 'Identifier', pattern: /[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_.-]+)?/, label: 'a field name' });

function keyword(word: string): TokenType {
  return createToken({ name: word, pattern: new RegExp(word, 'i'), longer_alt: Identifier, label: word });
}

export const Null = keyword('NULL');
export const Like = keyword('LIKE');
export const Contains = keyword('CONTAINS');
export const In = keyword('IN');
export const Range = keyword('RANGE');
export const Asc = keyword('ASC');
export const Desc = keyword('DESC');

// `''` inside the quotes is one quote (decisions §6.2).
export const StringLiteral = createToken({ name: 'StringLiteral', pattern: /'(?:[^']|'')*'/, label: 'a quoted string' });

// Before RelativeTime and Number, which match its leading digits: `2026-11-21T10:00:00.000+02:00`.
export const IsoTime = createToken({
  name: 'IsoTime',
  pattern: /\d{4}-\d{2}-\d{2}(?:[Tt]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:[Zz]|[+-]\d{2}(?::?\d{2})?)?)?/,
  label: 'an ISO 8601 time',
});
export const RelativeTime = createToken({ name: 'RelativeTime', pattern: /\d+[dDmM]/, label: 'a relative time (Xd or Xm)' });
export const NumberLiteral = createToken({ name: 'NumberLiteral', pattern: /-?\d+(?:\.\d+)?/, label: 'a number' });

export const NotEqual = createToken({ name: 'NotEqual', pattern: /!=/, label: '!=' });
export const LessEqual = createToken({ name: 'LessEqual', pattern: /<=/, label: '<=' });
export const GreaterEqual = createToken({ name: 'GreaterEqual', pattern: />=/, label: '>=' });
export const Less = createToken({ name: 'Less', pattern: /</, label: '<' });
export const Greater = createToken({ name: 'Greater', pattern: />/, label: '>' });
export const Equal = createToken({ name: 'Equal', pattern: /=/, label: '=' });
export const LParen = createToken({ name: 'LParen', pattern: /\(/, label: '(' });
export const RParen = createToken({ name: 'RParen', pattern: /\)/, label: ')' });
export const Comma = createToken({ name: 'Comma', pattern: /,/, label: ',' });

// The code-report form `field:value` takes the rest of the entry verbatim, whatever characters it holds
// (`methodName:foo(Ljava/lang/String;)V`), so the colon switches to a mode with one catch-all token.
export const Colon = createToken({ name: 'Colon', pattern: /:/, push_mode: 'raw', label: ':' });
export const RawValue = createToken({ name: 'RawValue', pattern: /[^]+/, label: 'a value' });

const defaultMode = [
  WhiteSpace, StringLiteral, IsoTime, RelativeTime, NumberLiteral,
  Null, Like, Contains, In, Range, Asc, Desc, Identifier,
  NotEqual, LessEqual, GreaterEqual, Less, Greater, Equal, LParen, RParen, Comma, Colon,
];

export const lexerDefinition = { modes: { default: defaultMode, raw: [RawValue] }, defaultMode: 'default' };

// The raw mode's catch-all cannot use Chevrotain's first-character optimisation (it is a complement set);
// the default mode keeps it.
export const queryLexer = new Lexer(lexerDefinition, { positionTracking: 'onlyOffset' });
