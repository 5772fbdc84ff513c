// Tags of a VM: stored as dictionary id pairs so reports group and filter on integers.
import type { Dictionary } from './dictionary.ts';
import type { Store } from './store.ts';

/** Tags of a VM row as a map, sorted by key. */
export function readTags(store: Store, dict: Dictionary, row: number): Map<string, string> {
  const pairs = store.tags.get(row);
  const tags = new Map<string, string>();
  if (pairs === undefined) return tags;
  for (let i = 0; i < pairs.length; i += 2) tags.set(dict.lookup(pairs[i])!, dict.lookup(pairs[i + 1]) ?? '');
  return tags;
}

/** Replaces the tags of a VM row. Call inside a write transaction. */
export function writeTags(store: Store, dict: Dictionary, row: number, tags: ReadonlyMap<string, string>): void {
  const keys = [...tags.keys()].sort();
  if (keys.length === 0) {
    store.tags.remove(row);
    return;
  }
  const pairs: number[] = [];
  for (const key of keys) pairs.push(dict.intern(key), dict.intern(tags.get(key)!));
  store.tags.put(row, pairs);
}
