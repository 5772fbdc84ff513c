// Truncating the cluster's log, so that its JetStream stream does not grow with the fleet's whole history:
// a command leaves once every node has applied it and it is older than the retention. Each node records
// how far it applied in a KV bucket; the lowest live node truncates below the lowest position.
import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import type { ApiKeyRecord } from '../storage/records.ts';
import { bucketEntries, keptBucket, readBucket } from './buckets.ts';
import { KEYS_SUBJECT } from './commands.ts';
import { openKeyRecords, saveKeyRecords } from './keys.ts';
import type { ClusterLog } from './log.ts';

const POSITIONS = 'jvmlens_positions';
/**
 * A node that recorded no position this long loses its place: the log may be truncated past it, and it
 * then starts from a copy of a live node's data (restore.ts).
 */
export const POSITION_TTL_MS = 7 * 24 * 3_600_000;

/** How often nodes record their position and the lowest live node truncates: often enough for a short retention. */
export function compactionRoundMs(retentionMs: number): number {
  return Math.min(3_000, Math.max(100, Math.floor(retentionMs / 4)));
}

/** How far a node applied the log when it last said so. */
export interface RecordedPosition {
  nodeId: string;
  applied: number;
  recordedAt: number;
}

/** Every node's recorded position, as `jvmlens cluster status` shows them; none before any node recorded one. */
export function recordedPositions(nc: NatsConnection): Promise<RecordedPosition[]> {
  return readBucket(nc, POSITIONS, async (kv) => {
    const entries = await bucketEntries(kv);
    return entries.map((entry) => ({ nodeId: entry.key, applied: Number(entry.string()), recordedAt: entry.created.getTime() }));
  }, []);
}

/**
 * Drops a stopped node's recorded position (`jvmlens cluster forget`), as seven days without one would: the
 * log may then be truncated past it, and the node, started again after that, begins from a copy of a live node's data.
 * Whether it had one.
 */
export function forgetPosition(nc: NatsConnection, nodeId: string): Promise<boolean> {
  return readBucket(nc, POSITIONS, async (kv) => {
    const entry = await kv.get(nodeId);
    if (entry === null || entry.operation !== 'PUT') return false;
    await kv.delete(nodeId);
    return true;
  }, false);
}

export class LogCompaction {
  readonly #log: ClusterLog;
  readonly #positions: KV;
  readonly #keys: KV;
  readonly #retentionMs: number;
  /** The log's last sequence at each round of this node, oldest first: where the log stood a retention ago. */
  readonly #marks: { at: number; seq: number }[] = [];
  /** Commands below this sequence are truncated already; 1, not 0: JetStream takes a purge with seq 1 as one of the whole stream (nats-io/nats-server#4696). */
  #below = 1;

  private constructor(log: ClusterLog, positions: KV, keys: KV, retentionMs: number) {
    this.#log = log;
    this.#positions = positions;
    this.#keys = keys;
    this.#retentionMs = retentionMs;
  }

  static async open(log: ClusterLog, replicas: number, retentionMs: number): Promise<LogCompaction> {
    const positions = await keptBucket(log.nc, POSITIONS, { ttl: POSITION_TTL_MS, replicas });
    return new LogCompaction(log, positions, await openKeyRecords(log, replicas), retentionMs);
  }

  /** This node has applied the log up to `applied`: truncation never passes it. */
  async record(nodeId: string, applied: number): Promise<void> {
    await this.#positions.put(nodeId, String(applied));
  }

  /**
   * One round of the lowest live node: removes the commands every recorded node has applied that were in
   * the log a retention ago. `keys` are the API keys as this node's store holds them, saved for `keys list
   * --cluster` before the log drops key commands.
   */
  async truncate(now: number, keys: () => readonly ApiKeyRecord[]): Promise<void> {
    this.#marks.push({ at: now, seq: await this.#log.lastSeq() });
    // The newest mark at least a retention old; older ones are no longer needed.
    let old = -1;
    while (old + 1 < this.#marks.length && this.#marks[old + 1].at <= now - this.#retentionMs) old++;
    if (old < 0) return;
    const retained = this.#marks[old].seq;
    this.#marks.splice(0, old);
    let lowest = Number.POSITIVE_INFINITY;
    for (const entry of await bucketEntries(this.#positions)) lowest = Math.min(lowest, Number(entry.string()));
    const below = Math.min(retained, lowest) + 1;
    if (!Number.isFinite(below) || below <= this.#below) return;
    const firstKey = await this.#log.nextOn(KEYS_SUBJECT, this.#below);
    if (firstKey !== null && firstKey < below) await saveKeyRecords(this.#keys, keys());
    await this.#log.purgeBelow(below);
    this.#below = below;
  }
}
