// Which live node takes which VM shard: every node computes the same owners from the same membership, every
// node gets a share, and a node leaving moves only the shards it owned. A VM's shard, and a worker's kept
// shards of the fleet's rows.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assignShards, shardOwners } from '../../src/cluster/shards.ts';
import { RowShards, vmShard } from '../../src/engine/reports/vm-shards.ts';
import type { Dictionary } from '../../src/storage/dictionary.ts';
import type { FleetColumnsView } from '../../src/storage/fleet-columns.ts';

const NODES = ['n1', 'n2', 'n3', 'n4'];

test('every shard has exactly one owner, the first of its ranking, whatever order the nodes are listed in', () => {
  const byNode = assignShards(64, NODES);
  const owned = [...byNode.values()].flat().sort((a, b) => a - b);
  assert.deepEqual(owned, Array.from({ length: 64 }, (_, shard) => shard));
  const byName = (map: Map<string, number[]>) => [...map].sort(([a], [b]) => (a < b ? -1 : 1));
  assert.deepEqual(byName(assignShards(64, [...NODES].reverse())), byName(byNode));
  for (const [node, shards] of byNode) for (const shard of shards) assert.equal(shardOwners(shard, [...NODES].reverse())[0], node);
});

test('64 shards over 4 nodes: each node owns between 8 and 24', () => {
  for (const [node, shards] of assignShards(64, NODES)) assert.ok(shards.length >= 8 && shards.length <= 24, `${node} owns ${shards.length}`);
});

test('a node leaving moves only its own shards, each to the next node of its ranking', () => {
  const before = assignShards(64, NODES);
  const after = assignShards(64, NODES.filter((node) => node !== 'n2'));
  for (const [node, shards] of before) {
    if (node === 'n2') continue;
    for (const shard of shards) assert.ok(after.get(node)!.includes(shard), `shard ${shard} stays on ${node}`);
  }
  for (const shard of before.get('n2')!) {
    const next = shardOwners(shard, NODES)[1];
    assert.ok(after.get(next)!.includes(shard), `shard ${shard} goes to ${next}`);
  }
});

test('a VM\'s shard is a fixed function of its id (the cluster\'s format)', () => {
  // FNV-1a 32-bit of the UTF-16 units: changing it would move VMs between shards across versions.
  assert.equal(vmShard('', 64), 0x811c9dc5 % 64);
  assert.equal(vmShard('a', 64), 0xe40c292c % 64);
  const counts = new Array<number>(16).fill(0);
  for (let v = 0; v < 16_000; v++) counts[vmShard(`c1a5e7e0-0000-4000-8000-${String(v).padStart(12, '0')}`, 16)]++;
  for (const count of counts) assert.ok(count > 700 && count < 1300, `shards hold about 1,000 of 16,000 VMs each: ${counts.join(', ')}`);
});

test('a worker\'s kept row shards hash only new rows, and a row whose VM arrives later is hashed then', () => {
  const names = ['', 'vm-a', 'vm-b', 'vm-c', 'vm-d'];
  let lookups = 0;
  const dict = { lookup: (id: number) => (lookups++, names[id]) } as unknown as Dictionary;
  const view = (ids: number[]) => ({ rows: ids.length, strings: { vmId: Uint32Array.from(ids) } }) as unknown as FleetColumnsView;
  const kept = new RowShards();
  const shards = { count: 16, of: [vmShard('vm-a', 16), vmShard('vm-c', 16)] };
  // Row 2 has no VM yet.
  let filter = kept.filter(shards, view([1, 2, 0]), dict);
  assert.equal(lookups, 2);
  assert.deepEqual([0, 1].map((row) => filter.ofRow[row]), [vmShard('vm-a', 16), vmShard('vm-b', 16)]);
  filter = kept.filter(shards, view([1, 2, 3, 4]), dict);
  assert.equal(lookups, 4, 'rows 2 and 3 only');
  assert.deepEqual([0, 1, 2, 3].map((row) => filter.take[filter.ofRow[row]]), [0, 1, 2, 3].map((row) => (shards.of.includes(vmShard(names[row + 1], 16)) ? 1 : 0)));
  // Another shard count: every row again.
  filter = kept.filter({ count: 8, of: [0] }, view([1, 2, 3, 4]), dict);
  assert.equal(lookups, 8);
  assert.equal(filter.ofRow[3], vmShard('vm-d', 8));
});
