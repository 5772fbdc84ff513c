// Whether the nodes read one log (src/cluster/log-checks.ts): each records its hash of each window of the
// log it applied (applied-windows.ts), and the later node to record a window's hash names the nodes whose
// hash differs in its health note. The bucket is a real nats-server's.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { DECISION_VOIDED, FINDING_GONE, FINDING_NO_COPY, FINDING_VOIDED, LogChecks, NO_COPY_CAN_COME, readersOfRight, recordedWindows, storedOddWindow } from '../../src/cluster/log-checks.ts';
import type { LogChecksOptions } from '../../src/cluster/log-checks.ts';
import { PARTING } from '../../src/cluster/log-partings.ts';
import type { WindowHash } from '../../src/cluster/applied-windows.ts';
import { untilAnswered } from '../../src/cluster/log.ts';
import { startNatsServers } from '../../src/cluster/nats-servers.ts';
import type { NatsServer } from '../../src/cluster/nats-servers.ts';
import type { Logger } from '../../src/log.ts';
import { openStore } from '../../src/storage/store.ts';
import type { Store } from '../../src/storage/store.ts';
import { tempDir } from '../helpers/service.ts';

const missing = spawnSync('nats-server', ['--version']).error !== undefined;
if (missing && process.env.CI === 'true') throw new Error('nats-server is not installed (apt-get install nats-server)');

let nats: NatsServer[] = [];
const connections: NatsConnection[] = [];
const stores = new Set<Store>();
const logged: string[] = [];
/** What was logged with its fields, for the tests that look at them. */
const details: { message: string; detail: unknown }[] = [];
const log = (message: string, detail?: unknown) => {
  logged.push(message);
  details.push({ message, detail });
};
const logger: Logger = { info: () => undefined, warn: log, error: log };
/** The nodes told they read the odd history (their ClusterNode then rebuilds them). */
const foundOdd: string[] = [];
/** Nodes whose process is gone: their reading is not taken as right, as no copy of their data could be had. */
const gone = new Set<string>();

before(async () => {
  if (missing) return;
  nats = await startNatsServers(1, tempDir('jvmlens-log-checks-'));
});

after(async () => {
  await Promise.all(connections.map((nc) => nc.close()));
  await Promise.all([...stores].map((store) => store.close()));
  await Promise.all(nats.map((server) => server.stop()));
});

async function checksOf(nodeId: string, store: Store = openStore(tempDir(`jvmlens-log-checks-${nodeId}-`)), readAgain?: Pick<LogChecksOptions, 'readAgain' | 'readAgainAfterMs' | 'goneForGoodMs' | 'canGiveCopy' | 'groupPeers' | 'commandsOf'>): Promise<LogChecks> {
  const nc = await connect({ servers: nats[0].url });
  connections.push(nc);
  stores.add(store);
  return LogChecks.open(nc, { nodeId, replicas: 1, logger, store, every: 4, foundOdd: () => foundOdd.push(nodeId), live: async (other) => !gone.has(other), ...readAgain });
}

test('a node compares its windows with the others\' as they record them; the odd one out of three is DOWN, across restarts; two that differ only note it', { skip: missing && 'nats-server is not installed' }, async () => {
  const [n1, n2, n3] = [await checksOf('n1'), await checksOf('n2'), await checksOf('n3')];
  await n1.record({ to: 8, crc: 11 });
  await n2.record({ to: 8, crc: 11 });
  assert.equal(n2.degradation, null, 'the same hash as n1');
  await n3.record({ to: 8, crc: 12 });
  assert.equal(n3.degradation, 'degraded: the cluster log\'s commands 5 to 8 as this node read them differ from what n1, n2 read (JetStream\'s replicas disagree): the nodes\' data may differ; compare them before trusting either');
  assert.equal(n3.problem, 'this node read the cluster log\'s commands 5 to 8 otherwise than n1 and n2, which agree (JetStream\'s replicas disagree): its data likely lacks writes acknowledged meanwhile; it rebuilds itself from a copy of n1 or n2\'s data (or stop it, delete its data directory, start it again)');
  assert.equal(n1.degradation, null, 'n1 recorded before the others');
  assert.deepEqual(logged, ['the cluster log as this node read it differs from what other nodes read', 'this node read another history of the cluster log than every other node']);
  // n1's next window compares window 8 again, which n3 recorded since.
  await n1.record({ to: 12, crc: 5 });
  assert.match(n1.degradation!, /commands 5 to 8 .* from what n3 read/);
  assert.equal(n1.problem, null, 'n2 read as n1 did');
  assert.deepEqual(foundOdd, ['n3'], 'n3 is told once, to rebuild itself');
  // The odd node's store says so: started again on it, it is still DOWN (its start copies another node's data first, restore.ts).
  const n3Store = [...stores][2];
  assert.equal((await checksOf('n3', n3Store)).problem, n3.problem);
  assert.deepEqual(foundOdd, ['n3'], 'a finding the store kept is not told again');
  // Two nodes that differ, and no third: neither can tell which read the odd history.
  const [n4, n5] = [await checksOf('n4'), await checksOf('n5')];
  await n4.record({ to: 100, crc: 1 });
  await n5.record({ to: 100, crc: 2 });
  assert.match(n5.degradation!, /commands 97 to 100 .* from what n4 read/);
  assert.equal(n5.problem, null);
  assert.equal(await n5.undecided(), 'its reading of the cluster log\'s commands 97 to 100 differs from another node\'s, and which is right is not decided yet', 'n5 gives no copy of its data meanwhile');
  assert.equal(await n1.undecided(), null);
});

test('where no two of three nodes read a window alike, the first by id is taken as right, once for all: the two others rebuild, even one that compared the window long before', { skip: missing && 'nats-server is not installed' }, async () => {
  const [n6, n7, n8] = [await checksOf('n6'), await checksOf('n7'), await checksOf('n8')];
  await n7.record({ to: 200, crc: 2 });
  await n8.record({ to: 200, crc: 3 });
  assert.equal(n8.problem, null, 'two cannot tell which is right');
  // n8 reads on; window 200 is no longer among its latest four, but it differed with nothing decided.
  for (const to of [204, 208, 212, 216]) await n8.record({ to, crc: 1 });
  await n6.record({ to: 200, crc: 1 });
  assert.equal(n6.problem, null);
  assert.match(n6.degradation!, /commands 197 to 200 .* from what n7, n8 read/);
  // n8, asked for a copy of its data, compares again first: the decision n6 recorded settles window 200.
  assert.equal(await n8.undecided(), null);
  await n8.record({ to: 220, crc: 1 });
  assert.equal(n8.problem, 'this node read the cluster log\'s commands 197 to 200 otherwise than n6, whose reading is taken as right (no two nodes read them alike) (JetStream\'s replicas disagree): its data likely lacks writes acknowledged meanwhile; it rebuilds itself from a copy of n6\'s data (or stop it, delete its data directory, start it again)');
  await n7.record({ to: 204, crc: 1 });
  assert.match(n7.problem!, /otherwise than n6, whose reading is taken as right/);
  assert.deepEqual(foundOdd.slice(-2), ['n8', 'n7']);
  assert.ok(logged.includes('no two nodes read the cluster log alike: this node takes the reading of the first of them by id as right'));
  // A node that compares the window later follows the reading taken as right, however few others are left:
  // n7 and n8 were rebuilt (their hashes gone) and n9 read window 200 as n7 had.
  const n9 = await checksOf('n9');
  await n9.record({ to: 200, crc: 2 });
  assert.match(n9.problem!, /commands 197 to 200 otherwise than n6/);
});

test('where no two of three nodes read a window alike, the reading holding commands the others lack is taken as right once each recorded its commands\' hashes; the first by id where one does not for a while', { skip: missing && 'nats-server is not installed' }, async () => {
  // n91 read commands 1501 to 1504 as 7, 8, 9, 10; n90 lacks 8, n92 lacks 9, each later command shifted.
  const commands = (...hashes: number[]) => ({ commandsOf: () => Uint32Array.of(...hashes) });
  const n90 = await checksOf('n90', undefined, commands(7, 9, 10, 11));
  const n91 = await checksOf('n91', undefined, commands(7, 8, 9, 10));
  const n92 = await checksOf('n92', undefined, commands(7, 8, 10, 11));
  await n90.record({ to: 1504, crc: 1 });
  await n91.record({ to: 1504, crc: 2 });
  await n92.record({ to: 1504, crc: 3 });
  assert.equal(n92.problem, null, 'n90 has not recorded its commands yet: n92 waits for them');
  assert.match((await n92.undecided())!, /commands 1501 to 1504 differs from another node's, and which is right is not decided yet/);
  await n90.record({ to: 1508, crc: 4 });
  assert.equal(n90.problem, 'this node read the cluster log\'s commands 1501 to 1504 otherwise than n91, whose reading holds commands the others lack where they part (JetStream\'s replicas disagree): its data likely lacks writes acknowledged meanwhile; it rebuilds itself from a copy of n91\'s data (or stop it, delete its data directory, start it again)');
  assert.ok(logged.includes('as many nodes read the cluster log one way as another: this node takes as right the reading that holds commands the others lack where they part'));
  await n92.record({ to: 1508, crc: 4 });
  assert.match(n92.problem!, /otherwise than n91, whose reading holds commands the others lack/);
  await n91.record({ to: 1508, crc: 4 });
  assert.equal(n91.problem, null);
  // n93 tells no partings (it records no commands' hashes): after a while, the first by id, as before.
  const waited = { readAgainAfterMs: 200 };
  const n93 = await checksOf('n93', undefined, waited);
  const n94 = await checksOf('n94', undefined, { ...waited, ...commands(7, 8, 9, 10) });
  const n95 = await checksOf('n95', undefined, { ...waited, ...commands(7, 9, 10, 11) });
  await n93.record({ to: 1604, crc: 1 });
  await n94.record({ to: 1604, crc: 2 });
  await n95.record({ to: 1604, crc: 3 });
  assert.equal(n95.problem, null, 'waiting for n93\'s commands');
  await new Promise((resolve) => setTimeout(resolve, 250));
  await n95.record({ to: 1608, crc: 4 });
  assert.match(n95.problem!, /otherwise than n93, whose reading is taken as right \(no two nodes read them alike\)/);
});

test('neither a node that is gone nor one that read an odd history itself is taken as right', { skip: missing && 'nats-server is not installed' }, async () => {
  const [n10, n11, n12, n13] = [await checksOf('n10'), await checksOf('n11'), await checksOf('n12'), await checksOf('n13')];
  gone.add('n10');
  await n10.record({ to: 300, crc: 1 });
  await n11.record({ to: 300, crc: 2 });
  await n12.record({ to: 300, crc: 3 });
  assert.match(n12.problem!, /commands 297 to 300 otherwise than n11, whose reading is taken as right/, 'n10, first by id, is gone');
  assert.equal(n11.problem, null);
  gone.delete('n10');
  await n10.record({ to: 304, crc: 1 });
  assert.match(n10.problem!, /commands 297 to 300 otherwise than n11/, 'back, n10 follows what was decided');
  // n10 and n12 are marked as having read an odd history: their readings of the next window do not count.
  const n14 = await checksOf('n14');
  await n10.record({ to: 308, crc: 5 });
  await n12.record({ to: 308, crc: 4 });
  await n13.record({ to: 308, crc: 6 });
  await n11.record({ to: 308, crc: 7 });
  assert.equal(n11.problem, null, 'n11 and n13 alone cannot tell');
  await n14.record({ to: 308, crc: 8 });
  assert.match(n14.problem!, /commands 305 to 308 otherwise than n11, whose reading is taken as right/, 'n10, first by id, is to be rebuilt');
  await n13.record({ to: 312, crc: 1 });
  assert.match(n13.problem!, /commands 305 to 308 otherwise than n11, whose/);
  // Where only nodes marked so read a window otherwise, nothing is undecided: n11 gives copies of its data.
  await n10.record({ to: 316, crc: 9 });
  await n11.record({ to: 316, crc: 1 });
  assert.equal(await n11.undecided(), null);
  assert.equal(n11.problem, null);
});

test('a reading taken as right no longer counts once its node turns out to have read an odd history before it: the window is decided again without it, and the nodes it made odd serve again', { skip: missing && 'nats-server is not installed' }, async () => {
  // A chaos run's deadlock: n40's record of window 700 came late (killed first), so no two of the three
  // readings of window 704 alike took n40's as right; then n40 turned out odd at window 700, which n41 and
  // n42 read alike. n40 needed a copy of their data, they of its, and each refused the other.
  const [n40Store, n41Store, n42Store] = ['n40', 'n41', 'n42'].map((nodeId) => openStore(tempDir(`jvmlens-log-checks-${nodeId}-`)));
  const [n40, n41, n42] = [await checksOf('n40', n40Store), await checksOf('n41', n41Store), await checksOf('n42', n42Store)];
  await n41.record({ to: 700, crc: 1 });
  await n42.record({ to: 700, crc: 1 });
  await n40.record({ to: 704, crc: 5 });
  await n41.record({ to: 704, crc: 6 });
  await n42.record({ to: 704, crc: 7 });
  await n41.record({ to: 708, crc: 1 });
  assert.match(n41.problem!, /commands 701 to 704 otherwise than n40, whose reading is taken as right/);
  assert.match(n42.problem!, /commands 701 to 704 otherwise than n40, whose reading is taken as right/);
  assert.equal(await n41.lookWhileWaiting(), 'wait', 'n40 is not known odd yet: n41 waits for a copy');
  assert.equal(await n40.lookWhileWaiting(), 'wait', 'n40 was not found odd');
  // n40's window 700 at last (its start records its latest windows again), compared with n41's and n42's,
  // which count there: they were found odd at a later window.
  await n40.record({ to: 700, crc: 2 });
  assert.match(n40.problem!, /commands 697 to 700 otherwise than n41 and n42, which agree/);
  assert.equal(await n40.lookWhileWaiting(), 'wait', 'n40\'s finding stands: n41 and n42 count at window 700');
  // n43 compares window 704: the decision no longer counts, and the readings that do decide it again.
  const n43 = await checksOf('n43');
  await n43.record({ to: 704, crc: 6 });
  assert.equal(n43.problem, null);
  assert.ok(logged.includes(DECISION_VOIDED), logged.join('\n'));
  // n41 and n42 start again (their next try for a copy; running, they drop it within seconds: voided-finding.test.ts): the finding by n40's reading is dropped.
  const [n41Again, n42Again] = [await checksOf('n41', n41Store), await checksOf('n42', n42Store)];
  assert.equal(n41Again.problem, null, 'n41 serves its data again, and gives n40 a copy');
  assert.equal(storedOddWindow(n41Store), null);
  assert.ok(logged.includes(FINDING_VOIDED), logged.join('\n'));
  // n42, started again, records its window 704 again, and follows the decision made without n40.
  await n42Again.record({ to: 704, crc: 7 });
  assert.match(n42Again.problem!, /commands 701 to 704 otherwise than n41 and n43, which agree/);
  assert.equal(await n41Again.undecided(), null, 'decided: n41 gives copies');
});

test('a reading taken as right no longer counts for a node waiting for a copy once its nodes have been gone long enough: the window is decided again without them', { skip: missing && 'nats-server is not installed' }, async () => {
  // n50 taken as right (no two of three readings alike), then gone for good with its data: n51 and n52
  // would wait DOWN for a copy forever.
  const goneForGoodMs = 300;
  const n51Store = openStore(tempDir('jvmlens-log-checks-n51-'));
  const [n50, n51, n52] = [await checksOf('n50'), await checksOf('n51', n51Store, { goneForGoodMs }), await checksOf('n52', undefined, { goneForGoodMs })];
  await n50.record({ to: 804, crc: 5 });
  await n51.record({ to: 804, crc: 6 });
  await n52.record({ to: 804, crc: 7 });
  await n51.record({ to: 808, crc: 1 });
  assert.match(n51.problem!, /commands 801 to 804 otherwise than n50, whose reading is taken as right/);
  assert.equal(n50.problem, null);
  gone.add('n50');
  assert.equal(await n51.lookWhileWaiting(), 'wait', 'gone since this look');
  // Back in between (a restart): the count starts again.
  await new Promise((resolve) => setTimeout(resolve, goneForGoodMs));
  gone.delete('n50');
  assert.equal(await n51.lookWhileWaiting(), 'copy', 'n50 runs again: n51 starts again to copy it');
  gone.add('n50');
  assert.equal(await n51.lookWhileWaiting(), 'wait');
  await new Promise((resolve) => setTimeout(resolve, goneForGoodMs / 2));
  assert.equal(await n51.lookWhileWaiting(), 'wait', 'not gone long enough yet');
  await new Promise((resolve) => setTimeout(resolve, goneForGoodMs));
  assert.equal(await n51.lookWhileWaiting(), 'serve');
  assert.ok(logged.includes(FINDING_GONE), logged.join('\n'));
  assert.equal(n51.problem, null, 'n51 serves its own data');
  assert.equal(storedOddWindow(n51Store), null);
  // Its windows compared again: the window is decided again among the nodes that run, n51 first by id.
  await n51.record({ to: 804, crc: 6 });
  assert.equal(n51.problem, null);
  // n52, waiting too, drops its finding once n50 has been gone as long at its own looks, and follows the new decision.
  assert.equal(await n52.lookWhileWaiting(), 'wait');
  await new Promise((resolve) => setTimeout(resolve, goneForGoodMs));
  assert.equal(await n52.lookWhileWaiting(), 'serve');
  await n52.record({ to: 804, crc: 7 });
  assert.match(n52.problem!, /commands 801 to 804 otherwise than n51, whose reading is taken as right/, 'n52 now copies n51');
  gone.delete('n50');
});

test('with code groups, a node found odd copies one of its group that read the window as the decision\'s nodes did, later; with none, it serves its own data after a while and compares that window no more', { skip: missing && 'nats-server is not installed' }, async () => {
  // n60 and n62 store group 1's classes, n61 and n63 group 0's: n61 can copy only n63.
  const groupZero = (nodeId: string) => async () => nodeId === 'n61' || nodeId === 'n63';
  const goneForGoodMs = 300;
  const n61Store = openStore(tempDir('jvmlens-log-checks-n61-'));
  const [n60, n61, n62] = [await checksOf('n60'), await checksOf('n61', n61Store, { goneForGoodMs, canGiveCopy: (nodeId) => groupZero(nodeId)() }), await checksOf('n62')];
  await n60.record({ to: 904, crc: 3 });
  await n61.record({ to: 904, crc: 4 });
  await n62.record({ to: 904, crc: 3 });
  await n61.record({ to: 908, crc: 1 });
  assert.match(n61.problem!, /commands 901 to 904 otherwise than n60 and n62, which agree/);
  const odd = storedOddWindow(n61Store)!;
  assert.deepEqual(await readersOfRight(connections[0], odd), ['n60', 'n62']);
  assert.equal(await n61.lookWhileWaiting(), 'wait', 'no node of its group to copy yet');
  // n63 records window 904 after the decision, alike: n61 may copy it, and starts again to.
  const n63 = await checksOf('n63');
  await n63.record({ to: 904, crc: 3 });
  assert.deepEqual(await readersOfRight(connections[0], odd), ['n60', 'n62', 'n63']);
  assert.equal(await n61.lookWhileWaiting(), 'copy');
  await new Promise((resolve) => setTimeout(resolve, goneForGoodMs));
  assert.equal(await n61.lookWhileWaiting(), 'wait', 'n63 could give a copy: n61 does not serve its own data');

  // Had n63 read it otherwise too, no node could give n61 a copy: it serves its own data after a while.
  await n63.record({ to: 904, crc: 5 });
  assert.deepEqual(await readersOfRight(connections[0], odd), ['n60', 'n62']);
  assert.equal(await n61.lookWhileWaiting(), 'wait', 'the count starts');
  await new Promise((resolve) => setTimeout(resolve, goneForGoodMs));
  assert.equal(await n61.lookWhileWaiting(), 'serve');
  assert.ok(logged.includes(FINDING_NO_COPY), logged.join('\n'));
  assert.equal(n61.problem, null);
  assert.equal(storedOddWindow(n61Store), null);
  const n61Windows = (await recordedWindows(connections[0])).filter((window) => window.nodeId === 'n61').map((window) => window.to);
  assert.deepEqual(n61Windows, [908], 'its hash of window 904 is gone: nobody compares it');
  // The decision stands for the other group: n62 comparing again finds nothing odd, and n61 is not found odd again.
  await n62.record({ to: 908, crc: 1 });
  assert.equal(n62.problem, null);
  await n61.record({ to: 912, crc: 2 });
  assert.equal(n61.problem, null);
});

test('with code groups, a node found odd whose group\'s other nodes all read the window otherwise serves its own data at once, and its health says so across restarts', { skip: missing && 'nats-server is not installed' }, async () => {
  // n70 and n72 store group 1's classes, n71 and n73 group 0's; n71 and n73 each read window 1204 its own way.
  const ofGroupZero = async (nodeId: string) => nodeId === 'n71' || nodeId === 'n73';
  let peersOfN73: string[] | null = null;
  const n71Store = openStore(tempDir('jvmlens-log-checks-n71-'));
  const n70 = await checksOf('n70');
  const n71 = await checksOf('n71', n71Store, { canGiveCopy: ofGroupZero, groupPeers: async () => ['n73'] });
  const n72 = await checksOf('n72');
  const n73 = await checksOf('n73', undefined, { canGiveCopy: ofGroupZero, groupPeers: async () => peersOfN73 });
  await n70.record({ to: 1204, crc: 3 });
  await n71.record({ to: 1204, crc: 4 });
  await n72.record({ to: 1204, crc: 3 });
  await n73.record({ to: 1204, crc: 5 });
  await n71.record({ to: 1208, crc: 1 });
  assert.match(n71.problem!, /commands 1201 to 1204 otherwise than n70 and n72, which agree/);
  assert.match(n73.problem!, /commands 1201 to 1204 otherwise than n70 and n72, which agree/);

  // n73's own hash of the window stays what it is: no copy can come to n71, and it does not wait for one.
  assert.equal(await n71.lookWhileWaiting(), 'serve');
  assert.ok(logged.includes(NO_COPY_CAN_COME), logged.join('\n'));
  assert.equal(n71.problem, null);
  const note = /^degraded: this node serves its own reading of the cluster log from its commands 1201 to 1204 on, which n70 and n72 read otherwise .*its data may lack writes acknowledged meanwhile$/;
  assert.match(n71.degradation!, note);
  assert.deepEqual((await recordedWindows(connections[0])).filter((window) => window.nodeId === 'n71').map((window) => window.to), [1208]);

  // n73, where a node's group cannot be told (one with a place does not answer), waits; once it can, n71 deleted
  // its hash, but serves its own reading: n73 does not wait for it either.
  assert.equal(await n73.lookWhileWaiting(), 'wait');
  assert.notEqual(n73.problem, null);
  peersOfN73 = ['n71'];
  assert.equal(await n73.lookWhileWaiting(), 'serve');
  assert.equal(n73.problem, null);

  // n71 restarted still says what it serves.
  const n71Again = await checksOf('n71', n71Store, { canGiveCopy: ofGroupZero, groupPeers: async () => ['n73'] });
  assert.equal(n71Again.problem, null);
  assert.match(n71Again.degradation!, note);
});

test('nodes whose window differs tell at which command their readings part, logged once and named in health\'s note', { skip: missing && 'nats-server is not installed' }, async () => {
  // n81 read command 1403 otherwise (commands 1401 to 1404); n80 records first, and tells at its next compare.
  const commands = (third: number) => () => Uint32Array.of(7, 8, third, 9);
  const n80 = await checksOf('n80', undefined, { commandsOf: commands(5) });
  const n81 = await checksOf('n81', undefined, { commandsOf: commands(6) });
  await n80.record({ to: 1404, crc: 1 });
  const before = logged.length;
  await n81.record({ to: 1404, crc: 2 });
  assert.ok(!logged.slice(before).includes(PARTING), 'n80 did not record its commands yet: n81 cannot tell');
  assert.match(n81.degradation!, /^degraded: the cluster log's commands 1401 to 1404 as this node read them differ from what n80 read/);
  await n80.record({ to: 1408, crc: 3 });
  const told = details.slice(before).filter((entry) => entry.message === PARTING);
  assert.deepEqual(told.map((entry) => entry.detail), [{ from: 1401, to: 1404, partings: [{ node: 'n81', seq: 1403, otherReadItAt: null, readTheirsAt: null }] }]);
  assert.match(n80.degradation!, /^degraded: the cluster log's commands 1401 to 1404 as this node read them differ from command 1403 on from what n81 read/);
  // Told once: comparing the window again does not tell it again.
  await n80.record({ to: 1412, crc: 4 });
  assert.equal(details.slice(before).filter((entry) => entry.message === PARTING).length, told.length);
});

test('a node found odd that closes its checks compares no window after: its store, closed next, is not read', { skip: missing && 'nats-server is not installed' }, async () => {
  const [n90, n91] = [await checksOf('n90'), await checksOf('n91')];
  for (const node of [n90, n91]) for (const to of [1604, 1608]) await node.record({ to, crc: 1 });
  // As ClusterNode: told it read the odd history, it shuts down to rebuild itself, closing its checks, then its store.
  const nc = await connect({ servers: nats[0].url });
  connections.push(nc);
  const store = openStore(tempDir('jvmlens-log-checks-n92-'));
  stores.add(store);
  let closing: Promise<void> | null = null;
  const readAfterClose: number[] = [];
  const n92: LogChecks = await LogChecks.open(nc, {
    nodeId: 'n92', replicas: 1, logger, store, every: 4, live: async () => true,
    foundOdd: () => (closing = n92.close()),
    commandsOf: (_from, to) => {
      if (closing !== null) readAfterClose.push(to);
      return Uint32Array.of(1, 2, 3, 4);
    },
  });
  // The window after comes in while the first is compared, as a node applying the log records them.
  await Promise.all([n92.record({ to: 1604, crc: 2 }), n92.record({ to: 1608, crc: 2 })]);
  assert.notEqual(closing, null, 'n92 was found odd at window 1604');
  await closing;
  assert.deepEqual(readAfterClose, [], 'no window compared once closed');
});

test('a window JetStream did not take while its server was down is recorded once it is back', { skip: missing && 'nats-server is not installed' }, async () => {
  const [server] = await startNatsServers(1, tempDir('jvmlens-log-checks-down-'));
  const nc = await connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
  try {
    const store = openStore(tempDir('jvmlens-log-checks-down-n30-'));
    stores.add(store);
    const n30 = await LogChecks.open(nc, { nodeId: 'n30', replicas: 1, logger, store, every: 4, live: async () => true });
    await n30.record({ to: 4, crc: 1 });
    await server.stop();
    await assert.rejects(n30.record({ to: 8, crc: 2 }));
    await server.start();
    // Once JetStream answers again (it takes seconds after a start).
    const jsm = await jetstreamManager(nc, { checkAPI: false });
    await untilAnswered(() => jsm.streams.info('KV_jvmlens_log_checks'), 30_000);
    await n30.record({ to: 12, crc: 3 });
    const mine = (await recordedWindows(nc)).filter((window) => window.nodeId === 'n30').map(({ to, crc }) => ({ to, crc })).sort((a, b) => a.to - b.to);
    assert.deepEqual(mine, [{ to: 4, crc: 1 }, { to: 8, crc: 2 }, { to: 12, crc: 3 }]);
  } finally {
    await nc.close();
    await server.stop();
  }
});

test('the log\'s tail is compared at each check while the log is quiet: the odd one out learns it once the others recorded theirs', { skip: missing && 'nats-server is not installed' }, async () => {
  const [n20, n21, n22] = [await checksOf('n20'), await checksOf('n21'), await checksOf('n22')];
  await n22.checkTail({ to: 1006, crc: 2 });
  await n20.checkTail({ to: 1006, crc: 1 });
  assert.equal(n22.problem, null, 'alone, and then two that differ');
  await n21.checkTail({ to: 1006, crc: 1 });
  assert.equal(n21.problem, null);
  await n22.checkTail({ to: 1006, crc: 2 });
  assert.equal(n22.problem, 'this node read the cluster log\'s commands 1005 to 1006 otherwise than n20 and n21, which agree (JetStream\'s replicas disagree): its data likely lacks writes acknowledged meanwhile; it rebuilds itself from a copy of n20 or n21\'s data (or stop it, delete its data directory, start it again)');
});

test('two nodes that differ with no third, for a while: the log read again tells which is right, once for all; where it cannot, both stay UP', { skip: missing && 'nats-server is not installed' }, async () => {
  // The log as read again now gives window 404's commands as n31 read them (hash 1); it holds window 504's no longer.
  const reads: string[] = [];
  const readAgain = async (from: number, to: number) => (reads.push(`${from}-${to}`), to === 404 ? 1 : null);
  const [n30, n31] = [await checksOf('n30', undefined, { readAgain, readAgainAfterMs: 300 }), await checksOf('n31', undefined, { readAgain, readAgainAfterMs: 300 })];
  await n31.record({ to: 404, crc: 1 });
  await n30.record({ to: 404, crc: 2 });
  assert.deepEqual(reads, [], 'not read again at once: a third node may record the window within seconds');
  assert.equal(n30.problem, null);
  await new Promise((resolve) => setTimeout(resolve, 350));
  await n30.record({ to: 408, crc: 5 });
  assert.deepEqual(reads, ['401-404']);
  assert.equal(n30.problem, 'this node read the cluster log\'s commands 401 to 404 otherwise than n31, as the log gives them now (too few nodes read them to tell otherwise) (JetStream\'s replicas disagree): its data likely lacks writes acknowledged meanwhile; it rebuilds itself from a copy of n31\'s data (or stop it, delete its data directory, start it again)');
  assert.ok(logged.includes('this node read the cluster log otherwise than the log reads now, as another node read it'));
  assert.deepEqual(foundOdd.slice(-1), ['n30']);
  // n31 follows the reading n30 recorded for all, without reading the log again.
  await n31.record({ to: 408, crc: 5 });
  assert.equal(n31.problem, null);
  assert.equal(await n31.undecided(), null, 'decided: n31 gives copies');
  assert.deepEqual(reads, ['401-404']);

  // Window 504: the log holds it no longer, so neither n32 nor n33 can tell; each reads it again once, and both stay UP.
  const [n32, n33] = [await checksOf('n32', undefined, { readAgain, readAgainAfterMs: 1_000 }), await checksOf('n33', undefined, { readAgain, readAgainAfterMs: 1_000 })];
  await n32.record({ to: 504, crc: 3 });
  await n33.record({ to: 504, crc: 4 });
  assert.match((await n33.undecided())!, /commands 501 to 504 differs/, 'no copy of n33\'s data while the log read again may decide');
  assert.equal(n33.keepFrom, 501, 'and the log is kept from the window on');
  for (const node of [n32, n33]) await node.record({ to: 508, crc: 6 });
  await new Promise((resolve) => setTimeout(resolve, 1_050));
  for (const to of [512, 516]) for (const node of [n32, n33]) await node.record({ to, crc: 6 });
  assert.deepEqual(reads, ['401-404', '501-504', '501-504'], 'once by each');
  assert.ok(logged.includes('the cluster log read again cannot tell which reading is right'));
  assert.equal(n32.problem, null);
  assert.equal(n33.problem, null);
  assert.match(n33.degradation!, /commands 501 to 504 .* from what n32 read/);
  assert.equal(await n33.undecided(), null, 'nothing will decide window 504: n33 gives copies again');
  assert.equal(n33.keepFrom, null);

  // Where the log cannot be read again (JetStream unavailable), a node gives copies again after twice the wait:
  // another node that only it can rebuild would wait for ever otherwise.
  const unreadable = { readAgain: async () => Promise.reject(new Error('JetStream system temporarily unavailable')), readAgainAfterMs: 500 };
  const [n34, n35] = [await checksOf('n34', undefined, unreadable), await checksOf('n35', undefined, unreadable)];
  await n34.record({ to: 604, crc: 1 });
  await n35.record({ to: 604, crc: 2 });
  assert.notEqual(await n35.undecided(), null);
  await new Promise((resolve) => setTimeout(resolve, 1_050));
  await n35.record({ to: 608, crc: 3 });
  assert.equal(n35.problem, null);
  assert.ok(logged.includes('reading the cluster log again to tell which reading is right failed; trying at the next check'));
  assert.equal(await n35.undecided(), null);
});
