// LIKE patterns come from users, and V8's backtracking engine takes exponential time on some of them
// ('(a+)+$' over 'aaaa…!'): one report would hold its worker thread until the report timeout. With this
// V8 flag a regular expression that backtracks too often (V8's default: 50,000 times) switches to V8's
// linear-time engine for that match, so every match is bounded while ordinary patterns keep the fast
// engine. V8 flags are per process: set here, before any LIKE pattern is compiled, on the main thread and
// in every worker. Deno's node:v8 ignores it: run Deno with the same flag in --v8-flags (README).
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');

/** Longer LIKE patterns are refused; none of a real filter comes near it. */
export const MAX_PATTERN_LENGTH = 1024;

export function boundedRegExp(source: string): RegExp {
  if (source.length > MAX_PATTERN_LENGTH) throw new SyntaxError(`the pattern is longer than ${MAX_PATTERN_LENGTH} characters`);
  return new RegExp(source);
}
