// Which live node takes which VM shard: every node computes the same owners from the same membership, every
// node gets a share, and a node leaving moves only the shards it owned.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assignShards, shardOwners } from '../../src/cluster/shards.ts';
import { vmShard } from '../../src/engine/reports/vm-shards.ts';

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
