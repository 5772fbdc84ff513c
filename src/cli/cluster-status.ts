// `jvmlens cluster status --cluster URLS`: the cluster's log, shape and nodes, for the operator who adds or
// removes a node, or wants to know whether one has caught up.
import type { Config } from '../config.ts';
import { clusterStatus } from '../cluster/status.ts';
import type { ClusterStatus, NodeStatus } from '../cluster/status.ts';
import type { ClusterLog } from '../cluster/log.ts';
import { UnreachableError } from './client.ts';
import { withClusterLog } from './cluster.ts';
import { detachCommand, DETACH_USAGE } from './cluster-detach.ts';
import { forgetCommand, FORGET_USAGE } from './cluster-forget.ts';
import { parseArgs, UsageError } from './args.ts';
import { formatUsages } from './help.ts';
import type { Usage } from './help.ts';

export const CLUSTER_USAGE: readonly Usage[] = [
  {
    call: 'jvmlens cluster status --cluster URLS [--format text|json]',
    does: 'the cluster\'s log, shard count and nodes (UP, DOWN and why, or not live; how far each applied the log)',
  },
  FORGET_USAGE,
  DETACH_USAGE,
];

const FORMATS = ['text', 'json'];

function iso(time: number | null): string {
  return time === null ? '-' : new Date(time).toISOString();
}

/** How far a node applied the log: its own answer if it gave one, else its last recorded position. */
function applied(node: NodeStatus): number | null {
  return node.health !== null && 'applied' in node.health ? node.health.applied : node.applied;
}

function behind(node: NodeStatus, lastSeq: number): string {
  const position = applied(node);
  if (position === null) return '-';
  const lag = lastSeq - position;
  return lag <= 0 ? 'current' : `${lag} behind`;
}

function state(node: NodeStatus): string {
  if (node.health === null) return 'not live';
  if ('unanswered' in node.health) return 'no answer';
  return node.health.up ? 'UP' : 'DOWN';
}

function note(node: NodeStatus): string | null {
  if (node.health === null) return null;
  return 'unanswered' in node.health ? node.health.unanswered : node.health.note;
}

function table(rows: readonly string[][]): string {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column])).join('  ').trimEnd()).join('\n') + '\n';
}

/** Where the log stands: once truncation removed every command, only how far it went. */
function sequences(commands: number, first: number, last: number): string {
  if (commands > 0) return `sequences ${first}-${last}`;
  return last === 0 ? 'no command yet' : `all truncated, through ${last}`;
}

/** With code groups, the live nodes of each, so an operator sees a group left without one (or with one only). */
function groups(status: ClusterStatus): string[] {
  const { codeGroups } = status;
  if (codeGroups === null || codeGroups <= 1) return [];
  const held = Array.from({ length: codeGroups }, (_, group) => status.nodes.filter((node) => node.live && node.codeGroup === group).map((node) => node.nodeId));
  return [`groups  ${held.map((nodeIds, group) => `${group}: ${nodeIds.length === 0 ? 'no live node' : nodeIds.join(' ')}`).join('; ')}`];
}

function text(status: ClusterStatus): string {
  const { log } = status;
  const replicas = log.replicas.map((replica) => `${replica.server} (${replica.state})`).join(', ');
  const lines = [
    `log     ${log.stream}: ${log.commands} command${log.commands === 1 ? '' : 's'}, ${(log.bytes / 1e6).toFixed(1)} MB, ${sequences(log.commands, log.firstSeq, log.lastSeq)}; leader ${log.leader ?? 'none (JetStream is electing one)'}${replicas === '' ? '' : `; other replicas ${replicas}`}`,
    `shards  ${status.vmShards === null ? 'not fixed yet (no node has started)' : `${status.vmShards} VM shards, ${status.codeGroups} code group${status.codeGroups === 1 ? '' : 's'}`}`,
    ...groups(status),
    '',
  ];
  const rows = [['NODE', 'STATE', 'CODE GROUP', 'LOG FORMAT', 'GATEWAY', 'API', 'STARTED', 'APPLIED', 'LOG', 'PLACE KEPT UNTIL']];
  const notes: string[] = [];
  for (const node of status.nodes) {
    const position = applied(node);
    rows.push([
      node.nodeId, state(node), node.codeGroup === null ? '-' : String(node.codeGroup), node.logFormat === null ? '-' : String(node.logFormat), node.gatewayPort === null ? '-' : String(node.gatewayPort), node.apiPort === null ? '-' : String(node.apiPort),
      iso(node.startedAt), position === null ? '-' : String(position), behind(node, log.lastSeq), node.live ? '-' : iso(node.placeKeptUntil),
    ]);
    const said = note(node);
    if (said !== null && said !== '') notes.push(`${node.nodeId}: ${said}`);
  }
  if (status.nodes.length === 0) return lines.join('\n') + '\nno nodes\n';
  return lines.join('\n') + '\n' + table(rows) + (notes.length === 0 ? '' : `\n${notes.join('\n')}\n`);
}

/** JetStream elects a leader for a few seconds after a server died: the status is asked again meanwhile. */
const ANSWER_WAIT_MS = 10_000;

async function statusWithin(log: ClusterLog, ms: number): Promise<ClusterStatus> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await clusterStatus(log);
    } catch (error) {
      if (Date.now() > deadline) throw new UnreachableError(`the cluster's JetStream did not answer within ${ms / 1000} s (${(error as Error).message}); retry once a majority of the NATS servers is up`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

export async function clusterCommand(config: Config, args: readonly string[]): Promise<void> {
  const [action, ...rest] = args;
  if (action === 'detach') return detachCommand(config, rest);
  if (action === 'forget') return forgetCommand(config, rest);
  const parsed = parseArgs(rest, ['format']);
  if (action !== 'status' || parsed.positional.length > 0) throw new UsageError(`usage:\n${formatUsages(CLUSTER_USAGE)}`);
  if (config.cluster.length === 0) throw new UsageError('cluster status needs --cluster URLS (or JVMLENS_CLUSTER)');
  const format = parsed.options.get('format') ?? 'text';
  if (!FORMATS.includes(format)) throw new UsageError(`--format takes ${FORMATS.join(', ')}, not '${format}'`);
  const status = await withClusterLog(config, (log) => statusWithin(log, ANSWER_WAIT_MS));
  process.stdout.write(format === 'json' ? `${JSON.stringify(status, null, 2)}\n` : text(status));
}
