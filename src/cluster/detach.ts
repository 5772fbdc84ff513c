// `jvmlens cluster detach --data-dir DIR`: a stopped cluster node's data directory made a single node's. A
// single node refuses a cluster node's directory (log-identity.ts clusterNodeData): started without
// --cluster by mistake, it would take writes the cluster never sees. Detached, the directory follows no log,
// holds no writes to append again and nothing the log checks kept of the old log (hashes, findings); a
// cluster then refuses it, or adopts it, as any single node's.
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { storedCodeGroup } from '../storage/code-groups.ts';
import { openStore } from '../storage/store.ts';
import { takeWriterLock, writerHolder } from '../storage/writer-lock.ts';
import { forgetLogChecks } from './log-checks.ts';
import { followedLog, forgetLog } from './log-identity.ts';
import { appliedSeq } from './replica.ts';
import { ClusterShapeError } from './shards.ts';
import { JOURNAL_FILE, WriteJournal } from './write-journal.ts';

export interface Detached {
  /** The log it followed (its creation time), and how far it had applied it; null for a directory that followed none. */
  followed: string | null;
  applied: number;
}

/** The writes the node journaled and has not read back, with those a hand-over it did not finish was to check. */
async function journaledWrites(dataDir: string): Promise<number> {
  if (!existsSync(join(dataDir, JOURNAL_FILE))) return 0;
  const journal = WriteJournal.open(dataDir);
  try {
    return journal.unconfirmed().length + journal.toHandOver().length;
  } finally {
    await journal.close();
  }
}

export async function detachDataDir(dataDir: string): Promise<Detached> {
  // A node running on it would go on following the log in memory, and its writes would land in a single node's
  // directory. Asked of the writer lock, before the store is opened: opened beside a running node, it could cost
  // the node committed writes (src/storage/writer-lock.ts).
  const lock = await takeWriterLock(dataDir, 'command', 0).catch(() => null);
  if (lock === null || !('release' in lock)) throw new ClusterShapeError(`this data directory is open in process ${writerHolder(dataDir)?.pid ?? 'unknown'} (a node running on it?): stop it, then detach it`);
  const store = openStore(dataDir);
  try {
    const group = storedCodeGroup(store);
    if (group.count > 1) throw new ClusterShapeError(`this data directory stores code group ${group.of} of ${group.count}: a single node on it would miss the other groups' classes; detach the data directory of a node of a cluster of one code group`);
    const unread = await journaledWrites(dataDir);
    if (unread > 0) throw new ClusterShapeError(`this node journaled ${unread} write(s) it has not read back in the cluster log (JetStream acknowledged them; the log may have lost them): start it once with --cluster so that it reads them back, appending again those the log lacks, stop it, then detach it`);
    const detached = { followed: followedLog(store) ?? null, applied: appliedSeq(store) };
    await forgetLog(store);
    await forgetLogChecks(store);
    // Empty (above): a single node never reads a journal, and a cluster it joins later must not append these.
    for (const name of [JOURNAL_FILE, `${JOURNAL_FILE}-lock`]) await rm(join(dataDir, name), { force: true });
    return detached;
  } finally {
    await store.close();
    lock.release();
  }
}
