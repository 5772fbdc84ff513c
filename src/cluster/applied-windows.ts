// The hash of the log's commands as this node applied them, a window at a time (log-checks.ts compares
// them between nodes), kept in its store beside its data. Folded into the hash in the transaction that
// applies each command, so the hash is of what the node holds: hashed as read, a window read again from
// servers that now gave it otherwise (nats-server 2.9.10's replicas diverge after a pause) matched the
// other nodes' while the node lacked their writes, and a window hashed by a process killed before it
// recorded the hash was compared by nobody. A chaos row's node lost 4 VMs and a tag edit so, unseen.
import { crc32 } from 'node:zlib';
import type { Store } from '../storage/store.ts';

/** The hash of the commands `to - every + 1` to `to` as one node read them. */
export interface WindowHash {
  to: number;
  crc: number;
}

/**
 * Meta keys: the window being applied, as far as applied (`<seq>/<crc>`, or `<seq>/-` where its first
 * command was not applied here); each whole window's hash, under its last command.
 */
const CHAIN = 'appliedWindowChain';
const WINDOW = 'appliedWindow.';
/** Meta keys: each kept command's own hash, under its sequence, to tell at which command two readings of a window part. */
const COMMAND = 'appliedCommand.';
/** Whole windows kept: a node recording them after a restart, or after JetStream refused them a while, compares these. */
export const WINDOWS_KEPT = 16;

/**
 * A window's hash with the next command's bytes folded in (from 0 before its first): what a node applies and
 * what the log gives when read again (ClusterLog.hashOf) must hash alike.
 */
export function foldCommand(crc: number, data: Uint8Array): number {
  return crc32(data, crc);
}

/** The hash of the window applied so far, up to the command at `seq`; null where its first command was not applied here. */
interface Chain {
  seq: number;
  crc: number | null;
}

function chainOf(store: Pick<Store, 'meta'>): Chain | null {
  const stored = store.meta.get(CHAIN) as string | undefined;
  if (stored === undefined) return null;
  const [seq, crc] = stored.split('/');
  return { seq: Number(seq), crc: crc === '-' ? null : Number(crc) };
}

/**
 * Call for every command in log order, in the write transaction that applies it: folds `data`, the command's
 * bytes, into the hash of its window of `every` commands; a window's hash is whole only when each of its
 * commands was applied here in order (not after a gap: a store that adopted a single node's data, or a log
 * truncated past it), so that a hash covers the same commands on every node.
 */
export function foldApplied(store: Pick<Store, 'meta'>, seq: number, data: Uint8Array, every: number): void {
  store.meta.put(COMMAND + seq, crc32(data));
  store.meta.remove(COMMAND + (seq - WINDOWS_KEPT * every));
  const place = (seq - 1) % every;
  const before = place === 0 ? { seq: seq - 1, crc: 0 } : chainOf(store);
  const crc = before?.seq === seq - 1 && before.crc !== null ? foldCommand(before.crc, data) : null;
  store.meta.put(CHAIN, `${seq}/${crc ?? '-'}`);
  if (crc === null || place !== every - 1) return;
  store.meta.put(WINDOW + seq, crc);
  store.meta.remove(WINDOW + (seq - WINDOWS_KEPT * every));
}

/** The hash of the whole window ending with the command at `to`, if it was applied here and is still kept. */
export function appliedWindow(store: Pick<Store, 'meta'>, to: number): WindowHash | null {
  const crc = store.meta.get(WINDOW + to) as number | undefined;
  return crc === undefined ? null : { to, crc };
}

/** Each command's own hash from `from` to `to`, as applied here: 0 for one not applied here, or no longer kept. */
export function appliedCommands(store: Pick<Store, 'meta'>, from: number, to: number): Uint32Array {
  const hashes = new Uint32Array(to - from + 1);
  for (let seq = from; seq <= to; seq++) hashes[seq - from] = (store.meta.get(COMMAND + seq) as number | undefined) ?? 0;
  return hashes;
}

/** The whole windows kept, oldest first. */
export function appliedWindows(store: Pick<Store, 'meta'>): WindowHash[] {
  const windows: WindowHash[] = [];
  for (const { key, value } of store.meta.getRange({ start: WINDOW, end: `${WINDOW}\uffff` })) {
    windows.push({ to: Number(String(key).slice(WINDOW.length)), crc: value as number });
  }
  return windows.sort((a, b) => a.to - b.to);
}

/** Forgets the whole windows up to the one ending at `to`: this node no longer compares them (log-checks.ts). */
export async function forgetAppliedWindows(store: Pick<Store, 'meta'>, to: number): Promise<void> {
  for (const window of appliedWindows(store)) if (window.to <= to) await store.meta.remove(WINDOW + window.to);
}

/**
 * Forgets every hash of the log this store applied (windows, commands, the window being applied): a detached
 * store (detach.ts) that a new cluster adopts goes on at the new log's first sequences, where its old hashes
 * would be recorded for windows of the new log and differ from every other node's.
 */
export async function forgetAppliedHashes(store: Pick<Store, 'env' | 'meta'>): Promise<void> {
  await store.env.transaction(() => {
    store.meta.remove(CHAIN);
    for (const prefix of [WINDOW, COMMAND]) {
      for (const key of store.meta.getKeys({ start: prefix, end: `${prefix}\uffff` })) store.meta.remove(key);
    }
  });
}

/**
 * The hash of the window being applied, from its first command to the last applied, or null (its first was
 * not applied here, or the last applied ended a whole window): the log's tail, compared once the log is
 * quiet, as a window may take long to fill.
 */
export function appliedTail(store: Pick<Store, 'meta'>, every: number): WindowHash | null {
  const chain = chainOf(store);
  if (chain === null || chain.crc === null || chain.seq % every === 0) return null;
  return { to: chain.seq, crc: chain.crc };
}
