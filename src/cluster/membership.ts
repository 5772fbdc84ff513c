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
    membership.#timer.unref();
    return membership;
  }

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
