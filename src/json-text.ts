// JSON text from users (request bodies, NDJSON lines, OSV files), parsed with where it breaks. V8's messages
// name a position in most cases, but not for an unexpected token (`Unexpected token ',', "[1,,2]" is not valid
// JSON`) nor for a text that ends too soon; jsonc-parser's scanner, run only on text that failed, locates those.
import { parse as scanJson } from 'jsonc-parser';
import type { ParseError } from 'jsonc-parser';

/** JSON that does not parse, and where: `offset` counts characters from the start, `line` and `column` from 1. */
export class JsonSyntaxError extends Error {
  readonly offset: number;
  readonly line: number;
  readonly column: number;

  constructor(reason: string, offset: number, line: number, column: number) {
    super(reason);
    this.name = 'JsonSyntaxError';
    this.offset = offset;
    this.line = line;
    this.column = column;
  }
}

/** Strict JSON, as JSON.parse reads it: no comments, no trailing commas, nothing after the value. */
const STRICT = { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false };

/** Where JSON.parse stopped: the position V8 names, else the first error jsonc-parser finds, else the end. */
function offsetOf(text: string, reason: string): number {
  const named = /at position (\d+)/.exec(reason);
  if (named !== null) return Math.min(Number(named[1]), text.length);
  const errors: ParseError[] = [];
  scanJson(text, errors, STRICT);
  return errors.length > 0 ? errors[0].offset : text.length;
}

/** JSON.parse, but a failure is a JsonSyntaxError that says where the text breaks. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const reason = (error as Error).message;
    const offset = offsetOf(text, reason);
    const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
    let line = 1;
    for (let at = text.indexOf('\n'); at !== -1 && at < lineStart; at = text.indexOf('\n', at + 1)) line++;
    throw new JsonSyntaxError(reason, offset, line, offset - lineStart + 1);
  }
}
