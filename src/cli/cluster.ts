// The cluster's log for a command (`keys`, `cve import` with --cluster): an unreachable cluster is exit 4.
import { ClusterLog, LogUnavailableError } from '../cluster/log.ts';
import type { Config } from '../config.ts';
import { logger } from '../log.ts';
import { UnreachableError } from './client.ts';

/** Test only (`--test-faults lose-writes`): the keys created whose sequence the log gives another write. */
const LOST_WRITES = 1;

/** The log, checking the command's writes: it calls `readBackWrites` before it says they are done (src/cluster/acknowledged-writes.ts). */
export async function openClusterLog(config: Pick<Config, 'cluster' | 'clusterCa' | 'testFaults'>): Promise<ClusterLog> {
  try {
    const log = await ClusterLog.open(config.cluster, 'jvmlens-cli', 'once', config.clusterCa);
    log.checkWrites(logger);
    if (config.testFaults.includes('lose-writes')) log.loseWritesForTest(LOST_WRITES);
    return log;
  } catch (error) {
    if (error instanceof LogUnavailableError) throw new UnreachableError(`cannot reach the cluster: ${error.message}`);
    throw error;
  }
}
