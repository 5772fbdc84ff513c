// Three nodes that read the log's start three ways (nats-server 2.9.10 gave the chaos bench's nodes three
// histories of one window): no two agree, so the first node by id is taken as right, and the two others go
// DOWN, hand it their writes it did not read, and rebuild themselves from a copy of its data. Real processes,
// one nats-server, three nodes comparing their reading every 4 commands (`--test-log-check-every`): b hashes
// other bytes than it read at the log's start (`--test-faults misread-log`), c yet others
// (`misread-log-otherwise`), and c's first two agent batches are in its history only (`lose-writes`,
// `read-lost-writes`, as in log-mismatch.test.ts).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { HANDING_OVER } from '../../src/cluster/hand-over-writes.ts';
import { ingest, vmStart } from '../helpers/events.ts';
import { request, waitForHealth } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';
import { CheckingCluster, natsMissing } from '../helpers/cluster.ts';

const KEY = 'log_three_ways_test_key_0123456';
const cluster = new CheckingCluster(KEY);

before(async () => {
  if (!natsMissing) await cluster.start('jvmlens-log-three-ways-', { a: [], b: ['misread-log'], c: ['misread-log-otherwise', 'lose-writes', 'read-lost-writes'] });
});

after(() => cluster.stop());

test('where no two nodes read the log alike, the two after the first by id rebuild themselves from its data and every write is on every node', { skip: natsMissing && 'nats-server is not installed' }, async () => {
  const [a, b, c] = cluster.nodes;
  const vmId = (index: number) => `3a7e0000-0000-4000-8000-${String(index).padStart(12, '0')}`;
  const onlyC = [vmId(900_001), vmId(900_002)];
  for (const id of onlyC) assert.equal((await ingest(c.gatewayUrl, KEY, [vmStart(id, Date.now())])).status, 200);
  // Writes through a until b and c both left the load balancer (or restarted already).
  const healthOf = (node: RunningService) => request(`${node.gatewayUrl}/opthub-health`).then((health) => health.status, () => null);
  const deadline = Date.now() + 30_000;
  let index = 0;
  while ((await healthOf(b)) === 200 || (await healthOf(c)) === 200) {
    assert.ok(Date.now() < deadline, `b and c still UP after ${index} writes`);
    assert.equal((await ingest(a.gatewayUrl, KEY, [vmStart(vmId(index), Date.now())])).status, 200);
    index++;
  }
  assert.equal(await healthOf(a), 200, 'the node taken as right serves on');

  await waitForHealth(b, 200, 60_000);
  await waitForHealth(c, 200, 60_000);
  for (const node of [b, c]) {
    const log = node.stderr();
    assert.match(log, /no two nodes read the cluster log alike: this node takes the reading of the first of them by id as right","from":1,"to":4,"nodes":\["a"\]/);
    assert.match(log, /"message":"this node starts from a copy of a live node's data","from":"a"/);
  }
  assert.doesNotMatch(a.stderr(), /restarting to take a copy/);
  // c handed a the two writes only its history held before it rebuilt itself.
  const log = c.stderr();
  const handedOver = log.indexOf(HANDING_OVER);
  assert.ok(handedOver > 0 && handedOver < log.indexOf('restarting to take a copy'), log);
  assert.match(log.slice(handedOver), /^[^"]*","writes":2,"askedNode":"a"/);
  for (const node of [a, b, c]) {
    for (const id of [...onlyC, ...Array.from({ length: index }, (_, k) => vmId(k))]) {
      assert.equal((await request(`${node.apiUrl}/public/instance/${id}`, { key: KEY })).status, 200, `${id} on ${node.gatewayUrl}`);
    }
  }
});
