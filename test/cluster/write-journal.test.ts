// A node's writes not yet read back, journaled on its disk (src/cluster/write-journal.ts, a real LMDB file):
// kept from the acknowledgement until read back; a lost one until its new write is; and a process that
// opens the journal again (the node restarted after a kill) holds them again and appends again those it
// does not read. The real log's case is test/cluster/lost-writes.test.ts.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, test } from 'node:test';
import { AcknowledgedWrites, LOST_PAST } from '../../src/cluster/acknowledged-writes.ts';
import type { AcknowledgedWrite } from '../../src/cluster/acknowledged-writes.ts';
import { WriteJournal } from '../../src/cluster/write-journal.ts';
import type { Logger } from '../../src/log.ts';
import { tempDir } from '../helpers/service.ts';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const quiet: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };
const write = (seq: number, msgId: string): AcknowledgedWrite => ({ seq, msgId, subject: 'jvmlens.events', bytes: Uint8Array.of(seq % 256, 1, 2, 3) });
const swept = () => new Promise((resolve) => setTimeout(resolve, 300));
/** A moment for the journal's asynchronous removals to commit. */
const committed = () => new Promise((resolve) => setTimeout(resolve, 50));
const readOthers = (writes: AcknowledgedWrites, from: number, to: number) => {
  for (let seq = from; seq <= to; seq++) writes.read(seq, `other-${seq}`, 1);
};

/** A node's writes over a journal in `dir`; appended again at 10,000 on, and journaled as the log would have them. */
function process(dir: string): { writes: AcknowledgedWrites; journal: WriteJournal; again: string[] } {
  const journal = WriteJournal.open(dir);
  const again: string[] = [];
  let next = 10_000;
  const writes: AcknowledgedWrites = new AcknowledgedWrites(async (lost, appends) => {
    again.push(lost.msgId);
    const appended = { ...lost, msgId: `${lost.msgId}.again`, seq: next++ };
    await writes.acknowledged(appended, appends);
    return appended.seq;
  }, quiet, journal);
  return { writes, journal, again };
}

const journaledIds = (journal: WriteJournal) => journal.unconfirmed().map(({ write: { msgId } }) => msgId);
/** The journal's writes with their bytes as numbers (read back, they are Buffers). */
const journaled = (journal: WriteJournal) => journal.unconfirmed().map(({ write, appends }) => ({ ...write, bytes: [...write.bytes], appends }));
const expected = (written: AcknowledgedWrite, appends: number) => ({ ...written, bytes: [...written.bytes], appends });

test('a write is journaled before its acknowledgement resolves, and released once read back; one read before is not journaled', async () => {
  const dir = tempDir('jvmlens-journal-');
  dirs.push(dir);
  const { writes, journal } = process(dir);
  await writes.acknowledged(write(1, 'w1'));
  await writes.acknowledged(write(2, 'w2'));
  assert.deepEqual(journaled(journal), [expected(write(1, 'w1'), 0), expected(write(2, 'w2'), 0)]);
  writes.read(1, 'w1', 1);
  writes.read(3, 'w3', 1);
  await writes.acknowledged(write(3, 'w3'));
  await committed();
  assert.deepEqual(journaledIds(journal), ['w2']);
  writes.close();
  await journal.close();
});

test('a lost write stays journaled until the write appended in its place is, and that one until it is read', async () => {
  const dir = tempDir('jvmlens-journal-');
  dirs.push(dir);
  const { writes, journal, again } = process(dir);
  await writes.acknowledged(write(5, 'mine'));
  readOthers(writes, 1, 5 + LOST_PAST);
  await swept();
  await committed();
  assert.deepEqual(again, ['mine']);
  assert.deepEqual(journaled(journal), [expected({ ...write(5, 'mine'), msgId: 'mine.again', seq: 10_000 }, 1)]);
  writes.read(10_000, 'mine.again', 1);
  await committed();
  assert.deepEqual(journaledIds(journal), []);
  writes.close();
  await journal.close();
});

test('a process that opens the journal again holds the writes its last one had not read back: a lost one is appended again, one in the log is not', async () => {
  const dir = tempDir('jvmlens-journal-');
  dirs.push(dir);
  const first = process(dir);
  await first.writes.acknowledged(write(7, 'in-the-log'));
  await first.writes.acknowledged(write(8, 'lost'));
  await first.writes.acknowledged(write(9, 'read'));
  first.writes.read(9, 'read', 1);
  // Killed before it read the others back (closing the file is what the system does for a killed process).
  first.writes.close();
  await first.journal.close();

  const second = process(dir);
  assert.equal(second.writes.holdJournaled(), 2);
  assert.equal(second.writes.held().lowest, 7);
  // Reading the log back from before them: the first is there, the second's sequence holds another write.
  readOthers(second.writes, 1, 6);
  second.writes.read(7, 'in-the-log', 1);
  readOthers(second.writes, 8, 8 + LOST_PAST);
  await swept();
  assert.deepEqual(second.again, ['lost']);
  second.writes.read(10_000, 'lost.again', 0);
  assert.equal(await second.writes.readAt(8), 10_000);
  await committed();
  assert.deepEqual(journaledIds(second.journal), []);
  second.writes.close();
  await second.journal.close();
});

test('the writes a hand-over checks are kept until it finishes, across a restart, each new hand-over replacing them', async () => {
  const dir = tempDir('jvmlens-journal-');
  dirs.push(dir);
  let journal = WriteJournal.open(dir);
  await journal.keepToHandOver([write(3, 'w3'), write(2, 'w2')]);
  await journal.keepToHandOver([write(5, 'w5'), write(4, 'w4')]);
  await journal.close();
  // Killed during the hand-over: its next start finds them, in sequence order.
  journal = WriteJournal.open(dir);
  assert.deepEqual(journal.toHandOver().map(({ msgId, seq, bytes }) => ({ msgId, seq, bytes: [...bytes] })), [4, 5].map((seq) => ({ msgId: `w${seq}`, seq, bytes: [...write(seq, '').bytes] })));
  await journal.handedOver();
  assert.deepEqual(journal.toHandOver(), []);
  await journal.close();
});

test('holding the journaled writes again holds each once (a node whose join is tried again)', async () => {
  const dir = tempDir('jvmlens-journal-');
  dirs.push(dir);
  const first = process(dir);
  await first.writes.acknowledged(write(3, 'w3'));
  first.writes.close();
  await first.journal.close();
  const second = process(dir);
  assert.equal(second.writes.holdJournaled(), 1);
  assert.equal(second.writes.holdJournaled(), 0);
  assert.equal(second.writes.held().places.length, 1);
  second.writes.close();
  await second.journal.close();
});
