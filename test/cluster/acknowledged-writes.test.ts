// Which of a node's acknowledged writes it appends again (src/cluster/acknowledged-writes.ts): one whose
// message id it has not read by LOST_PAST commands past its acknowledged sequence, or by the end of its
// server's history 2 s after it read past it; never one it read, at its sequence or another (a shifted
// history), before or after the acknowledgement. The real log's case is test/cluster/lost-writes.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AcknowledgedWrites, LOST_PAST } from '../../src/cluster/acknowledged-writes.ts';
import type { AcknowledgedWrite } from '../../src/cluster/acknowledged-writes.ts';
import type { Logger } from '../../src/log.ts';

/** A log that takes each write appended again at the next of its own sequences, from 10,000 on. */
function tracked(): { writes: AcknowledgedWrites; again: AcknowledgedWrite[]; warnings: string[] } {
  const again: AcknowledgedWrite[] = [];
  const warnings: string[] = [];
  const logger: Logger = { info: () => undefined, warn: (message) => warnings.push(message), error: (message) => warnings.push(message) };
  let next = 10_000;
  const writes: AcknowledgedWrites = new AcknowledgedWrites(async (write, appends) => {
    again.push(write);
    const appended = { ...write, msgId: `${write.msgId}.again`, seq: next++ };
    writes.acknowledged(appended, appends);
    return appended.seq;
  }, logger);
  return { writes, again, warnings };
}

const write = (seq: number, msgId: string, size = 10): AcknowledgedWrite => ({ seq, msgId, subject: 'jvmlens.events', bytes: new Uint8Array(size) });
/** Until the held writes were checked for lost ones (every 250 ms). */
const swept = () => new Promise((resolve) => setTimeout(resolve, 300));
/** Reads commands of other writes from `from` to `to`, with more after them on the server. */
const readOthers = (writes: AcknowledgedWrites, from: number, to: number) => {
  for (let seq = from; seq <= to; seq++) writes.read(seq, `other-${seq}`, 1);
};

test('a write read back, at its sequence or another, before or after its acknowledgement, is not appended again', async () => {
  const { writes, again } = tracked();
  writes.acknowledged(write(1, 'w1'));
  writes.read(1, 'w1', 1);
  // Read before its acknowledgement came back.
  writes.read(2, 'w2', 1);
  writes.acknowledged(write(2, 'w2'));
  // A history shifted by three commands holds it later.
  writes.acknowledged(write(3, 'w3'));
  readOthers(writes, 3, 5);
  writes.read(6, 'w3', 1);
  readOthers(writes, 7, 3 + LOST_PAST + 10);
  await swept();
  assert.equal(again.length, 0);
  assert.deepEqual(await Promise.all([1, 2, 3].map((seq) => writes.readAt(seq))), [1, 2, 6]);
  assert.equal(writes.held().lowest, null);
});

test('a write missing LOST_PAST commands past its sequence is appended again, and found where it was', async () => {
  const { writes, again, warnings } = tracked();
  writes.acknowledged(write(5, 'mine'));
  readOthers(writes, 1, 5 + LOST_PAST - 1);
  await swept();
  assert.equal(again.length, 0);
  writes.read(5 + LOST_PAST, 'other', 1);
  await swept();
  assert.deepEqual(again.map((w) => w.msgId), ['mine']);
  assert.match(warnings.join('\n'), /missing from the cluster log as this node reads it; appending it again/);
  // Appended again at 10,000, read there.
  readOthers(writes, 5 + LOST_PAST + 1, 9_999);
  writes.read(10_000, 'mine.again', 1);
  assert.equal(await writes.readAt(5), 10_000);
  writes.close();
});

test('of two writes of this node acknowledged at one sequence, the one the log lost is appended again, and a caller of either waits for both', async () => {
  const { writes, again } = tracked();
  writes.acknowledged(write(9, 'kept'));
  writes.acknowledged(write(9, 'dropped'));
  const place = writes.readAt(9)!;
  writes.read(9, 'kept', 1);
  readOthers(writes, 10, 9 + LOST_PAST);
  await swept();
  assert.deepEqual(again.map((w) => w.msgId), ['dropped']);
  writes.read(10_000, 'dropped.again', 1);
  assert.equal(await place, 10_000);
  writes.close();
});

test('a write missing once this node read the whole history its server holds, 2 s after it read past its sequence, is appended again', async () => {
  const { writes, again } = tracked();
  writes.acknowledged(write(7, 'mine'));
  writes.read(7, 'other', 3);
  // More to read: the write may be at a later sequence there, however long that takes.
  await new Promise((resolve) => setTimeout(resolve, 2_600));
  assert.equal(again.length, 0);
  // The end of the server's history, without the write.
  writes.read(8, 'other-8', 0);
  await swept();
  assert.deepEqual(again.map((w) => w.msgId), ['mine']);
  // At the end sooner than 2 s after reading past a write: not yet.
  writes.acknowledged(write(9, 'next'));
  writes.read(9, 'other-9', 0);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  assert.equal(again.length, 1);
  // Still nothing more to read 2 s after: lost.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  assert.deepEqual(again.map((w) => w.msgId), ['mine', 'next']);
  writes.close();
});

test('a write the log keeps losing is given up after three appends, and its place says so', async () => {
  const { writes, again, warnings } = tracked();
  writes.acknowledged(write(1, 'doomed'));
  const place = writes.readAt(1)!;
  for (let round = 0; round < 4; round++) {
    readOthers(writes, 1 + round * 20_000, (round + 1) * 20_000);
    await swept();
  }
  assert.equal(again.length, 3);
  await assert.rejects(place, /lost write doomed\.again\.again\.again 4 times/);
  assert.match(warnings.join('\n'), /given up/);
  writes.close();
});

test('a node far behind its own writes stops holding the oldest, and says so once', () => {
  const { writes, again, warnings } = tracked();
  const mib = 1024 * 1024;
  for (let seq = 1; seq <= 300; seq++) writes.acknowledged(write(seq, `w${seq}`, mib));
  assert.equal(warnings.filter((line) => /far behind its own writes/.test(line)).length, 1);
  // The first 44 were let go (256 MiB held); the others are still checked.
  assert.equal(writes.held().lowest, 45);
  assert.equal(writes.held().places.length, 256);
  assert.equal(again.length, 0);
  writes.close();
});

test('the writes read back are kept, the most recent 64 MiB, for a node that read the odd history to hand over; the ids read lately are answered', () => {
  const { writes } = tracked();
  const mib = 1024 * 1024;
  for (let seq = 1; seq <= 100; seq++) {
    writes.acknowledged(write(seq, `w${seq}`, mib));
    writes.read(seq, `w${seq}`, 0);
  }
  assert.deepEqual(writes.foundSince(0).map((found) => found.seq), Array.from({ length: 64 }, (_, k) => 37 + k));
  assert.deepEqual(writes.foundSince(90).map((found) => found.msgId), Array.from({ length: 11 }, (_, k) => `w${90 + k}`));
  assert.deepEqual(writes.readIds(['w1', 'w100', 'elsewhere']), { read: ['w1', 'w100'], coversFrom: 1, upTo: 100, atEnd: true });
  // The last 32,768 message ids read: from there on, its answer covers every id.
  for (let seq = 101; seq <= 40_000; seq++) writes.read(seq, `other-${seq}`, 40_000 - seq + 5);
  assert.deepEqual(writes.readIds(['w1', 'other-7233', 'other-40000']), { read: ['other-7233', 'other-40000'], coversFrom: 7_233, upTo: 40_000, atEnd: false });
  writes.close();
});
