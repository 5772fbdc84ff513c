// What an operator asks of a cluster (`jvmlens cluster status`): the log's stream, the shape the cluster was
// created with, and each node: live or not, its health as it would answer a load balancer, and how far it
// has applied the log. Each node answers for itself on `jvmlens.status.<node-id>`.
import { errors } from '@nats-io/transport-node';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { STREAM } from './commands.ts';
import { recordedPositions, POSITION_TTL_MS } from './compaction.ts';
import { replicaState } from './log.ts';
import type { ClusterLog } from './log.ts';
import { respond } from './replies.ts';
import { liveNodes } from './membership.ts';
import { clusterShape } from './shards.ts';

const SUBJECT = 'jvmlens.status';
const ANSWER_WAIT_MS = 2_000;

export interface LogReplicaStatus {
  server: string;
  current: boolean;
  offline: boolean;
  /** `current`, `catching up`, `offline`, or how long the leader has not heard from it (log.ts replicaState). */
  state: string;
}

/** What a node says of itself: its health as its `/opthub-health` gives it, and how far it applied the log. */
export interface NodeHealth {
  up: boolean;
  /** Why it is DOWN, or what is degraded while UP; null when all is well. */
  note: string | null;
  applied: number;
  /** About how long it needs to apply what it knows the log holds (Replica.behindMs). */
  behindMs: number;
}

/** Answers `jvmlens cluster status` for this node. */
export function serveNodeHealth(nc: NatsConnection, nodeId: string, health: () => NodeHealth): Subscription {
  return nc.subscribe(`${SUBJECT}.${nodeId}`, { callback: (error, message) => {
    if (error === null) respond(message, JSON.stringify(health()));
  } });
}

/** A live node's own answer; or why there is none (a node too busy to answer in time, say). */
async function askHealth(nc: NatsConnection, nodeId: string): Promise<NodeHealth | string> {
  try {
    return JSON.parse((await nc.request(`${SUBJECT}.${nodeId}`, undefined, { timeout: ANSWER_WAIT_MS })).string()) as NodeHealth;
  } catch (error) {
    if (error instanceof errors.RequestError && error.isNoResponders()) return 'no process answers for it (gone, or still joining)';
    if (error instanceof errors.TimeoutError) return `no answer within ${ANSWER_WAIT_MS / 1000} s`;
    throw error;
  }
}

export interface NodeStatus {
  nodeId: string;
  /** Its heartbeat is renewed; a node that stopped or crashed is not live. */
  live: boolean;
  /** What a live node says of itself, or why it said nothing; null for a node that is not live. */
  health: NodeHealth | { unanswered: string } | null;
  gatewayPort: number | null;
  apiPort: number | null;
  startedAt: number | null;
  /** The code group whose classes a live node stores. */
  codeGroup: number | null;
  /** The format of the log's commands a live node writes and reads (commands.ts LOG_FORMAT): one version's nodes share it. */
  logFormat: number | null;
  /**
   * The log sequence it last recorded as applied (every few seconds; lower, for 40 s at most, while it keeps a
   * window for the log read again: log-checks.ts), and when; null before its first.
   */
  applied: number | null;
  recordedAt: number | null;
  /** Until when the log keeps what it has not applied (a node that stays away longer starts from a copy). */
  placeKeptUntil: number | null;
}

export interface ClusterStatus {
  log: { stream: string; commands: number; bytes: number; firstSeq: number; lastSeq: number; leader: string | null; replicas: LogReplicaStatus[] };
  vmShards: number | null;
  codeGroups: number | null;
  nodes: NodeStatus[];
}

export async function clusterStatus(log: ClusterLog): Promise<ClusterStatus> {
  const [info, shape, live, positions] = await Promise.all([log.jsm.streams.info(STREAM), clusterShape(log.nc), liveNodes(log.nc), recordedPositions(log.nc)]);
  const nodes = new Map<string, NodeStatus>();
  const status = (nodeId: string): NodeStatus => {
    let node = nodes.get(nodeId);
    if (node === undefined) {
      node = { nodeId, live: false, health: null, gatewayPort: null, apiPort: null, startedAt: null, codeGroup: null, logFormat: null, applied: null, recordedAt: null, placeKeptUntil: null };
      nodes.set(nodeId, node);
    }
    return node;
  };
  const answers = await Promise.all(live.map((info) => askHealth(log.nc, info.nodeId)));
  live.forEach((info, index) => {
    const answer = answers[index];
    Object.assign(status(info.nodeId), {
      live: true, gatewayPort: info.gatewayPort, apiPort: info.apiPort, startedAt: info.startedAt, codeGroup: info.codeGroup, logFormat: info.logFormat,
      health: typeof answer === 'string' ? { unanswered: answer } : answer,
    });
  });
  for (const position of positions) {
    Object.assign(status(position.nodeId), { applied: position.applied, recordedAt: position.recordedAt, placeKeptUntil: position.recordedAt + POSITION_TTL_MS });
  }
  const { cluster, state } = info;
  return {
    log: {
      stream: STREAM, commands: state.messages, bytes: state.bytes, firstSeq: state.first_seq, lastSeq: state.last_seq,
      // A server outside any NATS cluster gives no cluster state: it leads the log alone, never electing.
      leader: cluster === undefined ? (log.nc.info?.server_name ?? 'the only server') : cluster.leader || null,
      replicas: (cluster?.replicas ?? []).map((peer) => ({ server: peer.name, current: peer.current, offline: peer.offline === true, state: replicaState(peer) })),
    },
    vmShards: shape?.vmShards ?? null,
    codeGroups: shape?.codeGroups ?? null,
    nodes: [...nodes.values()].sort((a, b) => (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0)),
  };
}
