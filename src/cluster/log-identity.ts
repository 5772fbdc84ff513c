// Which log a node's data directory follows. A store records the sequence of the last command it applied;
// against another log (the NATS servers lost their data and made a new, empty one, or the node points at
// another cluster) that number means nothing: a node that had applied 5,000 commands would skip the new
// log's first 5,000, acknowledged writes every other node applies. So a store records the creation time of
// the log it follows, and a node refuses another log, unless told to adopt it (README "When the NATS
// servers lose their data").
import type { Logger } from '../log.ts';
import { listKeys } from '../storage/keys.ts';
import type { Store } from '../storage/store.ts';
import { openKeyRecords, saveKeyRecords } from './keys.ts';
import type { ClusterLog } from './log.ts';
import { appliedSeq, recordAppliedSeq } from './replica.ts';
import { ClusterShapeError } from './shards.ts';

/** The meta key of the followed log's creation time (JetStream's, the same on every server). */
const LOG_CREATED = 'clusterLogCreated';

/** Health's note for a running node whose log was deleted and made again under it. */
export function replacedLog(followed: string, created: string): string {
  return `the cluster log was replaced: this node's data follows the log created at ${followed}, the NATS servers now hold one created at ${created} (they lost their data, or it was deleted); this node stopped applying it: restart it, and it says what to do`;
}

export function followedLog(store: Pick<Store, 'meta'>): string | undefined {
  return store.meta.get(LOG_CREATED) as string | undefined;
}

/**
 * What makes this data directory a cluster node's, or null for a single node's: a single node, or a command,
 * writing to it would write what the cluster never sees, and the node, joined again, would differ from the others.
 */
export function clusterNodeData(store: Pick<Store, 'meta'>): string | null {
  const followed = followedLog(store);
  const applied = appliedSeq(store);
  if (followed === undefined && applied === 0) return null;
  return `this data directory is a cluster node's (it applied commands up to ${applied} of the cluster log created at ${followed ?? 'a time it did not record'})`;
}

/** The store follows no log any more (detach.ts): as a single node's, a cluster adopts it or refuses it. */
export async function forgetLog(store: Pick<Store, 'meta'>): Promise<void> {
  await store.meta.remove(LOG_CREATED);
  await recordAppliedSeq(store, 0);
}

/**
 * What a store holds that no cluster log brought: a single node's VMs and API keys. A cluster node's store is
 * empty until it applies the log, and records the log it follows before it applies anything.
 */
export function singleNodeData(store: Store): { vms: number; keys: number } | null {
  if (followedLog(store) !== undefined || appliedSeq(store) !== 0) return null;
  const vms = store.vmRows.getCount();
  const keys = listKeys(store).length;
  return vms === 0 && keys === 0 ? null : { vms, keys };
}

/**
 * Records the log this store follows at a node's first join; throws ClusterShapeError when it follows
 * another one, or holds a single node's data. With `adopt`, a store that followed a log which is gone, or a
 * single node's (one code group only: it holds every class), adopts this one, if it is empty: the log is
 * moved on past the store's last applied command (a single node's data stands for the log's first), so that
 * this node goes on from there and every other node, finding the log's beginning gone, starts from a copy of
 * this node's data (restore.ts); its API keys are saved as a truncation saves them (keys.ts).
 */
export async function holdLog(store: Store, log: ClusterLog, options: { adopt: boolean; codeGroups: number }, replicas: number, logger: Logger): Promise<void> {
  const { created, lastSeq, commands } = await log.identity();
  const followed = followedLog(store);
  const applied = appliedSeq(store);
  if (followed === created) return;
  const single = singleNodeData(store);
  // A new node, or a store of a version before this record whose log is still there.
  if (followed === undefined && applied <= lastSeq && single === null) {
    await store.meta.put(LOG_CREATED, created);
    return;
  }
  const was = followed === undefined ? 'a log that is gone' : `the log created at ${followed}`;
  const mismatch = single !== null
    ? `this data directory holds a single node's data (${single.vms} VM(s), ${single.keys} API key(s)), which the cluster log does not`
    : `this data directory applied commands 1 to ${applied} of ${was}, but the cluster log on these NATS servers was created at ${created} and holds ${commands} command(s) up to ${lastSeq}`;
  if (!options.adopt) {
    if (single !== null) throw new ClusterShapeError(`${mismatch}: a node joins a cluster with an empty --data-dir (it replays the log, or copies a live node's data); to take this data into a cluster, start this node first on NATS servers whose cluster log is empty, with --adopt-cluster-log true once (the other nodes then copy it)`);
    throw new ClusterShapeError(`${mismatch}: if the servers lost their data, start the node that applied the most with --adopt-cluster-log true once (it keeps its data and the others copy it); if another node adopted this log already, give this node an empty --data-dir; if this node points at the wrong servers, fix --cluster`);
  }
  if (commands > 0) throw new ClusterShapeError(`${mismatch}: a log that holds commands is not adopted (another cluster's, or written to since): fix --cluster, or give this node an empty --data-dir`);
  if (single !== null && options.codeGroups > 1) throw new ClusterShapeError(`${mismatch}: a single node's data holds every class, and is adopted only by a cluster of one code group (--code-groups 1)`);
  const position = single === null ? applied : 1;
  if (single !== null) await recordAppliedSeq(store, position);
  await log.purgeBelow(position + 1);
  // The keys as this node holds them, where `jvmlens keys list --cluster` reads those the log no longer has.
  await saveKeyRecords(await openKeyRecords(log, replicas), listKeys(store));
  await store.meta.put(LOG_CREATED, created);
  logger.warn('adopted the cluster log: it goes on after this node\'s last applied command, and nodes without this node\'s data copy it', { applied: position, logCreated: created, previous: followed ?? (single === null ? null : 'a single node') });
}
