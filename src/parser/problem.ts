// A complaint about query text at a position, and how it becomes the 400 ApiError of decisions §10.
import { ApiError } from '../errors.ts';
import { nearest } from '../nearest.ts';

export type QueryErrorCode = 'BAD_FILTER' | 'BAD_GROUP_BY' | 'BAD_SORT_BY' | 'BAD_TIME';

/** Thrown inside the parser, which knows the text but not which request parameter or entry it came from. */
export class Problem extends Error {
  /** UTF-16 offset of the offending text in the parsed string. */
  readonly offset: number;
  readonly text: string;
  readonly expected: readonly string[];

  constructor(reason: string, offset: number, text: string, expected: readonly string[]) {
    super(reason);
    this.name = 'Problem';
    this.offset = offset;
    this.text = text;
    this.expected = expected;
  }

  /** The same problem found in a string that sits at `base` inside a larger one (a quoted time literal). */
  shifted(base: number): Problem {
    return new Problem(this.message, this.offset + base, this.text, this.expected);
  }
}

/** ` (did you mean X?)` after a name that is not one of `names` when one is near it, else nothing. */
export function didYouMean(name: string, names: readonly string[]): string {
  const suggestion = nearest(name, names);
  return suggestion === null ? '' : ` (did you mean ${suggestion}?)`;
}

/** Where the parsed text came from: the request parameter, its entry when the parameter is an array. */
export interface Origin {
  code: QueryErrorCode;
  parameter: string;
  source: string;
  entry?: number;
}

// Request bodies may be a megabyte: an error echoes at most this much of the offending text.
const ECHO_LIMIT = 200;

function clip(text: string): string {
  return text.length <= ECHO_LIMIT ? text : `${text.slice(0, ECHO_LIMIT)}…`;
}

function toApiError(problem: Problem, origin: Origin): ApiError {
  // Columns count code points, as a user counts characters, so a literal in another script does not skew them.
  const column = Array.from(origin.source.slice(0, problem.offset)).length + 1;
  const where = origin.entry === undefined ? origin.parameter : `${origin.parameter}[${origin.entry}]`;
  const expected = problem.expected.length === 1 ? problem.expected[0] : `one of ${problem.expected.join(', ')}`;
  const detail: Record<string, unknown> = { parameter: origin.parameter };
  if (origin.entry !== undefined) detail.entry = origin.entry;
  detail.column = column;
  detail.text = clip(problem.text);
  detail.expected = [...problem.expected];
  return new ApiError(origin.code, `${where} at column ${column}: ${clip(problem.message)}; expected ${expected}.`, [detail]);
}

/** Runs `parse` and turns its Problem into the ApiError of `origin`; any other error is a bug and propagates. */
export function withOrigin<T>(origin: Origin, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof Problem) throw toApiError(error, origin);
    throw error;
  }
}

/** A JSON-ish rendering of a value that is not a string, for the `text` of an error about its type. */
export function describe(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return typeof value;
  }
}

/** The strings of an array parameter (undefined: none), or the ApiError saying which entry is not one. */
export function entriesOf(value: unknown, code: QueryErrorCode, parameter: string): string[] {
  if (value === undefined) return [];
  const origin: Origin = { code, parameter, source: '' };
  if (!Array.isArray(value)) throw toApiError(new Problem(`${parameter} is not an array`, 0, describe(value), ['an array of strings']), origin);
  value.forEach((entry: unknown, index) => {
    if (typeof entry !== 'string') {
      throw toApiError(new Problem(`${parameter} entry is not a string`, 0, describe(entry), ['a string']), { ...origin, entry: index });
    }
  });
  return value as string[];
}
