// `jvmlens cluster detach --data-dir DIR`: a stopped cluster node's data directory made a single node's. A
// single node refuses a cluster node's directory (log-identity.ts clusterNodeData): started without
// --cluster by mistake, it would take writes the cluster never sees. Detached, the directory follows no log
// and holds no writes to append again; a cluster then refuses it, or adopts it, as any single node's.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { storedCodeGroup } from '../storage/code-groups.ts';
import { openStore } from '../storage/store.ts';
import { forgetOddWindow } from './log-checks.ts';
import { followedLog, forgetLog } from './log-identity.ts';
import { appliedSeq } from './replica.ts';
import { ClusterShapeError } from './shards.ts';
import { JOURNAL_FILE } from './write-journal.ts';

export interface Detached {
  /** The log it followed (its creation time), and how far it had applied it; null for a directory that followed none. */
  followed: string | null;
  applied: number;
}

export async function detachDataDir(dataDir: string): Promise<Detached> {
  const store = openStore(dataDir);
  try {
    const group = storedCodeGroup(store);
    if (group.count > 1) throw new ClusterShapeError(`this data directory stores code group ${group.of} of ${group.count}: a single node on it would miss the other groups' classes; detach the data directory of a node of a cluster of one code group`);
    const detached = { followed: followedLog(store) ?? null, applied: appliedSeq(store) };
    await forgetLog(store);
    await forgetOddWindow(store);
    // Its writes not read back are the cluster's to append again, never a single node's.
    for (const name of [JOURNAL_FILE, `${JOURNAL_FILE}-lock`]) await rm(join(dataDir, name), { force: true });
    return detached;
  } finally {
    await store.close();
  }
}
