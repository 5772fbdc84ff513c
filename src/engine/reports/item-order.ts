// Total, deterministic item order (decisions §6.3): code points for strings, Maven order for versions, null last.
import { compareCodePoints } from '../../collation.ts';
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

function compareValues(a: Value, b: Value, collation: Collation, ranks: VersionRanks | undefined): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  if (collation === 'number') return (a as number) - (b as number);
  if (collation === 'version') return ranks === undefined ? compareMavenVersions(String(a), String(b)) : ranks.get(String(a))! - ranks.get(String(b))!;
  return compareCodePoints(String(a), String(b));
}

/** A comparator over items by the keys in order; `null` sorts last whatever the direction. */
function itemComparator<T extends Record<string, unknown>>(keys: readonly OrderKey[], ranks?: ReadonlyMap<string, VersionRanks>): (a: T, b: T) => number {
  return (a, b) => {
    for (const key of keys) {
      const x = a[key.field] as Value;
      const y = b[key.field] as Value;
      const nullX = x === null || x === undefined;
      const nullY = y === null || y === undefined;
      if (nullX || nullY) {
        if (nullX && nullY) continue;
        return nullX ? 1 : -1;
      }
      const order = compareValues(x, y, key.collation, ranks?.get(key.field));
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

/** Sorts items in place by the keys; versions are ranked once up front instead of parsed per comparison. */
export function sortItems<T extends Record<string, unknown>>(items: T[], keys: readonly OrderKey[]): T[] {
  const ranks = new Map<string, VersionRanks>();
  for (const key of keys) {
    if (key.collation !== 'version' || ranks.has(key.field)) continue;
    const distinct = new Set<string>();
    for (const item of items) {
      const value = item[key.field];
      if (value !== null && value !== undefined) distinct.add(String(value));
    }
    const sorted = [...distinct].sort(compareMavenVersions);
    // Versions Maven calls equal (1.0 and 1.0.0) share a rank, as the comparison would have them.
    const rank: VersionRanks = new Map();
    sorted.forEach((version, k) => rank.set(version, k > 0 && compareMavenVersions(sorted[k - 1], version) === 0 ? rank.get(sorted[k - 1])! : k));
    ranks.set(key.field, rank);
  }
  return items.sort(itemComparator(keys, ranks));
}
