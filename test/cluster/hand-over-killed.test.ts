// A node that read the odd history of the log hands the others its writes only its history held before it
// rebuilds itself (log-mismatch.test.ts); killed during that hand-over, it finishes it at its next start,
// from the writes it journaled (src/cluster/write-journal.ts), before it takes a copy of another node's data.
// Real processes: one nats-server, three nodes comparing their reading every 4 commands; b hashes other
// bytes than it read at the log's start (`--test-faults misread-log`), its first two agent batches are in its
// history only (`lose-writes`, `read-lost-writes`), and its hand-over waits 40 s (`slow-hand-over`): it is
// killed then, and started again without faults.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CHECKING_HAND_OVER, FINISHING_HAND_OVER, HANDING_OVER } from '../../src/cluster/hand-over-writes.ts';
import { ingest, vmStart } from '../helpers/events.ts';
import { request, startService, waitForHealth } from '../helpers/service.ts';
import { CheckingCluster, natsMissing } from '../helpers/cluster.ts';

const KEY = 'hand_over_killed_test_key_01234';
const cluster = new CheckingCluster(KEY);

before(async () => {
  if (!natsMissing) await cluster.start('jvmlens-hand-over-killed-', { a: [], b: ['misread-log', 'lose-writes', 'read-lost-writes', 'slow-hand-over'], c: [] });
});

after(() => cluster.stop());

test('a node killed while it hands its writes to the nodes that agreed finishes the hand-over at its next start, and every node holds them', { skip: natsMissing && 'nats-server is not installed' }, async () => {
  const { nodes } = cluster;
  const [a, b, c] = nodes;
  const vmId = (index: number) => `4a0d0000-0000-4000-8000-${String(index).padStart(12, '0')}`;
  const onlyB = [vmId(900_001), vmId(900_002)];
  for (const id of onlyB) assert.equal((await ingest(b.gatewayUrl, KEY, [vmStart(id, Date.now())])).status, 200);
  // Writes through a and c until b found it read the odd history and journaled the writes it hands over.
  const deadline = Date.now() + 30_000;
  let index = 0;
  while (!b.stderr().includes(CHECKING_HAND_OVER)) {
    assert.ok(Date.now() < deadline, `b has not begun a hand-over after ${index} writes:\n${b.stderr()}`);
    assert.equal((await ingest([a, c][index % 2].gatewayUrl, KEY, [vmStart(vmId(index), Date.now())])).status, 200);
    index++;
  }
  assert.match(b.stderr().slice(b.stderr().indexOf(CHECKING_HAND_OVER)), /^[^"]*","writes":2,/);
  await b.stop({ keepData: true, signal: 'SIGKILL' });
  assert.doesNotMatch(b.stderr(), new RegExp(HANDING_OVER));
  for (const id of onlyB) assert.equal((await request(`${a.apiUrl}/public/instance/${id}`, { key: KEY })).status, 404, `${id} only in b's history`);

  const again = await startService({ noStaticKey: true, dataDir: b.dataDir, args: cluster.args('b'), waitReady: false });
  nodes[1] = again;
  await waitForHealth(again, 200, 60_000);
  const log = again.stderr();
  const finishing = log.indexOf(FINISHING_HAND_OVER);
  const handedOver = log.indexOf(HANDING_OVER);
  assert.ok(finishing > 0 && finishing < handedOver && handedOver < log.indexOf('this node starts from a copy of a live node\'s data'), log);
  assert.match(log.slice(handedOver), /^[^"]*","writes":2,/);
  for (const node of [a, c, again]) {
    for (const id of [...onlyB, ...Array.from({ length: index }, (_, k) => vmId(k))]) {
      assert.equal((await request(`${node.apiUrl}/public/instance/${id}`, { key: KEY })).status, 200, `${id} on ${node.gatewayUrl}`);
    }
  }
});
