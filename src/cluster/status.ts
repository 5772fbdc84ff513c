// What an operator asks of a cluster (`jvmlens cluster status`): the log's stream, the shape the cluster was
// created with, and each node: live or not, and how far it has applied the log.
import { STREAM } from './commands.ts';
import { recordedPositions, POSITION_TTL_MS } from './compaction.ts';
import type { ClusterLog } from './log.ts';
import { liveNodes } from './membership.ts';
import { clusterShape } from './shards.ts';

export interface LogReplicaStatus {
  server: string;
  current: boolean;
  offline: boolean;
}

export interface NodeStatus {
  nodeId: string;
  /** Its heartbeat is renewed; a node that stopped or crashed is not live. */
  live: boolean;
  gatewayPort: number | null;
  apiPort: number | null;
  startedAt: number | null;
  /** The log sequence it last recorded as applied (every few seconds), and when; null before its first. */
  applied: number | null;
  recordedAt: number | null;
  /** Until when the log keeps what it has not applied (a node that stays away longer starts from a copy). */
  placeKeptUntil: number | null;
}

export interface ClusterStatus {
  log: { stream: string; commands: number; bytes: number; firstSeq: number; lastSeq: number; leader: string | null; replicas: LogReplicaStatus[] };
  vmShards: number | null;
  nodes: NodeStatus[];
}

export async function clusterStatus(log: ClusterLog): Promise<ClusterStatus> {
  const [info, shape, live, positions] = await Promise.all([log.jsm.streams.info(STREAM), clusterShape(log.nc), liveNodes(log.nc), recordedPositions(log.nc)]);
  const nodes = new Map<string, NodeStatus>();
  const status = (nodeId: string): NodeStatus => {
    let node = nodes.get(nodeId);
    if (node === undefined) {
      node = { nodeId, live: false, gatewayPort: null, apiPort: null, startedAt: null, applied: null, recordedAt: null, placeKeptUntil: null };
      nodes.set(nodeId, node);
    }
    return node;
  };
  for (const info of live) Object.assign(status(info.nodeId), { live: true, gatewayPort: info.gatewayPort, apiPort: info.apiPort, startedAt: info.startedAt });
  for (const position of positions) {
    Object.assign(status(position.nodeId), { applied: position.applied, recordedAt: position.recordedAt, placeKeptUntil: position.recordedAt + POSITION_TTL_MS });
  }
  const { cluster, state } = info;
  return {
    log: {
      stream: STREAM, commands: state.messages, bytes: state.bytes, firstSeq: state.first_seq, lastSeq: state.last_seq,
      leader: cluster?.leader || null,
      replicas: (cluster?.replicas ?? []).map((peer) => ({ server: peer.name, current: peer.current, offline: peer.offline === true })),
    },
    vmShards: shape?.vmShards ?? null,
    nodes: [...nodes.values()].sort((a, b) => (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0)),
  };
}
