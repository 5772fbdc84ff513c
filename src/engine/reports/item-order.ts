// Total, deterministic item order (decisions §6.3): code points for strings, Maven order for versions, null last.
import { codePointComparator } from '../../collation.ts';
import { compareMavenVersions } from '../../versions/maven.ts';

export type Collation = 'string' | 'number' | 'version';

export interface OrderKey {
  /** Where the value is: a property of the item. */
  field: string;
  direction: 'ASC' | 'DESC';
  collation: Collation;
}

type Value = string | number | null | undefined;

/** Orders two values of one key, neither null. */
type Compare = (a: string | number, b: string | number) => number;

/** A comparator of indexes by their values in `columns` (column k: key k's value of each index); `null` sorts last whatever the direction. */
function indexComparator(columns: readonly (readonly unknown[])[], compares: readonly Compare[], signs: readonly number[]): (a: number, b: number) => number {
  return (a, b) => {
    for (let k = 0; k < compares.length; k++) {
      const column = columns[k];
      const x = column[a] as Value;
      const y = column[b] as Value;
      if (x === y) continue;
      if (x === null || x === undefined) return y === null || y === undefined ? 0 : 1;
      if (y === null || y === undefined) return -1;
      const order = compares[k](x, y);
      if (order !== 0) return signs[k] * order;
    }
    return 0;
  };
}

/**
 * How one key's values compare, prepared once from all of them: versions ranked (Maven order parses both
 * strings, so it runs once per distinct value), strings checked for surrogates (codePointComparator).
 */
function compareOf(values: readonly unknown[], collation: Collation): Compare {
  if (collation === 'number') return (a, b) => (a as number) - (b as number);
  if (collation === 'string') {
    // Text values compare as they are; any other (a number in a text field) as its string.
    const text = values.every((value) => value === null || value === undefined || typeof value === 'string');
    const strings = codePointComparator(text ? (values as readonly (string | null)[]) : values.map((value) => (typeof value === 'string' ? value : null)));
    return text ? (strings as Compare) : (a, b) => strings(String(a), String(b));
  }
  const distinct = new Set<string>();
  for (const value of values) if (value !== null && value !== undefined) distinct.add(String(value));
  const sorted = [...distinct].sort(compareMavenVersions);
  // Versions Maven calls equal (1.0 and 1.0.0) share a rank, as the comparison would have them.
  const rank = new Map<string, number>();
  sorted.forEach((version, k) => rank.set(version, k > 0 && compareMavenVersions(sorted[k - 1], version) === 0 ? rank.get(sorted[k - 1])! : k));
  return (a, b) => rank.get(String(a))! - rank.get(String(b))!;
}

/**
 * The indexes 0 … count-1 in the order of their values, key by key; column k holds key k's value of each index.
 * Ties keep index order. Columns, not objects: a comparison reads two array slots per key, where a lookup of
 * an item's property by name cost twice the time in a sort of 50k groups.
 */
export function sortedIndexes(count: number, columns: readonly (readonly unknown[])[], keys: readonly OrderKey[]): number[] {
  const compares = keys.map((key, k) => compareOf(columns[k], key.collation));
  const signs = keys.map((key) => (key.direction === 'ASC' ? 1 : -1));
  return Array.from({ length: count }, (_, i) => i).sort(indexComparator(columns, compares, signs));
}

/**
 * The full order: the requested sortBy keys, then `defaults` (group fields first) ascending unless the
 * default says otherwise, skipping fields already used, so ties always break the same way.
 */
export function orderKeys(sortBy: readonly { field: string; direction: 'ASC' | 'DESC' }[], defaults: readonly OrderKey[], collationOf: (field: string) => Collation): OrderKey[] {
  const keys: OrderKey[] = sortBy.map((s) => ({ field: s.field, direction: s.direction, collation: collationOf(s.field) }));
  for (const key of defaults) if (!keys.some((k) => k.field === key.field)) keys.push(key);
  return keys;
}

/** Sorts items in place by the keys (sortedIndexes over their values). */
export function sortItems<T extends Record<string, unknown>>(items: T[], keys: readonly OrderKey[]): T[] {
  const order = sortedIndexes(
    items.length,
    keys.map((key) => items.map((item) => item[key.field])),
    keys,
  );
  const unsorted = items.slice();
  for (let k = 0; k < order.length; k++) items[k] = unsorted[order[k]];
  return items;
}
