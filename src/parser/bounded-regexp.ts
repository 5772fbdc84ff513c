// LIKE patterns come from users, and V8's backtracking engine takes exponential time on some of them
// ('(a+)+$' over 'aaaa…!'): one report would hold its worker thread until the report timeout, and a match
// is synchronous, so neither the timeout nor a delete stops it. With the first V8 flag below a regular
// expression that backtracks too often (V8's default: 50,000 times) switches to V8's linear-time engine for
// that match, so ordinary patterns keep the fast engine and the rest are bounded. That engine cannot run
// every pattern (backreferences, lookarounds, large counted repetitions): such a pattern would stay on the
// backtracking engine, unbounded ('^zz(.|.)*\1!$' took 3.3 s over a 30-character host name, twice as long
// per character more), so it is refused. The second flag gives RegExp the flag `l` (linear engine only),
// which compiles exactly the patterns that engine runs: that is the check. V8 flags are per process: set
// here, before any LIKE pattern is compiled, on the main thread and in every worker. Deno's node:v8 ignores
// them: run Deno with the same flags in --v8-flags (README).
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');
setFlagsFromString('--enable-experimental-regexp-engine');

/** Longer LIKE patterns are refused; none of a real filter comes near it. */
export const MAX_PATTERN_LENGTH = 1024;

/** Whether this runtime has the flag `l`: Deno started without the flags has not, and nothing bounds its matches. */
const CAN_CHECK_LINEAR = (() => {
  try {
    new RegExp('', 'l');
    return true;
  } catch {
    return false;
  }
})();

/** A valid pattern that V8's linear-time engine cannot run. */
export class UnboundedPatternError extends SyntaxError {}

export function boundedRegExp(source: string): RegExp {
  if (source.length > MAX_PATTERN_LENGTH) throw new SyntaxError(`the pattern is longer than ${MAX_PATTERN_LENGTH} characters`);
  const regExp = new RegExp(source);
  if (CAN_CHECK_LINEAR) {
    try {
      new RegExp(source, 'l');
    } catch {
      throw new UnboundedPatternError('the pattern cannot be matched in linear time: backreferences, lookahead, lookbehind and counted repetitions such as {100} are not supported');
    }
  }
  return regExp;
}
