// Which of a node's acknowledged writes it appends again (src/cluster/acknowledged-writes.ts): one whose
// message id it has not read by LOST_PAST commands past its acknowledged sequence, or 2 s after it read past
// it with nothing more to read; never one it read, at its sequence or another (a shifted history), before or
// after the acknowledgement. The real log's case is test/cluster/lost-writes.test.ts.
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
/** Reads commands of other writes from `from` to `to`. */
const readOthers = (writes: AcknowledgedWrites, from: number, to: number) => {
  for (let seq = from; seq <= to; seq++) writes.read(seq, `other-${seq}`);
};

test('a write read back, at its sequence or another, before or after its acknowledgement, is not appended again', async () => {
  const { writes, again } = tracked();
  writes.acknowledged(write(1, 'w1'));
  writes.read(1, 'w1');
  // Read before its acknowledgement came back.
  writes.read(2, 'w2');
  writes.acknowledged(write(2, 'w2'));
  // A history shifted by three commands holds it later.
  writes.acknowledged(write(3, 'w3'));
  readOthers(writes, 3, 5);
  writes.read(6, 'w3');
  readOthers(writes, 7, 3 + LOST_PAST + 10);
  assert.equal(again.length, 0);
  assert.deepEqual(await Promise.all([1, 2, 3].map((seq) => writes.readAt(seq))), [1, 2, 6]);
  assert.equal(writes.held().lowest, null);
});

test('a write missing LOST_PAST commands past its sequence is appended again, and found where it was', async () => {
  const { writes, again, warnings } = tracked();
  writes.acknowledged(write(5, 'mine'));
  readOthers(writes, 1, 5 + LOST_PAST - 1);
  assert.equal(again.length, 0);
  writes.read(5 + LOST_PAST, 'other');
  assert.deepEqual(again.map((w) => w.msgId), ['mine']);
  assert.match(warnings.join('\n'), /missing from the cluster log as this node reads it; appending it again/);
  // Appended again at 10,000, read there.
  await new Promise((resolve) => setImmediate(resolve));
  readOthers(writes, 5 + LOST_PAST + 1, 9_999);
  writes.read(10_000, 'mine.again');
  assert.equal(await writes.readAt(5), 10_000);
  writes.close();
});

test('of two writes of this node acknowledged at one sequence, the one the log lost is appended again, and a caller of either waits for both', async () => {
  const { writes, again } = tracked();
  writes.acknowledged(write(9, 'kept'));
  writes.acknowledged(write(9, 'dropped'));
  const place = writes.readAt(9)!;
  writes.read(9, 'kept');
  readOthers(writes, 10, 9 + LOST_PAST);
  assert.deepEqual(again.map((w) => w.msgId), ['dropped']);
  await new Promise((resolve) => setImmediate(resolve));
  writes.read(10_000, 'dropped.again');
  assert.equal(await place, 10_000);
  writes.close();
});

test('with nothing more to read, a write missing 2 s after this node read past its sequence is appended again', async () => {
  const { writes, again } = tracked();
  writes.acknowledged(write(7, 'mine'));
  writes.read(7, 'other');
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  assert.equal(again.length, 0);
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  assert.deepEqual(again.map((w) => w.msgId), ['mine']);
  writes.close();
});

test('a write the log keeps losing is given up after three appends, and its place says so', async () => {
  const { writes, again, warnings } = tracked();
  writes.acknowledged(write(1, 'doomed'));
  const place = writes.readAt(1)!;
  for (let round = 0; round < 4; round++) {
    readOthers(writes, 1 + round * 20_000, (round + 1) * 20_000);
    await new Promise((resolve) => setImmediate(resolve));
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
