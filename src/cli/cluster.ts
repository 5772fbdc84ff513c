// The cluster's log for a command (`keys`, `cve import`, `cluster status` with --cluster): a log that cannot
// be reached, or does not answer meanwhile, is exit 4 with what it said, never a stack trace.
import { ClusterLog, LogUnavailableError } from '../cluster/log.ts';
import type { Config } from '../config.ts';
import { logger } from '../log.ts';
import { UnreachableError } from './client.ts';

/** Test only (`--test-faults lose-writes`): the keys created whose sequence the log gives another write. */
const LOST_WRITES = 1;

type ClusterConfig = Pick<Config, 'cluster' | 'clusterCa' | 'testFaults'>;

/** The CLI's error for a log that did not answer (exit 4); other errors as they are. */
function unreachable(error: unknown, what: string): unknown {
  return error instanceof LogUnavailableError ? new UnreachableError(`${what}: ${error.message}`) : error;
}

/** The log, checking the command's writes: it calls `readBackWrites` before it says they are done (src/cluster/acknowledged-writes.ts). */
export async function openClusterLog(config: ClusterConfig): Promise<ClusterLog> {
  try {
    const log = await ClusterLog.open(config.cluster, 'jvmlens-cli', 'once', config.clusterCa);
    log.checkWrites(logger);
    if (config.testFaults.includes('lose-writes')) log.loseWritesForTest(LOST_WRITES);
    return log;
  } catch (error) {
    throw unreachable(error, 'cannot reach the cluster');
  }
}

/** Runs `action` on the cluster's log, then closes it. */
export async function withClusterLog<T>(config: ClusterConfig, action: (log: ClusterLog) => Promise<T>): Promise<T> {
  const log = await openClusterLog(config);
  try {
    return await action(log);
  } catch (error) {
    throw unreachable(error, 'the cluster did not answer');
  } finally {
    await log.close();
  }
}
