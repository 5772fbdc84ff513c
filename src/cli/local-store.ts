// The store of --data-dir for a command that writes to it directly (keys, cve import, seed): never a cluster
// node's, whose writes go through the cluster's log (--cluster), or that one node alone would hold them.
import { clusterNodeData } from '../cluster/log-identity.ts';
import { openStore, storageWriteFailure } from '../storage/store.ts';
import type { Store } from '../storage/store.ts';
import { UsageError } from './args.ts';

export async function openLocalStore(dataDir: string): Promise<Store> {
  exitOnFailedCommit(dataDir);
  const store = openStore(dataDir);
  const clusterNode = clusterNodeData(store);
  if (clusterNode === null) return store;
  await store.close();
  throw new UsageError(`${clusterNode}: what this command writes there would reach that node alone; give it --cluster URLS instead of --data-dir`);
}

/**
 * A command's write that the disk refuses (full, I/O error) ends it with status 1 and says which directory.
 * lmdb-js then rejects promises nobody awaits (the transaction's other writes, the commit's error) and never
 * settles the awaited one: without this the process died on their stack, and with a listener that only
 * handled them it ended with status 0, having written nothing.
 */
export function exitOnFailedCommit(dataDir: string): void {
  process.on('unhandledRejection', (reason) => {
    const failure = storageWriteFailure(reason);
    if (failure === null) throw reason;
    process.stderr.write(`jvmlens: ${dataDir} cannot be written: ${failure.message}\n`);
    process.exit(1);
  });
}
