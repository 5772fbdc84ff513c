// The read barrier's questions (src/cluster/read-barrier.ts): a read learns a last sequence asked after it
// arrived, the reads of one turn share a question, and no more than the limit are in flight. The log here is
// a counter: its last sequence as a question reads it when the server takes it, answered after a delay.
import assert from 'node:assert/strict';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { LastSeqQuestions } from '../../src/cluster/read-barrier.ts';

/** A log whose questions take `delayMs()` each, counting how many are asked and in flight. */
class CountingLog {
  last = 0;
  asked = 0;
  inFlight = 0;
  mostInFlight = 0;
  fail = false;
  readonly #delayMs: () => number;

  constructor(delayMs: () => number) {
    this.#delayMs = delayMs;
  }

  ask = async (): Promise<number> => {
    this.asked++;
    this.inFlight++;
    this.mostInFlight = Math.max(this.mostInFlight, this.inFlight);
    // The server reads its last sequence as the question reaches it, then the answer travels back.
    const seen = this.last;
    const failing = this.fail;
    await sleep(this.#delayMs());
    this.inFlight--;
    if (failing) throw new Error('JetStream did not answer');
    return seen;
  };
}

test('reads of one turn share one question; a read arriving while it is in flight waits for a later one', async () => {
  const log = new CountingLog(() => 20);
  const questions = new LastSeqQuestions(log.ask, 3);
  const first = Array.from({ length: 50 }, () => questions.afterNow());
  await nextTurn();
  assert.equal(log.asked, 1);
  // Acknowledged while the first question is on its way: a read arriving now must see it.
  log.last = 7;
  const later = questions.afterNow();
  assert.deepEqual(await Promise.all(first), Array(50).fill(0));
  assert.equal(await later, 7);
  assert.equal(log.asked, 2);
});

test('every read learns at least each write acknowledged before it arrived, with no more questions in flight than allowed', async () => {
  for (const limit of [1, 3]) {
    let seed = 7 + limit;
    const random = (): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    const log = new CountingLog(() => 1 + Math.floor(random() * 6));
    const questions = new LastSeqQuestions(log.ask, limit);
    const reads: Promise<void>[] = [];
    for (let step = 0; step < 400; step++) {
      if (random() < 0.3) log.last++;
      const acknowledged = log.last;
      reads.push(questions.afterNow().then((answer) => assert.ok(answer >= acknowledged, `a read after write ${acknowledged} learned ${answer}`)));
      if (random() < 0.5) await sleep(random() < 0.5 ? 0 : 1);
    }
    await Promise.all(reads);
    assert.ok(log.mostInFlight <= limit, `${log.mostInFlight} questions in flight, limit ${limit}`);
    assert.ok(log.asked < 400, `${log.asked} questions for 400 reads`);
  }
});

test('a question that fails fails its reads only; the next reads ask again', async () => {
  const log = new CountingLog(() => 5);
  const questions = new LastSeqQuestions(log.ask, 2);
  log.fail = true;
  const failed = questions.afterNow();
  await nextTurn();
  log.fail = false;
  log.last = 3;
  const next = questions.afterNow();
  await assert.rejects(failed, /did not answer/);
  assert.equal(await next, 3);
});
