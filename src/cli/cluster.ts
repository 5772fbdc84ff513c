// The cluster's log for a command (`keys`, `cve import` with --cluster): an unreachable cluster is exit 4.
import { ClusterLog, LogUnavailableError } from '../cluster/log.ts';
import { UnreachableError } from './client.ts';

export async function openClusterLog(servers: readonly string[]): Promise<ClusterLog> {
  try {
    return await ClusterLog.open(servers, 'jvmlens-cli', 'once');
  } catch (error) {
    if (error instanceof LogUnavailableError) throw new UnreachableError(`cannot reach the cluster: ${error.message}`);
    throw error;
  }
}
