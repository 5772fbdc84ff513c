// String order of the service: by code point (decisions §6.3), not by locale or UTF-16 unit.

export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (0xD800–0xDFFF) encode code points above 0xFFFF, so they sort after the BMP.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * A comparator for sorting these strings by code point: JavaScript's own `<` (UTF-16 units, in native
 * code) gives the same order when no string holds a surrogate, as is the rule for host names and ids.
 */
export function codePointComparator(values: Iterable<string | null>): (a: string, b: string) => number {
  for (const value of values) if (value !== null && SURROGATE.test(value)) return compareCodePoints;
  return (a, b) => (a < b ? -1 : a > b ? 1 : 0);
}
