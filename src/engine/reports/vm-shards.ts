// VM shards: a cluster splits its fleet into a fixed number of shards by a hash of the vmId, and a report's
// partitions can each take a set of them (src/cluster/fan-out.ts). The hash is part of the cluster's
// format: every node and every version must place a VM in the same shard.

/** Some of the `count` shards of a fleet. */
export interface VmShards {
  count: number;
  of: number[];
}

/** FNV-1a over the vmId's UTF-16 code units, then modulo `count`. */
export function vmShard(vmId: string, count: number): number {
  return fnv1a(vmId) % count;
}

export function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

/** 1 at each shard of the set, by shard number. */
export function shardMask(shards: VmShards): Uint8Array {
  const mask = new Uint8Array(shards.count);
  for (const shard of shards.of) mask[shard] = 1;
  return mask;
}
