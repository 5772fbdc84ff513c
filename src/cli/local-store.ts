// The store of --data-dir for a command that writes to it directly (keys, cve import, seed): never a cluster
// node's, whose writes go through the cluster's log (--cluster), or that one node alone would hold them.
import { clusterNodeData } from '../cluster/log-identity.ts';
import { openStore } from '../storage/store.ts';
import type { Store } from '../storage/store.ts';
import { UsageError } from './args.ts';

export async function openLocalStore(dataDir: string): Promise<Store> {
  const store = openStore(dataDir);
  const clusterNode = clusterNodeData(store);
  if (clusterNode === null) return store;
  await store.close();
  throw new UsageError(`${clusterNode}: what this command writes there would reach that node alone; give it --cluster URLS instead of --data-dir`);
}
