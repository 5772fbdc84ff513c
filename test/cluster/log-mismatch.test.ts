// A node that read another history of the log than the others goes DOWN, says why, and rebuilds itself from
// a copy of a node that agrees with them: real processes, one nats-server and three nodes comparing their
// reading every 4 commands (`--test-log-check-every`), one of which hashes other bytes than it read at the
// log's start (`--test-faults misread-log`), as a node whose server gave it another history for a while would,
// and whose reading of the membership lists no other node (`unlisted-peers`): it asks the nodes that agreed.
// Its first agent batches are in its history only: the log holds stand-ins for them (`lose-writes`), and it
// reads their message ids there (`read-lost-writes`); it hands them to the others before it rebuilds.
// The two that read alike stay UP and never name each other; the odd one is UP again with every write. A
// node that finds it read the odd history while it still replays the log at its start rebuilds itself too.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { FOUND_ODD, recordedWindows } from '../../src/cluster/log-checks.ts';
import { PARTING } from '../../src/cluster/log-partings.ts';
import { HANDING_OVER } from '../../src/cluster/hand-over-writes.ts';
import { ingest, vmStart } from '../helpers/events.ts';
import { request, startService, waitForHealth } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';
import { CheckingCluster, natsMissing } from '../helpers/cluster.ts';

const KEY = 'log_mismatch_test_key_01234567';
const cluster = new CheckingCluster(KEY);
const { nodes } = cluster;

before(async () => {
  if (!natsMissing) await cluster.start('jvmlens-log-mismatch-', { a: [], b: ['misread-log', 'unlisted-peers', 'lose-writes', 'read-lost-writes'], c: [] });
});

after(() => cluster.stop());

test('the node that read the log otherwise than the two others is DOWN, says why, and rebuilds itself from a copy of one of them; the two stay UP', { skip: natsMissing && 'nats-server is not installed' }, async () => {
  // Null while the node's ports are closed (it is restarting).
  const healthOf = async (node: RunningService) => {
    const health = await request(`${node.gatewayUrl}/opthub-health`).catch(() => null);
    return health === null ? null : { status: health.status, note: String(health.body.note ?? '') };
  };
  const [a, b, c] = nodes;
  const vmId = (index: number) => `10c5e000-0000-4000-8000-${String(index).padStart(12, '0')}`;
  // Two VM starts through b that only b's history holds.
  const onlyB = [`10c5e000-0000-4000-8000-b0000000000${1}`, `10c5e000-0000-4000-8000-b0000000000${2}`];
  for (const id of onlyB) {
    const written = await ingest(b.gatewayUrl, KEY, [vmStart(id, Date.now())]);
    assert.equal(written.status, 200, JSON.stringify(written.body));
  }
  // Writes through a and c, until b compared a window the two others recorded too (every 4 commands) and
  // left the load balancer: DOWN with the reason, then saying it restarts, then its ports closed meanwhile.
  const deadline = Date.now() + 30_000;
  let index = 0;
  let odd = await healthOf(b);
  while (odd?.status === 200 && Date.now() < deadline) {
    const written = await ingest([a, c][index % 2].gatewayUrl, KEY, [vmStart(vmId(index), Date.now())]);
    assert.equal(written.status, 200, JSON.stringify(written.body));
    index++;
    odd = await healthOf(b);
  }
  assert.notEqual(odd?.status, 200, `b after ${index} writes: ${odd?.note}`);
  if (odd !== null) {
    assert.equal(odd.status, 503, odd.note);
    assert.match(odd.note, /^(this node read the cluster log's commands \d+ to \d+ otherwise than a and c, which agree \(JetStream's replicas disagree\)|restarting to take a copy of another node's data: this node read another history of the cluster log$|starting)/);
  }
  for (const node of [a, c]) {
    const health = await healthOf(node);
    assert.equal(health?.status, 200, health?.note);
    // Each names b at most (once it compared a window b recorded), never the other.
    const named = /from what ([\w, ]+) read/.exec(health!.note)?.[1].split(', ') ?? [];
    assert.deepEqual(named.filter((other) => other !== 'b'), [], health!.note);
  }

  // b starts again, on its ports, from a copy of a's or c's data, and is UP with every write.
  await waitForHealth(b, 200, 60_000);
  const log = b.stderr();
  assert.match(log, /this node read another history of the cluster log than every other node/);
  assert.match(log, /restarting to take a copy of another node's data: this node read another history of the cluster log/);
  assert.match(log, /"message":"this node starts from a copy of a live node's data","from":"[ac]"/);
  // It handed its two writes to the others before it rebuilt; they and it hold them now.
  const handedOver = log.indexOf(HANDING_OVER);
  assert.ok(handedOver > 0 && handedOver < log.indexOf('restarting to take a copy'), log);
  assert.match(log.slice(handedOver), /^[^"]*","writes":2,/);
  for (const node of [a, c, b]) for (const id of onlyB) assert.equal((await request(`${node.apiUrl}/public/instance/${id}`, { key: KEY })).status, 200, `${id} on ${node.gatewayUrl}`);
  // Its hashes of the history it no longer holds are gone: those it records now are of the copy it holds,
  // the history a and c read, so a node replaying the log later finds no reading of b's otherwise.
  const nc = await connect({ servers: cluster.natsUrl });
  // b recorded its own hash of each command of the window it was found odd by, so that the nodes tell where
  // their readings part; any that told found the window's first command (b hashed each otherwise).
  const found = JSON.parse(log.split('\n').find((line) => line.includes(FOUND_ODD))!) as { from: number; to: number };
  const commands = await (await new Kvm(nc).open('jvmlens_log_checks')).get(`commands.${found.to}.b`);
  assert.equal(commands?.value.length, 4 * (found.to - found.from + 1));
  for (const line of [a, b, c].flatMap((node) => node.stderr().split('\n').filter((entry) => entry.includes(PARTING)))) {
    const told = JSON.parse(line) as { from: number; partings: { seq: number }[] };
    assert.ok(told.partings.every((parting) => parting.seq === told.from), line);
  }
  const recorded = await recordedWindows(nc).finally(() => nc.close());
  const hashOf = (nodeId: string, to: number) => recorded.find((window) => window.nodeId === nodeId && window.to === to)?.crc;
  assert.ok(hashOf('a', 4) !== undefined, JSON.stringify(recorded));
  for (const window of recorded.filter((window) => window.nodeId === 'b' && window.to <= 8)) {
    // Each compared where a or c recorded that window too (the later one may not be whole yet).
    const theirs = hashOf('a', window.to) ?? hashOf('c', window.to);
    if (theirs !== undefined) assert.equal(window.crc, theirs, JSON.stringify(recorded));
  }
  for (let k = 0; k < index; k++) assert.equal((await request(`${b.apiUrl}/public/instance/${vmId(k)}`, { key: KEY })).status, 200, `b holds write ${k + 1} of ${index}`);
  // And stays UP: it reads the log as the others do now.
  const later = await ingest(a.gatewayUrl, KEY, [vmStart(vmId(index), Date.now())]);
  assert.equal(later.status, 200, JSON.stringify(later.body));
  assert.equal((await request(`${b.apiUrl}/public/instance/${vmId(index)}`, { key: KEY })).status, 200);
  assert.equal((await healthOf(b))?.status, 200);
});

test('a node that reads the odd history while it replays the log at its start rebuilds itself before it serves', { skip: natsMissing && 'nats-server is not installed' }, async () => {
  const [a, , c] = nodes;
  // Windows 5-8 and 9-12 exist, and a and c hashed them.
  for (let index = 100; index < 112; index++) {
    const written = await ingest(a.gatewayUrl, KEY, [vmStart(`10c5e000-0000-4000-8000-${String(index).padStart(12, '0')}`, Date.now())]);
    assert.equal(written.status, 200, JSON.stringify(written.body));
  }
  // d hashes the log's first 8 commands otherwise, and applies each command 100 ms late: it finds it read
  // window 5-8 otherwise than a and c while it still replays the log.
  const d = await startService({ noStaticKey: true, dataDir: `${cluster.dir}/d`, args: cluster.args('d', 'misread-log', 'slow-apply'), waitReady: false });
  nodes.push(d);
  await waitForHealth(d, 200, 60_000);
  const log = d.stderr();
  const restarted = log.indexOf('restarting to take a copy of another node\'s data');
  assert.ok(restarted > 0, log);
  assert.equal(log.lastIndexOf('"message":"ready"', restarted), -1, 'not ready before the restart');
  assert.match(log, /"message":"this node starts from a copy of a live node's data","from":"[ac]"/);
  assert.equal((await request(`${d.apiUrl}/public/instance/10c5e000-0000-4000-8000-000000000111`, { key: KEY })).status, 200, 'd holds the last write');
});
