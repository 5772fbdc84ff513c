// Tags of a VM: stored as dictionary id pairs so reports group and filter on integers.
import type { Dictionary } from './dictionary.ts';
import type { Store } from './store.ts';
import { bufferOf, uint32s } from './store.ts';

/** Tags of a VM row as a map, sorted by key. */
export function readTags(store: Store, dict: Dictionary, row: number): Map<string, string> {
  const pairs = uint32s(store.tags.getBinary(row));
  const tags = new Map<string, string>();
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
  const pairs = new Uint32Array(keys.length * 2);
  keys.forEach((key, k) => {
    pairs[2 * k] = dict.intern(key);
    pairs[2 * k + 1] = dict.intern(tags.get(key)!);
  });
  store.tags.put(row, bufferOf(pairs));
}
