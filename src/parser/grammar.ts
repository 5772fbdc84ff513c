// The one Chevrotain parser of the query language: filter entries, time expressions, groupBy and sortBy entries.
import { EmbeddedActionsParser, EOF } from './chevrotain.ts';
import type { ILexingError, IRecognitionException, IToken, TokenType } from 'chevrotain';
import {
  Asc, Colon, Comma, Contains, Desc, Equal, Greater, GreaterEqual, Identifier, In, IsoTime, Less, LessEqual,
  lexerDefinition, Like, LParen, NotEqual, Null, NumberLiteral, queryLexer, Range, RawValue, RelativeTime, RParen,
  StringLiteral,
} from './lexer.ts';
import { Problem } from './problem.ts';

export type Operator = '=' | '!=' | '<' | '<=' | '>' | '>=' | '= null' | '!= null' | 'LIKE' | 'CONTAINS' | 'IN' | 'RANGE' | ':';

/** A filter entry as written: the literals are still tokens, typed later against the field. */
export interface FilterAst {
  field: IToken;
  op: Operator;
  opToken: IToken;
  literals: IToken[];
}

export interface SortByAst {
  field: IToken;
  direction: IToken;
}

function labelOf(type: TokenType): string {
  return type === EOF ? 'end of the entry' : (type.LABEL ?? type.name);
}

function labels(types: TokenType[]): string {
  return JSON.stringify([...new Set(types.map(labelOf))]);
}

// Chevrotain hands only a message string from this provider to the recorded exception, so the list of
// expected tokens travels as JSON and `parseProblem` reads it back into the error's `expected`.
const expectedListProvider = {
  buildMismatchTokenMessage: ({ expected }: { expected: TokenType }) => labels([expected]),
  buildNotAllInputParsedMessage: () => labels([EOF]),
  buildNoViableAltMessage: ({ expectedPathsPerAlt }: { expectedPathsPerAlt: TokenType[][][] }) =>
    labels(expectedPathsPerAlt.flatMap((paths) => paths.map((path) => path[0]))),
  buildEarlyExitMessage: ({ expectedIterationPaths }: { expectedIterationPaths: TokenType[][] }) =>
    labels(expectedIterationPaths.map((path) => path[0])),
};

class QueryParser extends EmbeddedActionsParser {
  constructor() {
    super(lexerDefinition, { recoveryEnabled: false, errorMessageProvider: expectedListProvider });
    this.performSelfAnalysis();
  }

  literal = this.RULE('literal', (): IToken =>
    this.OR([
      { ALT: () => this.CONSUME(StringLiteral) },
      { ALT: () => this.CONSUME(NumberLiteral) },
      { ALT: () => this.CONSUME(IsoTime) },
      { ALT: () => this.CONSUME(RelativeTime) },
    ]),
  );

  // `=` and `!=` take either NULL or a literal.
  equality = this.RULE('equality', (): { op: Operator; opToken: IToken; literals: IToken[] } => {
    const opToken = this.OR([{ ALT: () => this.CONSUME(Equal) }, { ALT: () => this.CONSUME(NotEqual) }]);
    const negated = opToken.tokenType === NotEqual;
    return this.OR2([
      { ALT: () => ({ op: negated ? '!= null' : '= null', opToken, literals: [this.CONSUME(Null)] }) },
      { ALT: () => ({ op: negated ? '!=' : '=', opToken, literals: [this.SUBRULE(this.literal)] }) },
    ]);
  });

  comparison = this.RULE('comparison', (): { op: Operator; opToken: IToken; literals: IToken[] } => {
    const opToken = this.OR([
      { ALT: () => this.CONSUME(Less) },
      { ALT: () => this.CONSUME(LessEqual) },
      { ALT: () => this.CONSUME(Greater) },
      { ALT: () => this.CONSUME(GreaterEqual) },
    ]);
    return { op: opToken.image as Operator, opToken, literals: [this.SUBRULE(this.literal)] };
  });

  textMatch = this.RULE('textMatch', (): { op: Operator; opToken: IToken; literals: IToken[] } => {
    const opToken = this.OR([{ ALT: () => this.CONSUME(Like) }, { ALT: () => this.CONSUME(Contains) }]);
    const op: Operator = opToken.tokenType === Like ? 'LIKE' : 'CONTAINS';
    return { op, opToken, literals: [this.CONSUME(StringLiteral)] };
  });

  inList = this.RULE('inList', (): { op: Operator; opToken: IToken; literals: IToken[] } => {
    const opToken = this.CONSUME(In);
    const literals: IToken[] = [];
    this.CONSUME(LParen);
    this.AT_LEAST_ONE_SEP({ SEP: Comma, DEF: () => literals.push(this.SUBRULE(this.literal)) });
    this.CONSUME(RParen);
    return { op: 'IN', opToken, literals };
  });

  range = this.RULE('range', (): { op: Operator; opToken: IToken; literals: IToken[] } => {
    const opToken = this.CONSUME(Range);
    this.CONSUME(LParen);
    const low = this.SUBRULE(this.literal);
    this.CONSUME(Comma);
    const high = this.SUBRULE2(this.literal);
    this.CONSUME(RParen);
    return { op: 'RANGE', opToken, literals: [low, high] };
  });

  // decisions §6.2 and §8: `field op literal`, or the code reports' `field:value`.
  filterEntry = this.RULE('filterEntry', (): FilterAst => {
    const field = this.CONSUME(Identifier);
    const rest = this.OR([
      { ALT: () => ({ op: ':' as Operator, opToken: this.CONSUME(Colon), literals: [this.CONSUME(RawValue)] }) },
      { ALT: () => this.SUBRULE(this.equality) },
      { ALT: () => this.SUBRULE(this.comparison) },
      { ALT: () => this.SUBRULE(this.textMatch) },
      { ALT: () => this.SUBRULE(this.inList) },
      { ALT: () => this.SUBRULE(this.range) },
    ]);
    return { field, ...rest };
  });

  // decisions §6.1: `Xd`, `Xm`, ISO 8601 or epoch ms.
  timeExpression = this.RULE('timeExpression', (): IToken =>
    this.OR([
      { ALT: () => this.CONSUME(IsoTime) },
      { ALT: () => this.CONSUME(RelativeTime) },
      { ALT: () => this.CONSUME(NumberLiteral) },
    ]),
  );

  groupByEntry = this.RULE('groupByEntry', (): IToken => this.CONSUME(Identifier));

  sortByEntry = this.RULE('sortByEntry', (): SortByAst => {
    const field = this.CONSUME(Identifier);
    this.CONSUME(Equal);
    const direction = this.OR([{ ALT: () => this.CONSUME(Asc) }, { ALT: () => this.CONSUME(Desc) }]);
    return { field, direction };
  });
}

// Self-analysis is the costly part of a Chevrotain parser, so one instance serves every call; parsing is
// synchronous, and `input` resets its state.
const parser = new QueryParser();

/**
 * How to write the word starting at `start`, which a user most likely meant as a value written without its
 * quotes (`componentName = log4j-core`, `cveId = CVE-2021-44228`), when it starts like a field name.
 */
function quotingHint(text: string, start: number): string {
  const word = /^[\w.-]*/.exec(text.slice(start))![0];
  return /^[A-Za-z_]/.test(word) ? `; text is quoted, as in '${word}'` : '';
}

function lexProblem(text: string, error: ILexingError): Problem {
  if (text[error.offset] === "'") {
    return new Problem('unterminated string literal', error.offset, text.slice(error.offset), ["a closing quote (')"]);
  }
  const bad = text.substr(error.offset, error.length);
  // A character no token takes, inside a word after an operator: the dash of log4j-core.
  const start = error.offset - /[\w.-]*$/.exec(text.slice(0, error.offset))![0].length;
  const hint = /(?:=|<|>|\(|,)\s*$/.test(text.slice(0, start)) ? quotingHint(text, start) : '';
  return new Problem(`unexpected character '${bad}'${hint}`, error.offset, bad, ['a field name, an operator, a literal, a parenthesis or a comma']);
}

function parseProblem(text: string, error: IRecognitionException): Problem {
  const token = error.token;
  const expected = JSON.parse(error.message) as string[];
  if (token.tokenType === EOF) return new Problem('unexpected end of the entry', text.length, '', expected);
  const hint = token.tokenType === Identifier && expected.includes('a quoted string') ? quotingHint(text, token.startOffset) : '';
  return new Problem(`unexpected '${token.image}'${hint}`, token.startOffset, token.image, expected);
}

function run<T>(text: string, rule: (p: QueryParser) => T): T {
  const lexed = queryLexer.tokenize(text);
  if (lexed.errors.length > 0) throw lexProblem(text, lexed.errors[0]);
  parser.input = lexed.tokens;
  const result = rule(parser);
  if (parser.errors.length > 0) throw parseProblem(text, parser.errors[0]);
  return result;
}

export function parseFilterEntry(text: string): FilterAst {
  return run(text, (p) => p.filterEntry());
}

export function parseTimeExpression(text: string): IToken {
  return run(text, (p) => p.timeExpression());
}

export function parseGroupByEntry(text: string): IToken {
  return run(text, (p) => p.groupByEntry());
}

export function parseSortByEntry(text: string): SortByAst {
  return run(text, (p) => p.sortByEntry());
}

/** The value of a string literal token: without its quotes, `''` read as one quote. */
export function stringValue(token: IToken): string {
  return token.image.slice(1, -1).replaceAll("''", "'");
}
