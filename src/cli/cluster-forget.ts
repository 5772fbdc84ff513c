// `jvmlens cluster forget NODE_ID --cluster URLS`: a node removed for good no longer holds the log back.
import type { Config } from '../config.ts';
import { forgetPosition } from '../cluster/compaction.ts';
import { NODE_TTL_MS } from '../cluster/membership.ts';
import { clusterStatus } from '../cluster/status.ts';
import { UsageError } from './args.ts';
import { withClusterLog } from './cluster.ts';
import { formatUsages } from './help.ts';
import type { Usage } from './help.ts';

export const FORGET_USAGE: Usage = {
  call: 'jvmlens cluster forget NODE_ID --cluster URLS',
  does: 'a stopped node\'s place in the log dropped: the log no longer keeps what it missed (started once the log dropped that, it copies a live node\'s data)',
};

export async function forgetCommand(config: Config, args: readonly string[]): Promise<void> {
  const [nodeId, ...rest] = args;
  if (nodeId === undefined || nodeId.startsWith('-') || rest.length > 0) throw new UsageError(`usage:\n${formatUsages([FORGET_USAGE])}`);
  if (config.cluster.length === 0) throw new UsageError('cluster forget needs --cluster URLS (or JVMLENS_CLUSTER)');
  const applied = await withClusterLog(config, async (log) => {
    const node = (await clusterStatus(log)).nodes.find((known) => known.nodeId === nodeId);
    if (node?.live === true) throw new UsageError(`node ${nodeId} is live: stop it first (SIGTERM; a node killed outright stays live until its heartbeat expires, ${NODE_TTL_MS / 1000} s)`);
    const position = node?.applied ?? null;
    if (position === null || !(await forgetPosition(log.nc, nodeId))) throw new UsageError(`node ${nodeId} holds no place in the cluster log (jvmlens cluster status lists the nodes that do)`);
    return position;
  });
  process.stdout.write(`forgot ${nodeId}'s place in the cluster log (it had applied up to ${applied}): the log may drop what it did not apply once the retention passed; started again once it has, ${nodeId} first copies a live node's data\n`);
}
