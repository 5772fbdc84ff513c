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

function compareValues(a: Value, b: Value, collation: Collation): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  if (collation === 'number') return (a as number) - (b as number);
  if (collation === 'version') return compareMavenVersions(String(a), String(b));
  return compareCodePoints(String(a), String(b));
}

/** A comparator over items by the keys in order; `null` sorts last whatever the direction. */
export function itemComparator<T extends Record<string, unknown>>(keys: readonly OrderKey[]): (a: T, b: T) => number {
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
      const order = compareValues(x, y, key.collation);
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
