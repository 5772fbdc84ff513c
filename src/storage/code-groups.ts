// Code groups (README "Running a cluster"): a cluster may split the fleet's classes into a fixed number of
// groups by a hash of the className, each node storing the code of one group only, so that a
// node applies a share of the code items the fleet sends rather than all of them (its log gives each node
// its group's items, src/cluster/commands.ts). Every node still stores every VM, its tags, components and
// the sourceNames it loaded: only code reports read the classes.
import { fnv1a } from '../hash.ts';
import type { Store } from './store.ts';

/** Group `of` of `count`; a single node, or a cluster without groups, holds group 0 of 1: every class. */
export interface CodeGroup {
  count: number;
  of: number;
}

/**
 * Code units at the end of a className its group is hashed from: classes of one package share a long
 * prefix and differ at the end, and a gateway hashes every class of every batch (the whole name, and the
 * sourceName with it, took 0.23 µs per code item).
 */
const HASHED_TAIL = 32;

/** The group of a class: FNV-1a over the last HASHED_TAIL code units of its className (part of the cluster's format). */
export function codeGroupOf(className: string, count: number): number {
  return fnv1a(className, Math.max(0, className.length - HASHED_TAIL)) % count;
}

const GROUP_KEY = 'codeGroup';

/** The code group a data directory holds, as `of/count`: recorded by the cluster node that uses it; a store without a record holds every class. */
export function storedCodeGroup(store: Store): CodeGroup {
  const [of, count] = String(store.meta.get(GROUP_KEY) ?? '0/1').split('/').map(Number);
  return { count, of };
}

export async function recordCodeGroup(store: Store, group: CodeGroup): Promise<void> {
  await store.meta.put(GROUP_KEY, `${group.of}/${group.count}`);
}
