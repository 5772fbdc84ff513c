// Which nodes are alive: a JetStream KV bucket where each node's heartbeat expires unless renewed.
import { Kvm } from '@nats-io/kv';
import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';

const BUCKET = 'jvmlens_nodes';
/** A node that missed heartbeats this long is gone: its reports are taken over. */
export const NODE_TTL_MS = 15_000;
const HEARTBEAT_MS = 3_000;

export interface NodeInfo {
  nodeId: string;
  gatewayPort: number;
  apiPort: number;
  startedAt: number;
}

/** Another live node already uses this node id: two nodes with one id would each act as the other. */
export class NodeIdInUseError extends Error {}

export class Membership {
  readonly #kv: KV;
  readonly #self: NodeInfo;
  #timer: ReturnType<typeof setInterval> | null = null;

  private constructor(kv: KV, self: NodeInfo) {
    this.#kv = kv;
    this.#self = self;
  }

  static async join(nc: NatsConnection, self: NodeInfo, replicas: number): Promise<Membership> {
    const kv = await new Kvm(nc).create(BUCKET, { ttl: NODE_TTL_MS, replicas, history: 1 });
    await refuseTakenId(kv, self.nodeId);
    const membership = new Membership(kv, self);
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
    const ids: string[] = [];
    for await (const key of await this.#kv.keys()) ids.push(key);
    return ids.sort();
  }

  /** Leaves at once (a clean shutdown), so others need not wait for the heartbeat to expire. */
  async leave(): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer);
    await this.#kv.delete(this.#self.nodeId).catch(() => undefined);
  }
}

/**
 * A heartbeat under this id that is still being renewed belongs to another live node. One that stops
 * changing is this node's own, left by a crash (it would expire by itself).
 */
async function refuseTakenId(kv: KV, nodeId: string): Promise<void> {
  const entry = await kv.get(nodeId);
  if (entry === null || entry.operation !== 'PUT') return;
  await new Promise((resolve) => setTimeout(resolve, HEARTBEAT_MS + 1_000));
  const again = await kv.get(nodeId);
  if (again === null || again.operation !== 'PUT' || again.revision === entry.revision) return;
  const other = JSON.parse(again.string()) as NodeInfo;
  throw new NodeIdInUseError(`the node id '${nodeId}' is in use by a live node (gateway port ${other.gatewayPort}, started ${new Date(other.startedAt).toISOString()}); give each node its own --node-id`);
}
