// A node that read the odd history of the log (log-checks.ts) rebuilds itself from a copy of a node that
// agrees with the others (restore.ts). A write of its own that only its history held (nats-server 2.9.10,
// with a server paused, gave each reader a different set of acknowledged writes: bench/nats-divergence.ts)
// would be lost with its data: it read the write back, so it never appended it again (acknowledged-writes.ts).
// Before it rebuilds, it asks a node that agreed which of its recent writes that node read, and appends
// again those it did not.
import { errors } from '@nats-io/transport-node';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger } from '../log.ts';
import { LOST_PAST } from './acknowledged-writes.ts';
import type { AcknowledgedWrite, AcknowledgedWrites, ReadIds } from './acknowledged-writes.ts';
import { decodeMessage, encodeMessage } from './commands.ts';
import type { OddWindow } from './right-reading.ts';
import { respond } from './replies.ts';

const SUBJECT = 'jvmlens.read-ids';
/** Message ids asked at once: 36-byte UUIDs, well within a reply's 1 MiB. */
const IDS_PER_QUESTION = 2_000;
const ANSWER_WAIT_MS = 3_000;
/** How long the node asks before it rebuilds with what it decided. */
export const HAND_OVER_MS = 20_000;
/** A write the asked node read past, having read all its server held, counts as missing there this much later. */
const MISSING_AFTER_MS = 2_000;
const ASK_AGAIN_MS = 500;
/** What a node logs when it starts to check its writes with the nodes that agreed (once they are journaled). */
export const CHECKING_HAND_OVER = 'checking which of this node\'s writes the nodes that agreed read, before this node rebuilds itself';
/** What a node logs when it starts with a hand-over its last process did not finish (restore.ts). */
export const FINISHING_HAND_OVER = 'this node\'s last process was killed while it handed its writes to the nodes that agreed: finishing that before this node rebuilds itself';
/** What a node logs when it appends again writes of its own only its history held. */
export const HANDING_OVER = 'writes of this node\'s that the other nodes did not read: appending them again before this node rebuilds itself';
/** What it logs for writes of its own it could not tell whether the others read: appended again, applied once where read. */
export const HANDING_OVER_UNTOLD = 'could not tell whether the nodes that agreed read these writes of this node\'s: appending them again, a node that read them skips the copies';

/** Answers other nodes' questions: which of these message ids did this node read lately. */
export function serveReadIds(nc: NatsConnection, nodeId: string, acknowledged: AcknowledgedWrites): Subscription {
  return nc.subscribe(`${SUBJECT}.${nodeId}`, { callback: (error, message) => {
    if (error === null) respond(message, encodeMessage(acknowledged.readIds(decodeMessage(message.data) as string[])));
  } });
}

async function askReadIds(nc: NatsConnection, nodeId: string, msgIds: readonly string[]): Promise<ReadIds> {
  const answers: ReadIds[] = [];
  for (let from = 0; from < msgIds.length; from += IDS_PER_QUESTION) {
    const reply = await nc.request(`${SUBJECT}.${nodeId}`, encodeMessage(msgIds.slice(from, from + IDS_PER_QUESTION)), { timeout: ANSWER_WAIT_MS });
    answers.push(decodeMessage(reply.data) as ReadIds);
  }
  // The last answer reaches furthest; what it covers is the least any covered.
  const last = answers[answers.length - 1];
  return { read: answers.flatMap((answer) => answer.read), coversFrom: Math.max(...answers.map((answer) => answer.coversFrom)), upTo: last.upTo, atEnd: last.atEnd };
}

/**
 * Whether `write` is missing from the history `answer` describes: its node read no command with its
 * message id, from far enough before its acknowledged sequence (histories are shifted), up to far enough
 * after it, or up to the end of its server's history, still there `MISSING_AFTER_MS` after it was first seen
 * there; null while that cannot be told yet (its node's recent reads do not reach back so far, or it has
 * not read so far).
 */
function missingFrom(write: AcknowledgedWrite, answer: ReadIds, read: ReadonlySet<string>, passedAtEnd: Map<string, number>): boolean | null {
  if (read.has(write.msgId)) return false;
  if (answer.coversFrom > Math.max(1, write.seq - LOST_PAST)) return null;
  if (answer.upTo >= write.seq + LOST_PAST) return true;
  if (!answer.atEnd || answer.upTo < write.seq) return null;
  const since = passedAtEnd.get(write.msgId) ?? Date.now();
  passedAtEnd.set(write.msgId, since);
  return Date.now() - since >= MISSING_AFTER_MS ? true : null;
}

/**
 * This node read the odd history from `odd`'s window on: its writes read back since a little before that
 * window, which a hand-over checks (the node journals them first: write-journal.ts).
 */
export function writesToHandOver(acknowledged: AcknowledgedWrites, odd: OddWindow & { from: number }): AcknowledgedWrite[] {
  return acknowledged.foundSince(odd.from - LOST_PAST);
}

/**
 * Those of `writes` (writesToHandOver) which the nodes that agreed (`agreed`) did not read are appended again
 * (they apply them; this node does once it rebuilt itself). Asks the first of them that answers, for up to
 * `askForMs`; a write it cannot tell by then is appended again too: a node that read it skips the copy
 * (applied-ids.ts), and one that did not would lack it. Resolves with how many were appended again.
 */
export async function handOverOwnWrites(nc: NatsConnection, writes: readonly AcknowledgedWrite[], appendAgain: (write: AcknowledgedWrite) => Promise<number>, agreed: readonly string[], logger: Logger, askForMs = HAND_OVER_MS): Promise<number> {
  let undecided = [...writes];
  if (undecided.length === 0) return 0;
  const missing: AcknowledgedWrite[] = [];
  const passedAtEnd = new Map<string, number>();
  const deadline = Date.now() + askForMs;
  let asked: string | null = null;
  while (undecided.length > 0 && Date.now() < deadline) {
    const askable: readonly string[] = asked === null ? agreed : [asked];
    for (const nodeId of askable) {
      let answer: ReadIds;
      try {
        answer = await askReadIds(nc, nodeId, undecided.map((write) => write.msgId));
      } catch (error) {
        if (!(error instanceof errors.RequestError || error instanceof errors.TimeoutError)) throw error;
        continue;
      }
      // The nodes that agreed read one history: one of them answers for all.
      asked = nodeId;
      const read = new Set(answer.read);
      undecided = undecided.filter((write) => {
        const lacking = missingFrom(write, answer, read, passedAtEnd);
        if (lacking === true) missing.push(write);
        return lacking === null;
      });
      break;
    }
    if (undecided.length > 0) await new Promise((resolve) => setTimeout(resolve, ASK_AGAIN_MS));
  }
  if (undecided.length > 0) logger.warn(HANDING_OVER_UNTOLD, { writes: undecided.length, asked: asked ?? agreed, msgIds: undecided.slice(0, 10).map((write) => write.msgId) });
  if (missing.length > 0) logger.warn(HANDING_OVER, { writes: missing.length, askedNode: asked, msgIds: missing.slice(0, 10).map((write) => write.msgId) });
  for (const write of [...missing, ...undecided]) await appendAgain(write);
  return missing.length + undecided.length;
}
