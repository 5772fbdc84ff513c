// Total, deterministic item order (decisions §6.3): code points for strings, Maven order for versions, null last.
import { codePointComparator, compareCodePoints } from '../../collation.ts';
import { compareMavenVersions } from '../../versions/maven.ts';

export type Collation = 'string' | 'number' | 'version';

export interface OrderKey {
  /** Where the value is: a property of the item. */
  field: string;
  direction: 'ASC' | 'DESC';
  collation: Collation;
}

type Value = string | number | null | undefined;

/** Rank of each distinct version among the items: Maven order parses both strings, so it runs once per distinct value. */
type VersionRanks = Map<string, number>;

/** How a sort compares one field's values, prepared once from the items (versions ranked, strings checked). */
interface FieldOrder {
  ranks?: VersionRanks;
  strings?: (a: string, b: string) => number;
}

function compareValues(a: Value, b: Value, collation: Collation, prepared: FieldOrder | undefined): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  if (collation === 'number') return (a as number) - (b as number);
  const ranks = prepared?.ranks;
  if (collation === 'version') return ranks === undefined ? compareMavenVersions(String(a), String(b)) : ranks.get(String(a))! - ranks.get(String(b))!;
  return (prepared?.strings ?? compareCodePoints)(String(a), String(b));
}

/** A comparator over items by the keys in order; `null` sorts last whatever the direction. */
function itemComparator<T extends Record<string, unknown>>(keys: readonly OrderKey[], prepared?: ReadonlyMap<string, FieldOrder>): (a: T, b: T) => number {
  // Looked up once, not per comparison: a sort of 50k items compares ~800k times.
  const orders = keys.map((key) => prepared?.get(key.field));
  return (a, b) => {
    for (let k = 0; k < keys.length; k++) {
      const key = keys[k];
      const x = a[key.field] as Value;
      const y = b[key.field] as Value;
      const nullX = x === null || x === undefined;
      const nullY = y === null || y === undefined;
      if (nullX || nullY) {
        if (nullX && nullY) continue;
        return nullX ? 1 : -1;
      }
      const order = compareValues(x, y, key.collation, orders[k]);
      if (order !== 0) return key.direction === 'ASC' ? order : -order;
    }
    return 0;
  };
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

/**
 * Sorts items in place by the keys; versions are ranked once up front instead of parsed per comparison,
 * and strings compare natively unless one holds a surrogate (codePointComparator).
 */
export function sortItems<T extends Record<string, unknown>>(items: T[], keys: readonly OrderKey[]): T[] {
  const prepared = new Map<string, FieldOrder>();
  for (const key of keys) {
    if (prepared.has(key.field)) continue;
    if (key.collation === 'string') {
      prepared.set(key.field, { strings: codePointComparator(items.map((item) => (typeof item[key.field] === 'string' ? (item[key.field] as string) : null))) });
      continue;
    }
    if (key.collation !== 'version') continue;
    const distinct = new Set<string>();
    for (const item of items) {
      const value = item[key.field];
      if (value !== null && value !== undefined) distinct.add(String(value));
    }
    const sorted = [...distinct].sort(compareMavenVersions);
    // Versions Maven calls equal (1.0 and 1.0.0) share a rank, as the comparison would have them.
    const rank: VersionRanks = new Map();
    sorted.forEach((version, k) => rank.set(version, k > 0 && compareMavenVersions(sorted[k - 1], version) === 0 ? rank.get(sorted[k - 1])! : k));
    prepared.set(key.field, { ranks: rank });
  }
  return items.sort(itemComparator(keys, prepared));
}
