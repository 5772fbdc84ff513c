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

/**
 * Where JSON.parse stopped: the position V8 names, else the first error jsonc-parser finds, else the end;
 * null when the text nests deeper than jsonc-parser's recursion can follow.
 */
function offsetOf(text: string, reason: string): number | null {
  const named = /at position (\d+)/.exec(reason);
  if (named !== null) return Math.min(Number(named[1]), text.length);
  const errors: ParseError[] = [];
  try {
    scanJson(text, errors, STRICT);
  } catch (error) {
    if (error instanceof RangeError) return null;
    throw error;
  }
  return errors.length > 0 ? errors[0].offset : text.length;
}

/** The first place where the text's arrays and objects nest deepest, and how deep (strings skipped). */
function deepestPoint(text: string): { offset: number; depth: number } {
  let depth = 0;
  let deepest = { offset: 0, depth: 0 };
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > deepest.depth) deepest = { offset: i, depth };
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return deepest;
}

/** JSON.parse, but a failure is a JsonSyntaxError that says where the text breaks. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    let reason = (error as Error).message;
    // V8 recurses: nesting deeper than the stack is a RangeError ("Maximum call stack size exceeded").
    let offset = error instanceof RangeError ? null : offsetOf(text, reason);
    if (offset === null) {
      const deepest = deepestPoint(text);
      offset = deepest.offset;
      reason = `arrays and objects nest ${deepest.depth} levels deep here, too deep to read`;
    }
    const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
    let line = 1;
    for (let at = text.indexOf('\n'); at !== -1 && at < lineStart; at = text.indexOf('\n', at + 1)) line++;
    throw new JsonSyntaxError(reason, offset, line, offset - lineStart + 1);
  }
}
