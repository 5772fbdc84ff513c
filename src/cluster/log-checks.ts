// Whether the nodes read one log: each hashes the commands it reads, a window of them at a time, and
// compares its hash of each window with the other nodes'. JetStream promises every reader one history of
// a stream; Jepsen found replicas of NATS 2.12.1 serving different ones after power failures combined with
// pauses, and a node that applied another history would serve other data with nobody the wiser.
import { crc32 } from 'node:zlib';
import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '../log.ts';
import type { Store } from '../storage/store.ts';
import { bucketEntries, keptBucket, readBucket } from './buckets.ts';

const BUCKET = 'jvmlens_log_checks';
/** Commands a window holds: a node applying 30 agent batches a second compares every two minutes or so. */
export const CHECK_EVERY = 4_096;
/** A window's hashes are kept this long: a node replaying the log later than that compares nothing. */
const CHECK_TTL_MS = 24 * 3_600_000;
/** How many of this node's latest windows are compared again at each new one: others may record them later. */
const WINDOWS_RECHECKED = 4;
/** The store's meta key holding the window this node read otherwise than every other node: it stays DOWN across restarts. */
const ODD_WINDOW = 'logOddWindow';

/** The first window a node read otherwise than every other node, and the nodes that agreed on it. */
export interface OddWindow {
  to: number;
  nodes: string[];
}

/** The window this store's node read otherwise than every other node (it is to be rebuilt), or null. */
export function storedOddWindow(store: Pick<Store, 'meta'>): OddWindow | null {
  const odd = store.meta.get(ODD_WINDOW);
  return typeof odd === 'string' ? (JSON.parse(odd) as OddWindow) : null;
}

/** The hash of the commands `to - every + 1` to `to` as one node read them. */
export interface WindowHash {
  to: number;
  crc: number;
}

/**
 * Hashes the log's commands as this process reads them, in order, and hands over the hash of each window
 * it read whole: after a gap (its first command, a restart of its reading, a truncation) it starts at the
 * next window, so a hash always covers the same commands on every node.
 */
export class LogWindows {
  readonly #every: number;
  readonly #whole: (window: WindowHash) => void;
  /** The sequence read next; 0 before the first. */
  #next = 0;
  /** Whether the window being read began here (its first command was read in order). */
  #inWindow = false;
  #crc = 0;

  constructor(whole: (window: WindowHash) => void, every = CHECK_EVERY) {
    this.#whole = whole;
    this.#every = every;
  }

  /** The command at `seq` was read: its bytes go into the window's hash. */
  read(seq: number, data: Uint8Array): void {
    if (seq !== this.#next) this.#inWindow = false;
    this.#next = seq + 1;
    if ((seq - 1) % this.#every === 0) {
      this.#inWindow = true;
      this.#crc = 0;
    }
    if (!this.#inWindow) return;
    this.#crc = crc32(data, this.#crc);
    if (seq % this.#every === 0) {
      this.#inWindow = false;
      this.#whole({ to: seq, crc: this.#crc });
    }
  }
}

/** Every window hash the nodes recorded (none before any node did), as the chaos bench checks them. */
export function recordedWindows(nc: NatsConnection): Promise<(WindowHash & { nodeId: string })[]> {
  return readBucket(nc, BUCKET, async (kv) => (await bucketEntries(kv)).map((entry) => {
    const dot = entry.key.indexOf('.');
    return { to: Number(entry.key.slice(0, dot)), nodeId: entry.key.slice(dot + 1), crc: Number(entry.string()) };
  }), []);
}

/**
 * Deletes every window hash `nodeId` recorded, once it was rebuilt from a copy of a node that agrees (before
 * it reads on): they hash a history it no longer holds, and a node comparing those windows later (one that
 * replays the log from its start) would find them differing from its own or, when it read that odd history
 * too, share them and never find itself the odd one.
 */
export async function forgetWindows(nc: NatsConnection, nodeId: string): Promise<void> {
  await readBucket(nc, BUCKET, async (kv) => {
    for (const entry of await bucketEntries(kv)) if (entry.key.slice(entry.key.indexOf('.') + 1) === nodeId) await kv.delete(entry.key);
  }, undefined);
}

export interface LogChecksOptions {
  nodeId: string;
  replicas: number;
  logger: Logger;
  store: Pick<Store, 'meta'>;
  every?: number;
  /** Called once when this node is found to have read the odd history (not for one its store recorded before). */
  foundOdd?: (odd: OddWindow) => void;
}

/**
 * Each node's window hashes, in a KV bucket. A node compares each window it records, and its few before
 * it again, with the hashes the others recorded: one that differs is named in its health note; and a node
 * whose hash no other shares while two or more others share theirs read the odd history, likely without
 * writes acknowledged meanwhile, and is DOWN until rebuilt from a copy of a node that agrees (restore.ts):
 * its store says so, so a restart does not serve the data it applied.
 */
export class LogChecks {
  readonly #kv: KV;
  readonly #nodeId: string;
  readonly #logger: Logger;
  readonly #store: Pick<Store, 'meta'>;
  readonly #every: number;
  /** This node's latest windows, oldest first. */
  readonly #recent: WindowHash[] = [];
  /** Called once this node is found to have read the odd history (ClusterNode then rebuilds it). */
  readonly #foundOdd: (odd: OddWindow) => void;
  /** The first window whose hash differed from another node's, and whose; null while none did. */
  #mismatch: { to: number; nodes: string[] } | null = null;
  /** The first window this node read otherwise than every other node, which agree; null while none. */
  #odd: OddWindow | null;

  private constructor(kv: KV, options: LogChecksOptions) {
    this.#kv = kv;
    this.#nodeId = options.nodeId;
    this.#logger = options.logger;
    this.#store = options.store;
    this.#every = options.every ?? CHECK_EVERY;
    this.#foundOdd = options.foundOdd ?? (() => undefined);
    this.#odd = storedOddWindow(options.store);
  }

  static async open(nc: NatsConnection, options: LogChecksOptions): Promise<LogChecks> {
    const kv = await keptBucket(nc, BUCKET, { replicas: options.replicas, ttl: CHECK_TTL_MS });
    return new LogChecks(kv, options);
  }

  /** Records this node's hash of a window and compares it, and the few before it, with the other nodes' hashes. */
  async record(window: WindowHash): Promise<void> {
    await this.#kv.put(`${window.to}.${this.#nodeId}`, String(window.crc));
    this.#recent.push(window);
    if (this.#recent.length > WINDOWS_RECHECKED) this.#recent.shift();
    for (const recent of this.#recent) await this.#compare(recent);
  }

  async #compare(window: WindowHash): Promise<void> {
    const theirs = new Map<string, string>();
    for await (const key of await this.#kv.keys(`${window.to}.*`)) {
      const nodeId = key.slice(key.indexOf('.') + 1);
      const entry = nodeId === this.#nodeId ? null : await this.#kv.get(key);
      if (entry !== null && entry.operation === 'PUT') theirs.set(nodeId, entry.string());
    }
    const differing = [...theirs].filter(([, crc]) => crc !== String(window.crc)).map(([nodeId]) => nodeId).sort();
    if (differing.length === 0) return;
    if (this.#mismatch === null) {
      this.#mismatch = { to: window.to, nodes: differing };
      this.#logger.error('the cluster log as this node read it differs from what other nodes read', { from: this.#from(window.to), to: window.to, nodes: differing });
    }
    const othersAgree = differing.length >= 2 && differing.length === theirs.size && new Set(differing.map((nodeId) => theirs.get(nodeId))).size === 1;
    if (othersAgree && this.#odd === null) {
      this.#odd = { to: window.to, nodes: differing };
      this.#logger.error('this node read another history of the cluster log than every other node', { from: this.#from(window.to), to: window.to, nodes: differing });
      await this.#store.meta.put(ODD_WINDOW, JSON.stringify(this.#odd));
      this.#foundOdd(this.#odd);
    }
  }

  #from(to: number): number {
    return to - this.#every + 1;
  }

  /** Health's note once a window differed from another node's (until the node restarts), or null. */
  get degradation(): string | null {
    if (this.#mismatch === null) return null;
    const { to, nodes } = this.#mismatch;
    return `degraded: the cluster log's commands ${this.#from(to)} to ${to} as this node read them differ from what ${nodes.join(', ')} read (JetStream's replicas disagree): the nodes' data may differ; compare them before trusting either`;
  }

  /** Why this node should not serve (health DOWN): it read the odd history; null otherwise. */
  get problem(): string | null {
    if (this.#odd === null) return null;
    const { to, nodes } = this.#odd;
    return `this node read the cluster log's commands ${this.#from(to)} to ${to} otherwise than ${nodes.join(' and ')}, which agree (JetStream's replicas disagree): its data likely lacks writes acknowledged meanwhile; it rebuilds itself from a copy of ${nodes.join(' or ')}'s data (or stop it, delete its data directory, start it again)`;
  }
}
