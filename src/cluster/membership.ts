// Which nodes are alive: a JetStream KV bucket where each node's heartbeat expires unless renewed.
import type { KV } from '@nats-io/kv';
import { errors } from '@nats-io/transport-node';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger } from '../log.ts';
import { bucketEntries, keptBucket, readBucket } from './buckets.ts';
import { respond } from './replies.ts';

const BUCKET = 'jvmlens_nodes';
/** A node that missed heartbeats this long is gone: its reports are taken over. */
export const NODE_TTL_MS = 15_000;
const HEARTBEAT_MS = 3_000;
/** Each live node answers on this subject + its id: the quick way to know whether an id is taken. */
const PRESENCE_SUBJECT = 'jvmlens.nodes';
const PRESENCE_WAIT_MS = 1_000;
const ABSENT_CONFIRM_MS = 1_000;

export interface NodeInfo {
  nodeId: string;
  gatewayPort: number;
  apiPort: number;
  startedAt: number;
  /** The code group whose classes the node stores (src/storage/code-groups.ts); 0 in a heartbeat of a version before them. */
  codeGroup: number;
  /** The format of the log's commands the node writes and reads (commands.ts); 1 in a heartbeat of a version before it. */
  logFormat: number;
}

/** Another live node already uses this node id: two nodes with one id would each act as the other. */
export class NodeIdInUseError extends Error {}

export class Membership {
  readonly #nc: NatsConnection;
  readonly #kv: KV;
  readonly #self: NodeInfo;
  #timer: ReturnType<typeof setInterval> | null = null;
  #presence: Subscription | null = null;

  private constructor(nc: NatsConnection, kv: KV, self: NodeInfo) {
    this.#nc = nc;
    this.#kv = kv;
    this.#self = self;
  }

  static async join(nc: NatsConnection, self: NodeInfo, replicas: number, logger: Logger): Promise<Membership> {
    const kv = await keptBucket(nc, BUCKET, { ttl: NODE_TTL_MS, replicas });
    await refuseTakenId(nc, kv, self.nodeId, logger);
    const membership = new Membership(nc, kv, self);
    membership.#presence = nc.subscribe(`${PRESENCE_SUBJECT}.${self.nodeId}`, { callback: (error, message) => {
      if (error === null) respond(message, JSON.stringify(self));
    } });
    // A bucket just created on a JetStream cluster takes a moment to elect its leader.
    for (let attempt = 1; ; attempt++) {
      try {
        await membership.#beat();
        break;
      } catch (error) {
        if (attempt >= 40) throw error;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
    membership.#timer = setInterval(() => membership.#beat().catch(() => undefined), HEARTBEAT_MS);
    // A missed heartbeat is retried at the next; 15 s of them and the others take this node for gone.
    membership.#timer.unref();
    return membership;
  }

  /** The heartbeat: this node's entry, renewed before it expires. */
  async #beat(): Promise<void> {
    await this.#kv.put(this.#self.nodeId, JSON.stringify(this.#self));
  }

  /** The ids of the nodes whose heartbeat has not expired, sorted. */
  async live(): Promise<string[]> {
    return (await bucketEntries(this.#kv)).map((entry) => entry.key);
  }

  /** The nodes whose heartbeat has not expired, sorted by id. */
  members(): Promise<NodeInfo[]> {
    return heartbeats(this.#kv);
  }

  /**
   * The live nodes still connected to NATS: a node that crashed stays in `live()` until its heartbeat
   * expires, but no node answers for its id at once. Absent twice, a second apart (a node reconnecting to
   * another server is absent for a moment); a node that does not answer in time counts as connected.
   */
  async connected(): Promise<string[]> {
    const live = await this.live();
    const absent = async (nodeId: string): Promise<boolean> => {
      if (nodeId === this.#self.nodeId || (await askFor(this.#nc, nodeId)) !== 'absent') return false;
      await new Promise((resolve) => setTimeout(resolve, ABSENT_CONFIRM_MS));
      return (await askFor(this.#nc, nodeId)) === 'absent';
    };
    const gone = await Promise.all(live.map(absent));
    return live.filter((_, index) => !gone[index]);
  }

  /** Leaves at once (a clean shutdown), so others need not wait for the heartbeat to expire. */
  async leave(): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#presence?.unsubscribe();
    await this.#kv.delete(this.#self.nodeId).catch(() => undefined);
  }
}

/**
 * The live nodes as seen from outside the membership (a node before it joins, `jvmlens cluster status`),
 * sorted by id: none while the cluster has no bucket yet.
 */
export function liveNodes(nc: NatsConnection): Promise<NodeInfo[]> {
  return readBucket(nc, BUCKET, heartbeats, []);
}

async function heartbeats(kv: KV): Promise<NodeInfo[]> {
  return (await bucketEntries(kv)).map((entry) => ({ codeGroup: 0, logFormat: 1, ...(JSON.parse(entry.string()) as Partial<NodeInfo>) }) as NodeInfo);
}

/**
 * A heartbeat under this id belongs to another live node when that node answers for the id, or (where the
 * question is not answered: a node too busy, say) when it is still being renewed. One that no node answers
 * for at all is this node's own, left by a crash: it would expire by itself, and the restart need not wait.
 */
async function refuseTakenId(nc: NatsConnection, kv: KV, nodeId: string, logger: Logger): Promise<void> {
  const entry = await kv.get(nodeId);
  if (entry === null || entry.operation !== 'PUT') return;
  const answer = await askFor(nc, nodeId);
  if (answer === 'absent') {
    logger.info('this node id\'s heartbeat was left by a process that is gone (no node answers for it); joining at once', { nodeId });
    return;
  }
  if (answer !== 'unanswered') throw inUse(nodeId, answer);
  await new Promise((resolve) => setTimeout(resolve, HEARTBEAT_MS + 1_000));
  const again = await kv.get(nodeId);
  if (again === null || again.operation !== 'PUT' || again.revision === entry.revision) return;
  throw inUse(nodeId, JSON.parse(again.string()) as NodeInfo);
}

/** Whether a live process answers for this node id now (a node that has not joined yet can ask). */
export async function answersFor(nc: NatsConnection, nodeId: string): Promise<boolean> {
  return typeof (await askFor(nc, nodeId)) === 'object';
}

/** Whether no process holds this node id now (a node too busy to answer, or paused, still holds it). */
export async function goneNode(nc: NatsConnection, nodeId: string): Promise<boolean> {
  return (await askFor(nc, nodeId)) === 'absent';
}

/**
 * Whether a node of `codeGroup` holds this id now, to give a copy of its data: one too busy to answer in time
 * counts (it may give one later).
 */
export async function nodeOfGroup(nc: NatsConnection, nodeId: string, codeGroup: number): Promise<boolean> {
  const answer = await askFor(nc, nodeId);
  return answer === 'unanswered' || (answer !== 'absent' && answer.codeGroup === codeGroup);
}

/**
 * Which of `nodeIds` store `codeGroup`'s classes, as each answers now; null where one does not answer (gone, or
 * too busy): it may be of the group.
 */
export async function nodesOfGroup(nc: NatsConnection, nodeIds: readonly string[], codeGroup: number): Promise<string[] | null> {
  const answers = await Promise.all(nodeIds.map((nodeId) => askFor(nc, nodeId)));
  const infos = answers.filter((answer): answer is NodeInfo => typeof answer === 'object');
  return infos.length < answers.length ? null : infos.filter((info) => info.codeGroup === codeGroup).map((info) => info.nodeId);
}

/** Asks the node with this id for its info: 'absent' when no node holds the id (NATS answers that at once). */
async function askFor(nc: NatsConnection, nodeId: string): Promise<NodeInfo | 'absent' | 'unanswered'> {
  try {
    const answer = await nc.request(`${PRESENCE_SUBJECT}.${nodeId}`, undefined, { timeout: PRESENCE_WAIT_MS });
    return JSON.parse(answer.string()) as NodeInfo;
  } catch (error) {
    if (error instanceof errors.RequestError && error.isNoResponders()) return 'absent';
    if (error instanceof errors.TimeoutError) return 'unanswered';
    throw error;
  }
}

function inUse(nodeId: string, other: NodeInfo): NodeIdInUseError {
  return new NodeIdInUseError(`the node id '${nodeId}' is in use by a live node (gateway port ${other.gatewayPort}, started ${new Date(other.startedAt).toISOString()}); give each node its own --node-id`);
}
