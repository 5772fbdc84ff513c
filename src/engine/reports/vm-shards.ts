// VM shards: a cluster splits its fleet into a fixed number of shards by a hash of the vmId, and a report's
// partitions can each take a set of them (src/cluster/fan-out.ts). The hash is part of the cluster's
// format: every node and every version must place a VM in the same shard.
import { fnv1a } from '../../hash.ts';
import type { Dictionary } from '../../storage/dictionary.ts';
import type { FleetColumnsView } from '../../storage/fleet-columns.ts';

/** Some of the `count` shards of a fleet. */
export interface VmShards {
  count: number;
  of: number[];
}

/** FNV-1a over the vmId's UTF-16 code units, then modulo `count`. */
export function vmShard(vmId: string, count: number): number {
  return fnv1a(vmId) % count;
}

/** The rows a partition takes: row r when `take[ofRow[r]]` is 1. */
export interface ShardFilter {
  take: Uint8Array;
  ofRow: Uint16Array;
}

const UNKNOWN = 0xffff;

/**
 * Each fleet row's shard, kept by a worker thread between reports: a row's vmId never changes, so only rows
 * new since the last report are hashed (hashing 100k vmIds costs ~7 ms a report, and ~140 ms while their
 * strings are first read from the store).
 */
export class RowShards {
  #count = 0;
  #ofRow = new Uint16Array(0);

  filter(shards: VmShards, fleet: FleetColumnsView, dict: Dictionary): ShardFilter {
    const take = new Uint8Array(shards.count);
    for (const shard of shards.of) take[shard] = 1;
    return { take, ofRow: this.#rows(shards.count, fleet, dict) };
  }

  #rows(count: number, fleet: FleetColumnsView, dict: Dictionary): Uint16Array {
    if (count !== this.#count) {
      this.#count = count;
      this.#ofRow = new Uint16Array(0);
    }
    if (this.#ofRow.length < fleet.rows) {
      const grown = new Uint16Array(Math.max(fleet.rows, this.#ofRow.length * 2)).fill(UNKNOWN);
      grown.set(this.#ofRow);
      this.#ofRow = grown;
    }
    const ofRow = this.#ofRow;
    const vmIds = fleet.strings.vmId;
    for (let row = 0; row < fleet.rows; row++) {
      if (ofRow[row] !== UNKNOWN || vmIds[row] === 0) continue;
      ofRow[row] = vmShard(dict.lookup(vmIds[row])!, count);
    }
    return ofRow;
  }
}
