// The cluster's log for a command (`keys`, `cve import` with --cluster): an unreachable cluster is exit 4.
import { ClusterLog, LogUnavailableError } from '../cluster/log.ts';
import type { Config } from '../config.ts';
import { UnreachableError } from './client.ts';

export async function openClusterLog(config: Pick<Config, 'cluster' | 'clusterCa'>): Promise<ClusterLog> {
  try {
    return await ClusterLog.open(config.cluster, 'jvmlens-cli', 'once', config.clusterCa);
  } catch (error) {
    if (error instanceof LogUnavailableError) throw new UnreachableError(`cannot reach the cluster: ${error.message}`);
    throw error;
  }
}
