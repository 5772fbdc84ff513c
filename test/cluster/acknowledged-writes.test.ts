// Which of a node's acknowledged writes it appends again (src/cluster/acknowledged-writes.ts): one whose
// sequence it reads with another message id, whether the acknowledgement came before the read or after;
// never one it reads back as written. The real log's case is test/cluster/lost-writes.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AcknowledgedWrites } from '../../src/cluster/acknowledged-writes.ts';
import type { AcknowledgedWrite } from '../../src/cluster/acknowledged-writes.ts';
import type { Logger } from '../../src/log.ts';

function tracked(): { writes: AcknowledgedWrites; again: AcknowledgedWrite[]; warnings: string[] } {
  const again: AcknowledgedWrite[] = [];
  const warnings: string[] = [];
  const logger: Logger = { info: () => undefined, warn: (message) => warnings.push(message), error: (message) => warnings.push(message) };
  // The log takes each write appended again at 100 + its first sequence.
  const writes = new AcknowledgedWrites(async (write) => {
    again.push(write);
    return 100 + write.seq;
  }, logger);
  return { writes, again, warnings };
}

const write = (seq: number, msgId: string, size = 10): AcknowledgedWrite => ({ seq, msgId, subject: 'jvmlens.events', bytes: new Uint8Array(size) });

test('a write read back with its own message id is not appended again', () => {
  const { writes, again } = tracked();
  writes.acknowledged(write(1, 'w1'));
  writes.read(1, 'w1');
  // Read before its acknowledgement came back.
  writes.read(2, 'w2');
  writes.acknowledged(write(2, 'w2'));
  assert.equal(again.length, 0);
  assert.equal(writes.movedTo(1), undefined);
});

test('a write whose sequence holds another message id is appended again, and says where', async () => {
  const { writes, again } = tracked();
  writes.acknowledged(write(5, 'mine'));
  writes.read(4, 'before');
  assert.equal(writes.movedTo(5), undefined);
  writes.read(5, 'theirs');
  assert.deepEqual(again.map((w) => w.msgId), ['mine']);
  assert.equal(await writes.movedTo(5), 105);
  // Read before its acknowledgement came back, with another id: appended again too.
  writes.read(6, 'other');
  writes.acknowledged(write(6, 'late'));
  assert.deepEqual(again.map((w) => w.msgId), ['mine', 'late']);
  // A sequence read without a message id holds no write of this node either.
  writes.acknowledged(write(7, 'third'));
  writes.read(7, null);
  assert.deepEqual(again.map((w) => w.msgId), ['mine', 'late', 'third']);
});

test('a node far behind its own writes stops holding the oldest, and says so once', () => {
  const { writes, again, warnings } = tracked();
  const mib = 1024 * 1024;
  for (let seq = 1; seq <= 300; seq++) writes.acknowledged(write(seq, `w${seq}`, mib));
  assert.equal(warnings.filter((line) => /far behind its own writes/.test(line)).length, 1);
  // Sequences 1 to 44 were let go (256 MiB held): read with other ids, they are not appended again.
  for (let seq = 1; seq <= 44; seq++) writes.read(seq, 'theirs');
  assert.equal(again.length, 0);
  writes.read(45, 'theirs');
  assert.deepEqual(again.map((w) => w.seq), [45]);
});
