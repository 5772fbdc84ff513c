// The hardening campaign's long kill -9 loop: 100 SIGKILLs during ingestion (3 with --quick); and the
// cluster's, nodes and nats-servers SIGKILLed or paused for 8 minutes (30 s with --quick), three nodes storing
// every class, then four in two code groups. The figures that matter are
// acknowledged writes and lost ones (always 0), not speed.
import { CHAOS_METHODS, keepNodeLogs, runClusterChaos } from '../cluster-chaos.ts';
import type { ChaosLayout, ClusterChaosResult } from '../cluster-chaos.ts';
import { runKillLoop } from '../kill-loop.ts';
import type { BenchRow, Suite } from '../harness.ts';
import { progress, wanted } from '../harness.ts';

const NAME = 'chaos';
const ROW = 'kill -9 during ingestion, restart, check every acknowledged batch';
const CLUSTER_ROW = 'SIGKILL or SIGSTOP of cluster nodes and nats-servers every 10-20 s during ingestion, tag edits and reports, then every acknowledged write and report checked on every node';
/**
 * The same with four nodes in two code groups: a code report needs a node of every group, and a node that
 * read an odd history copies the other node of its group. Three nodes in three groups cannot rebuild one
 * (README: give each group two nodes); a chaos run's lone-group node that read an odd window stayed DOWN.
 */
const GROUPS_ROW = `${CLUSTER_ROW}, 4 nodes in 2 code groups`;
const LAYOUTS: Record<string, ChaosLayout> = { [CLUSTER_ROW]: { nodes: 3, codeGroups: 1 }, [GROUPS_ROW]: { nodes: 4, codeGroups: 2 } };

/** The figures of a run without the path of its logs, which are gone once the bench ends. */
function withoutLogs(result: ClusterChaosResult): Omit<ClusterChaosResult, 'nodeLogs'> {
  const { nodeLogs: _gone, ...figures } = result;
  return figures;
}

async function clusterRow(seconds: number, name: string): Promise<BenchRow> {
  const started = performance.now();
  const result = await runClusterChaos(seconds, LAYOUTS[name], (line) => progress(`${NAME}: ${line}`));
  const nodesDiffer = new Set(result.vmsPerNode).size !== 1 || result.methodsPerNode.some((methods) => methods !== CHAOS_METHODS);
  if (result.lost > 0 || result.unreadable > 0 || result.wrongTags > 0 || nodesDiffer || result.reportsDiffering > 0 || result.logWindowsDiffering > 0) {
    throw new Error(`the cluster lost acknowledged writes or its nodes differ (the nodes' logs: ${keepNodeLogs(result.nodeLogs)}): ${JSON.stringify(result)}`);
  }
  // A later row's failure ends the suite without its table: the figures of this one stay in the progress lines.
  progress(`${NAME}: passed: ${JSON.stringify(withoutLogs(result))}`);
  return {
    suite: NAME,
    name,
    size: `${seconds} s, ${result.kills} kills, ${result.pauses} pauses`,
    rate: result.acknowledged / seconds,
    unit: 'ops/s',
    meanMs: (performance.now() - started) / Math.max(1, result.kills + result.pauses),
    p50Ms: 0,
    p99Ms: 0,
    rssMb: 0,
    extra: { ...withoutLogs(result), vmsPerNode: result.vmsPerNode.join(' '), methodsPerNode: result.methodsPerNode.join(' '), unansweredBy: Object.entries(result.unansweredBy).map(([why, count]) => `${why}: ${count}`).join(', '), partings: result.partings.map(({ node, other, seq, otherReadItAt, readTheirsAt }) => `${node}/${other} at ${seq} (${other} read it at ${otherReadItAt ?? '-'}, ${node} read theirs at ${readTheirsAt ?? '-'})`).join(', ') },
  };
}

export const suite: Suite = {
  name: NAME,
  rows: [ROW, CLUSTER_ROW, GROUPS_ROW],
  async run(options) {
    const rows: BenchRow[] = [];
    for (const name of [CLUSTER_ROW, GROUPS_ROW]) if (wanted(options, NAME, name)) rows.push(await clusterRow(options.quick ? 30 : 480, name));
    if (!wanted(options, NAME, ROW)) return rows;
    const kills = options.quick ? 3 : 100;
    const started = performance.now();
    const result = await runKillLoop(kills, (line) => progress(`${NAME}: ${line}`));
    if (result.lost > 0 || result.partial > 0) throw new Error(`acknowledged data lost or partial: ${JSON.stringify(result)}`);
    const seconds = (performance.now() - started) / 1000;
    return [...rows, {
      suite: NAME,
      name: ROW,
      size: `${result.kills} kills`,
      rate: result.acknowledged / seconds,
      unit: 'ops/s',
      meanMs: (seconds * 1000) / Math.max(1, result.kills),
      p50Ms: 0,
      p99Ms: 0,
      rssMb: 0,
      extra: { kills: result.kills, acknowledgedBatches: result.acknowledged, lost: result.lost, partial: result.partial, unanswered: result.unanswered },
    }];
  },
};
