// Which of its writes a node that read the odd history appends again before it rebuilds itself
// (src/cluster/hand-over-writes.ts): those a node that agreed did not read, from far enough before their
// acknowledged sequence to far enough after it, or to the end of its server's history 2 s on; never one it
// read; and, once it has asked long enough, those it cannot tell (its reading does not reach back so far,
// or not yet so far on), whose copies a node that read them skips (src/cluster/applied-ids.ts). Real NATS
// requests between two clients of one nats-server; the real log's case is test/cluster/log-mismatch.test.ts.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { AcknowledgedWrites, LOST_PAST } from '../../src/cluster/acknowledged-writes.ts';
import type { AcknowledgedWrite } from '../../src/cluster/acknowledged-writes.ts';
import { handOverOwnWrites, HANDING_OVER, HANDING_OVER_UNTOLD, serveReadIds, writesToHandOver } from '../../src/cluster/hand-over-writes.ts';
import { startNatsServers } from '../../src/cluster/nats-servers.ts';
import type { NatsServer } from '../../src/cluster/nats-servers.ts';
import type { Logger } from '../../src/log.ts';
import { tempDir } from '../helpers/service.ts';

const missing = spawnSync('nats-server', ['--version']).error !== undefined;
if (missing && process.env.CI === 'true') throw new Error('nats-server is not installed (apt-get install nats-server)');

let nats: NatsServer[] = [];
let nc: NatsConnection;
const served: Subscription[] = [];

before(async () => {
  if (missing) return;
  nats = await startNatsServers(1, tempDir('jvmlens-hand-over-'));
  nc = await connect({ servers: nats[0].url });
});

after(async () => {
  for (const subscription of served) subscription.unsubscribe();
  await nc?.close();
  await Promise.all(nats.map((server) => server.stop()));
});

const quiet: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };
const write = (seq: number, msgId: string): AcknowledgedWrite => ({ seq, msgId, subject: 'jvmlens.log.events', bytes: new Uint8Array(8) });

/** A node that agreed, answering as `nodeId`, having read `ids` by sequence from `from` on, with `after` more on its server at the last. */
function agreeingNode(nodeId: string, from: number, ids: (seq: number) => string, to: number, after: number): void {
  const theirs = new AcknowledgedWrites(async () => 0, quiet);
  for (let seq = from; seq <= to; seq++) theirs.read(seq, ids(seq), seq === to ? after : to - seq + after);
  served.push(serveReadIds(nc, nodeId, theirs));
}

/** This node, having read back its writes at their acknowledged sequences. */
function oddNode(writes: AcknowledgedWrite[]): AcknowledgedWrites {
  const ours = new AcknowledgedWrites(async () => 0, quiet);
  for (const own of writes) {
    ours.acknowledged(own);
    ours.read(own.seq, own.msgId, 0);
  }
  ours.close();
  return ours;
}

async function handOver(ours: AcknowledgedWrites, nodes: string[], to: number, askForMs?: number): Promise<{ appended: string[]; warnings: string[]; ms: number }> {
  const appended: string[] = [];
  const warnings: string[] = [];
  const logger: Logger = { info: () => undefined, warn: (message) => warnings.push(message), error: (message) => warnings.push(message) };
  const started = Date.now();
  const count = await handOverOwnWrites(nc, writesToHandOver(ours, { to, from: to - 3, nodes }), async (own) => appended.push(own.msgId), nodes, logger, askForMs);
  assert.equal(count, appended.length);
  return { appended, warnings, ms: Date.now() - started };
}

test('writes the node that agreed did not read, to the end of its server\'s history, are appended again 2 s on; those it read are not; a node that does not answer is passed over', { skip: missing && 'nats-server is not installed' }, async () => {
  // b1 read w1 at another sequence (a shifted history), not w2; it read all its server holds.
  agreeingNode('b1', 1, (seq) => (seq === 12 ? 'w1' : `other-${seq}`), 20, 0);
  const ours = oddNode([write(10, 'w1'), write(11, 'w2')]);
  const { appended, warnings, ms } = await handOver(ours, ['gone', 'b1'], 12);
  assert.deepEqual(appended, ['w2']);
  assert.deepEqual(warnings, [HANDING_OVER]);
  assert.ok(ms >= 2_000, `decided after ${ms} ms`);
});

test('a write the node that agreed did not read by LOST_PAST commands past it is appended again at once', { skip: missing && 'nats-server is not installed' }, async () => {
  // Not at the end of its server's history: only the distance tells.
  agreeingNode('b2', 1, (seq) => `other-${seq}`, 10 + LOST_PAST, 5);
  const { appended, ms } = await handOver(oddNode([write(10, 'w3')]), ['b2'], 12);
  assert.deepEqual(appended, ['w3']);
  assert.ok(ms < 2_000, `decided after ${ms} ms`);
});

test('a write the node that agreed cannot tell of is appended again once the node has asked long enough: its reading starts too late, or has not reached it with more to read', { skip: missing && 'nats-server is not installed' }, async () => {
  // b3 started reading at 9,000: a write acknowledged at 10,000 could be in its history before that.
  agreeingNode('b3', 9_000, (seq) => `other-${seq}`, 20_000, 0);
  const early = await handOver(oddNode([write(10_000, 'w4')]), ['b3'], 10_001, 1_000);
  assert.deepEqual(early.appended, ['w4']);
  assert.deepEqual(early.warnings, [HANDING_OVER_UNTOLD]);
  assert.ok(early.ms >= 1_000, `decided after ${early.ms} ms, before asking for 1 s`);
  // b4 has read to 30 with more on its server: w5, at 25, may be read later.
  agreeingNode('b4', 1, (seq) => `other-${seq}`, 30, 100);
  const behind = await handOver(oddNode([write(25, 'w5')]), ['b4'], 26, 1_000);
  assert.deepEqual(behind.appended, ['w5']);
});
