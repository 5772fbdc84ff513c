// What each filter operator means on one value: tests on strings and versions, intervals on numbers and times.
import { compareCodePoints } from '../collation.ts';
import { compareMavenVersions } from '../versions/maven.ts';
import type { Operator } from './grammar.ts';
import type { TimeSpan } from './time.ts';

/** A scalar test; `null` is a missing value (a VM without that tag). */
export type Test = (value: string | number | null) => boolean;

/**
 * A numeric condition as inclusive `[low, high]` pairs: a value passes when it lies in one of them, the
 * other way round when `negate`. A missing value (NaN in a column) lies in none, so it passes exactly
 * when the condition is negated: `!=` and `= null`.
 */
export interface NumericTest {
  bounds: Float64Array;
  negate: boolean;
}

const scratch = new Float64Array(1);
const scratchBits = new BigInt64Array(scratch.buffer);

// The largest double below x: `v < x` is `v <= nextDown(x)`, which keeps every bound inclusive.
function nextDown(x: number): number {
  if (x === 0) return -Number.MIN_VALUE;
  scratch[0] = x;
  scratchBits[0] += x > 0 ? -1n : 1n;
  return scratch[0];
}

function nextUp(x: number): number {
  return -nextDown(-x);
}

/** The interval form of a numeric condition; each span is a literal: a number, an instant or a day. */
export function numericTest(op: Operator, spans: readonly TimeSpan[]): NumericTest {
  const test = (pairs: number[], negate = false): NumericTest => ({ bounds: Float64Array.from(pairs), negate });
  const [first, second] = spans;
  switch (op) {
    case '=': return test([first.open, first.close]);
    case '!=': return test([first.open, first.close], true);
    case '<': return test([-Infinity, nextDown(first.open)]);
    case '<=': return test([-Infinity, first.close]);
    case '>': return test([nextUp(first.close), Infinity]);
    case '>=': return test([first.open, Infinity]);
    case '= null': return test([-Infinity, Infinity], true);
    case '!= null': return test([-Infinity, Infinity]);
    case 'IN': return test(spans.flatMap((span) => [span.open, span.close]));
    case 'RANGE': return test([first.open, second.close]);
    default: throw new Error(`operator ${op} has no numeric form`);
  }
}

export function numericPredicate(numeric: NumericTest): Test {
  const { bounds, negate } = numeric;
  return (value) => {
    const v = typeof value === 'number' ? value : value === null ? NaN : Number(value);
    for (let k = 0; k < bounds.length; k += 2) {
      if (v >= bounds[k] && v <= bounds[k + 1]) return !negate;
    }
    return negate;
  };
}

/** How a textual field orders: `version` in Maven order, everything else by code point (decisions §6.3). */
export function orderOf(type: 'version' | 'string' | 'enum'): (a: string, b: string) => number {
  return type === 'version' ? compareMavenVersions : compareCodePoints;
}

function asText(value: string | number | null): string | null {
  return value === null ? null : String(value);
}

/**
 * Equality, order, IN and RANGE on a textual field. Equality follows the field's order, so on a version
 * `= '2.0'` also matches `2.0.0` (they are equal in Maven order) and agrees with `RANGE ('2.0', '2.0')`.
 */
export function textTest(op: Operator, literals: readonly string[], compare: (a: string, b: string) => number, exactEquality: boolean): Test {
  const [first, second] = literals;
  const equals = exactEquality ? (v: string) => v === first : (v: string) => compare(v, first) === 0;
  const one = (check: (v: string) => boolean): Test => (value) => {
    const v = asText(value);
    return v !== null && check(v);
  };
  const isEqual = one(equals);
  switch (op) {
    case '=': return isEqual;
    case '!=': return (value) => !isEqual(value);
    case '<': return one((v) => compare(v, first) < 0);
    case '<=': return one((v) => compare(v, first) <= 0);
    case '>': return one((v) => compare(v, first) > 0);
    case '>=': return one((v) => compare(v, first) >= 0);
    case '= null': return (value) => value === null;
    case '!= null': return (value) => value !== null;
    case 'RANGE': return one((v) => compare(v, first) >= 0 && compare(v, second) <= 0);
    case 'IN': {
      if (exactEquality) {
        const set = new Set(literals);
        return one((v) => set.has(v));
      }
      return one((v) => literals.some((literal) => compare(v, literal) === 0));
    }
    default: throw new Error(`operator ${op} is not a comparison`);
  }
}

/** LIKE: an unanchored regular-expression search, as RegExp.prototype.test (decisions §6.2). */
export function likeTest(pattern: RegExp): Test {
  return (value) => value !== null && pattern.test(String(value));
}

/** CONTAINS (case-insensitive) and the code reports' `field:value` (case-sensitive). */
export function containsTest(text: string, caseSensitive: boolean): Test {
  if (caseSensitive) return (value) => value !== null && String(value).includes(text);
  const lower = text.toLowerCase();
  return (value) => value !== null && String(value).toLowerCase().includes(lower);
}
