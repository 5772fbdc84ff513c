// `jvmlens cluster status --cluster URLS`: the cluster's log, shape and nodes, for the operator who adds or
// removes a node, or wants to know whether one has caught up.
import type { Config } from '../config.ts';
import { clusterStatus } from '../cluster/status.ts';
import type { ClusterStatus, NodeStatus } from '../cluster/status.ts';
import { UnreachableError } from './client.ts';
import { openClusterLog } from './cluster.ts';
import { parseArgs, UsageError } from './args.ts';

export const CLUSTER_USAGE = `jvmlens cluster status --cluster URLS [--format text|json]    the cluster's log, shard count and nodes
                                                              (live or not, how far each applied the log)`;

const FORMATS = ['text', 'json'];

function iso(time: number | null): string {
  return time === null ? '-' : new Date(time).toISOString();
}

function behind(node: NodeStatus, lastSeq: number): string {
  if (node.applied === null) return '-';
  const lag = lastSeq - node.applied;
  return lag <= 0 ? 'current' : `${lag} behind`;
}

function table(rows: readonly string[][]): string {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column])).join('  ').trimEnd()).join('\n') + '\n';
}

function text(status: ClusterStatus): string {
  const { log } = status;
  const replicas = log.replicas.map((replica) => `${replica.server} (${replica.offline ? 'offline' : replica.current ? 'current' : 'catching up'})`).join(', ');
  const lines = [
    `log     ${log.stream}: ${log.commands} command${log.commands === 1 ? '' : 's'}, ${(log.bytes / 1e6).toFixed(1)} MB, sequences ${log.firstSeq}-${log.lastSeq}; leader ${log.leader ?? 'none (JetStream is electing one)'}${replicas === '' ? '' : `; other replicas ${replicas}`}`,
    `shards  ${status.vmShards === null ? 'not fixed yet (no node has started)' : `${status.vmShards} VM shards`}`,
    '',
  ];
  const rows = [['NODE', 'STATE', 'GATEWAY', 'API', 'STARTED', 'APPLIED', 'LOG', 'PLACE KEPT UNTIL']];
  for (const node of status.nodes) {
    rows.push([
      node.nodeId, node.live ? 'live' : 'not live', node.gatewayPort === null ? '-' : String(node.gatewayPort), node.apiPort === null ? '-' : String(node.apiPort),
      iso(node.startedAt), node.applied === null ? '-' : String(node.applied), behind(node, log.lastSeq), node.live ? '-' : iso(node.placeKeptUntil),
    ]);
  }
  return lines.join('\n') + '\n' + (status.nodes.length === 0 ? 'no nodes\n' : table(rows));
}

export async function clusterCommand(config: Config, args: readonly string[]): Promise<void> {
  const [action, ...rest] = args;
  const parsed = parseArgs(rest, ['format']);
  if (action !== 'status' || parsed.positional.length > 0) throw new UsageError(`usage:\n${CLUSTER_USAGE}`);
  if (config.cluster.length === 0) throw new UsageError('cluster status needs --cluster URLS (or JVMLENS_CLUSTER)');
  const format = parsed.options.get('format') ?? 'text';
  if (!FORMATS.includes(format)) throw new UsageError(`--format takes ${FORMATS.join(', ')}, not '${format}'`);
  const log = await openClusterLog(config.cluster);
  try {
    const status = await clusterStatus(log).catch((error: Error) => {
      throw new UnreachableError(`the cluster's JetStream did not answer (${error.message}); while it elects a leader after a server died, retry in a few seconds`);
    });
    process.stdout.write(format === 'json' ? `${JSON.stringify(status, null, 2)}\n` : text(status));
  } finally {
    await log.close();
  }
}
