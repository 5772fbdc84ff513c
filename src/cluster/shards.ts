// The cluster's shards: how many VM shards and code groups there are is fixed when the cluster is created
// (a bucket of the cluster's own settings), and which live node takes a shard is decided by rendezvous hashing, so that
// every node computes the same owners from the same membership and a node leaving moves only its shards.
import type { NatsConnection } from '@nats-io/transport-node';
import { fnv1a } from '../hash.ts';
import { keptBucket, readBucket } from './buckets.ts';

const BUCKET = 'jvmlens_cluster';
const SHAPE_KEY = 'shape';

export interface ClusterShape {
  vmShards: number;
  /** src/storage/code-groups.ts; a cluster created before code groups existed has 1. */
  codeGroups: number;
}

/** This node's shard or code group count is not the cluster's: its partitions would not fit the others'. */
export class ClusterShapeError extends Error {}

/**
 * Records `shape` as the cluster's when it has none yet (the first node to start creates it), and throws
 * ClusterShapeError when the cluster was created with another.
 */
export async function agreeOnShape(nc: NatsConnection, replicas: number, shape: ClusterShape): Promise<void> {
  const kv = await keptBucket(nc, BUCKET, { replicas });
  // A bucket just created on a JetStream cluster takes a moment to elect its leader.
  for (let attempt = 1; ; attempt++) {
    try {
      const entry = await kv.get(SHAPE_KEY);
      if (entry === null || entry.operation !== 'PUT') {
        // Only if still absent: of two nodes starting at once, one shape wins and the other compares with it.
        await kv.create(SHAPE_KEY, JSON.stringify(shape)).catch(() => undefined);
        continue;
      }
      const cluster = readShape(entry.string());
      for (const [key, flag] of [['vmShards', '--vm-shards'], ['codeGroups', '--code-groups']] as const) {
        if (cluster[key] !== shape[key]) {
          throw new ClusterShapeError(`this cluster was created with ${flag} ${cluster[key]}; this node was started with ${shape[key]}: start it with ${flag} ${cluster[key]} (the count cannot change once a cluster exists)`);
        }
      }
      return;
    } catch (error) {
      if (error instanceof ClusterShapeError || attempt >= 40) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/** The shape the cluster was created with, or null before its first node started. */
export function clusterShape(nc: NatsConnection): Promise<ClusterShape | null> {
  return readBucket(nc, BUCKET, async (kv) => {
    const entry = await kv.get(SHAPE_KEY);
    return entry === null || entry.operation !== 'PUT' ? null : readShape(entry.string());
  }, null);
}

function readShape(json: string): ClusterShape {
  return { codeGroups: 1, ...(JSON.parse(json) as Partial<ClusterShape>) } as ClusterShape;
}

/** The live nodes in the order they take `shard`: the first owns it, the next takes it when the first fails. */
export function shardOwners(shard: number, nodes: readonly string[]): string[] {
  const scored = nodes.map((node) => ({ node, score: mix(fnv1a(node) ^ Math.imul(shard + 1, 0x9e3779b1)) }));
  scored.sort((a, b) => b.score - a.score || (a.node < b.node ? -1 : 1));
  return scored.map(({ node }) => node);
}

/** MurmurHash3's finalizer: FNV-1a alone of similar names and numbers ranks one node first far too often. */
function mix(hash: number): number {
  let h = hash;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Each node's shards: every shard goes to its first owner among `nodes`. */
export function assignShards(count: number, nodes: readonly string[]): Map<string, number[]> {
  const byNode = new Map<string, number[]>();
  for (let shard = 0; shard < count; shard++) {
    const owner = shardOwners(shard, nodes)[0];
    let shards = byNode.get(owner);
    if (shards === undefined) byNode.set(owner, (shards = []));
    shards.push(shard);
  }
  return byNode;
}
