// The message ids of the writes a node applied lately whose second application could undo a newer write,
// kept in its store beside its data. A node that does not read one of its writes back appends it again as
// `<id>.again` (acknowledged-writes.ts, and a hand-over: hand-over-writes.ts), and a publish is retried as
// `<id>.retry<n>` (log.ts), as is every attempt at a write whose id may be sent again (a report's pages and
// claims), any of which may land beside the first. A node whose history held the
// first copy would apply the write twice: a tag edit, or a VM's start with its tags, applied again after a
// newer edit undoes that edit; an OSV import, a newer import; a report's delete, its create. Recorded in the
// transaction that applies the command, so every node reading one history decides alike, after a restart
// or in a copy of its data too. Agent batches without a VM's start, most of the log, change nothing when
// applied again (their sightings, times and sets move one way only), nor do report pages: they are not recorded, so the
// hot path pays one read per command.
import type { Store } from '../storage/store.ts';

/**
 * Commands back that a write's other copy is looked for: a write is appended again once its node read 4,096
 * commands past it without it, or 2 s after, and a node killed meanwhile does so when it restarts (its
 * journal: write-journal.ts), however many commands came while it was down. Copies further apart are both
 * applied.
 */
export const APPLIED_IDS_KEPT = 65_536;
/** An attempt at publishing a write is sent under its id with this and a number appended (log.ts `attemptId`). */
export const RETRY = '.retry';
const COPY_SUFFIX = /(\.again|\.retry\d+)$/;
/** Meta keys: the write's first id → `<seq>/<id of the copy applied>`, and each sequence → the first id recorded there. */
const BY_WRITE = 'appliedWrite.';
const BY_SEQ = 'appliedWriteAt.';

/** The id a write was first appended under: its copies append `.again` to it, once per copy, and its retries `.retry<n>`. */
export function firstIdOf(msgId: string): string {
  let id = msgId;
  for (let copy = COPY_SUFFIX.exec(id); copy !== null; copy = COPY_SUFFIX.exec(id)) id = id.slice(0, copy.index);
  return id;
}

/**
 * Whether the command with `msgId` is a copy of a write this store recorded under another of its ids (the
 * first, or another copy) within the last APPLIED_IDS_KEPT commands (two nodes claiming one report at once:
 * the first claim the log holds wins). The same id twice is not a copy: the log sends no id twice (log.ts).
 */
export function isCopyOfApplied(store: Pick<Store, 'meta'>, msgId: string | null): boolean {
  if (msgId === null) return false;
  const applied = store.meta.get(BY_WRITE + firstIdOf(msgId)) as string | undefined;
  return applied !== undefined && applied.slice(applied.indexOf('/') + 1) !== msgId;
}

/**
 * Call for every command in log order, in the write transaction that applies it: records the command at
 * `seq` with `msgId` when `remember` (a write applied whose copies are looked for; not a copy skipped, so
 * the id recorded stays the one applied), and forgets the one APPLIED_IDS_KEPT commands before it.
 */
export function recordApplied(store: Pick<Store, 'meta'>, seq: number, msgId: string | null, remember: boolean): void {
  const forgottenSeq = seq - APPLIED_IDS_KEPT;
  const forgotten = store.meta.get(BY_SEQ + forgottenSeq) as string | undefined;
  if (forgotten !== undefined) {
    store.meta.remove(BY_SEQ + forgottenSeq);
    const entry = store.meta.get(BY_WRITE + forgotten) as string | undefined;
    if (entry !== undefined && entry.startsWith(`${forgottenSeq}/`)) store.meta.remove(BY_WRITE + forgotten);
  }
  if (msgId === null || !remember) return;
  const first = firstIdOf(msgId);
  store.meta.put(BY_WRITE + first, `${seq}/${msgId}`);
  store.meta.put(BY_SEQ + seq, first);
}
