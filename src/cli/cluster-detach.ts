// `jvmlens cluster detach --data-dir DIR`: a stopped cluster node's data directory made a single node's (src/cluster/detach.ts).
import type { Config } from '../config.ts';
import { detachDataDir } from '../cluster/detach.ts';
import { ClusterShapeError } from '../cluster/shards.ts';
import { UsageError } from './args.ts';
import { exitOnFailedCommit } from './local-store.ts';
import { formatUsages } from './help.ts';
import type { Usage } from './help.ts';

export const DETACH_USAGE: Usage = {
  call: 'jvmlens cluster detach --data-dir DIR',
  does: 'a stopped cluster node\'s data directory made a single node\'s (it then takes writes the cluster never sees)',
};

export async function detachCommand(config: Config, args: readonly string[]): Promise<void> {
  if (args.length > 0) throw new UsageError(`usage:\n${formatUsages([DETACH_USAGE])}`);
  exitOnFailedCommit(config.dataDir);
  const { followed, applied } = await detachDataDir(config.dataDir).catch((error: unknown) => {
    throw error instanceof ClusterShapeError ? new UsageError(`cannot detach ${config.dataDir}: ${error.message}`) : error;
  });
  process.stdout.write(followed === null && applied === 0
    ? `${config.dataDir} followed no cluster log: a single node's already\n`
    : `${config.dataDir} detached: it had applied commands up to ${applied} of the cluster log created at ${followed ?? 'a time it did not record'}; a single node runs on it now, and a cluster adopts it only as a single node's (README "From a single node to a cluster")\n`);
}
