// The writes this node appended, checked against the log as this node reads it. nats-server 2.9.10, with a
// server paused, acknowledged writes that then were in no reader's history: two different writes
// acknowledged at one sequence, the log keeping one (bench/nats-divergence.ts counts them). Their clients
// had their 200. A node holds each write it appended until it reads the write's message id in the log;
// one it has not read by well past its acknowledged sequence is lost, and appended again. By message id,
// not by sequence: the same runs gave readers histories shifted by up to hundreds of commands, which hold
// the write at another sequence. A node journals each one on its disk until read back (write-journal.ts).
import type { Logger } from '../log.ts';

export interface AcknowledgedWrite {
  seq: number;
  msgId: string;
  subject: string;
  bytes: Uint8Array;
  notForNode?: string;
}

/** A write not yet read back, and how many times it was appended before (lost each time). */
export interface JournaledWrite {
  write: AcknowledgedWrite;
  appends: number;
}

/** Where a node keeps its writes not yet read back on its disk (write-journal.ts). */
export interface JournalOfWrites {
  /** The writes kept, in the order of their acknowledged sequences. */
  unconfirmed(): JournaledWrite[];
  /** Resolves once `write` is kept. */
  hold(write: AcknowledgedWrite, appends: number): Promise<void>;
  release(msgId: string): Promise<void>;
}

/**
 * Commands read past a write's acknowledged sequence without its message id before it counts as lost: one
 * window of the log checks (log-checks.ts), ten times the largest shift measured (389 commands,
 * bench/nats-divergence.ts `shiftMaxBy`).
 */
export const LOST_PAST = 4_096;
/**
 * Or, sooner, this long after this node read past its sequence, once it has read everything its server's
 * history holds (the write is not at a later sequence there either).
 */
const LOST_AFTER_MS = 2_000;
/** How often the held writes are checked for lost ones. */
const SWEEP_MS = 250;
/** A write appended again this often and still not read is given up (a history that drops every one). */
const MAX_APPENDS = 3;
/** The bytes held for writes not yet read back: beyond this, the oldest are no longer checked (a node far behind its own writes). */
const HELD_BYTES = 256 * 1024 * 1024;
/**
 * The message ids of the commands read lately: JetStream's acknowledgement can arrive after this node read
 * the write, and a node that read the odd history asks a node that agreed which of its writes it read
 * (handOverOwnWrites), up to the log checks' few windows back (log-checks.ts).
 */
const RECENT_READS = 32_768;
/** The bytes of this node's writes it read back, kept for handOverOwnWrites: the most recent this much. */
const FOUND_BYTES = 64 * 1024 * 1024;
/** What a node logs for each write it appends again (the chaos bench counts these lines). */
export const APPENDING_AGAIN = 'a write JetStream acknowledged is missing from the cluster log as this node reads it; appending it again';
/** Writes whose place in the log a caller may still ask for (readAt). */
const PLACES_KEPT = 1_024;

/** Which of some message ids a node read lately, and how far its answer reaches (handOverOwnWrites). */
export interface ReadIds {
  read: string[];
  /** The lowest sequence from which this node knows every message id it read. */
  coversFrom: number;
  /** The last sequence it read. */
  upTo: number;
  /** Whether that was the last its server held. */
  atEnd: boolean;
}

interface Held {
  write: AcknowledgedWrite;
  /** Where this node read it, once it did. */
  place: Promise<number>;
  /** How many times it was appended before this one. */
  appends: number;
  /** When this node first read a command past its sequence, or null. */
  passedAt: number | null;
  found: (seq: number) => void;
  failed: (error: Error) => void;
}

export class AcknowledgedWrites {
  /** By message id, in the order acknowledged. */
  readonly #held = new Map<string, Held>();
  #heldBytes = 0;
  readonly #recentReads = new Map<string, number>();
  /** The first sequence this process read; then the oldest one of #recentReads, once it forgot any. */
  #recentFrom = 0;
  /** This node's writes it read back, by message id, oldest first; and their bytes. */
  readonly #found = new Map<string, AcknowledgedWrite>();
  #foundBytes = 0;
  #readUpTo = 0;
  /** Whether the last command read was the last its server held, and when one last was. */
  #atEnd = false;
  #atEndAt = 0;
  readonly #places = new Map<number, Promise<number>>();
  #sweeper: ReturnType<typeof setInterval> | null = null;
  /** Writes no longer held for want of room, since the last warning. */
  #forgotten = 0;
  readonly #appendAgain: (write: AcknowledgedWrite, appends: number) => Promise<number>;
  readonly #logger: Logger;
  readonly #journal: JournalOfWrites | null;
  /** Whether a journal write failed (logged once). */
  #journalFailing = false;

  /**
   * `appendAgain` appends a lost write once more (under a message id of its own; `appends` times so far),
   * calls `acknowledged` with it, and resolves with its new sequence. `journal`: where the writes held are
   * kept on disk too (a node's; a command line reads its writes back before it exits).
   */
  constructor(appendAgain: (write: AcknowledgedWrite, appends: number) => Promise<number>, logger: Logger, journal: JournalOfWrites | null = null) {
    this.#appendAgain = appendAgain;
    this.#logger = logger;
    this.#journal = journal;
  }

  /**
   * Holds again the writes the journal kept, which this node's process before this one had not read back:
   * to be read back as any held write (ClusterLog.readBackWrites). How many (none held already: a join
   * tried again).
   */
  holdJournaled(): number {
    const journaled = (this.#journal?.unconfirmed() ?? []).filter(({ write }) => !this.#held.has(write.msgId));
    for (const { write, appends } of journaled) this.#hold(write, appends);
    return journaled.length;
  }

  /**
   * JetStream acknowledged `write` at `write.seq` (`appends`: the times it was appended before, lost).
   * Resolves once it is journaled (at once without a journal, or for a write already read).
   */
  acknowledged(write: AcknowledgedWrite, appends = 0): Promise<void> {
    if (!this.#hold(write, appends)) return Promise.resolve();
    return this.#journal?.hold(write, appends).then(() => undefined, (error: Error) => this.#journalFailed(error)) ?? Promise.resolve();
  }

  /** Holds `write` until read; false for one read already. */
  #hold(write: AcknowledgedWrite, appends: number): boolean {
    let found: (seq: number) => void = () => undefined;
    let failed: (error: Error) => void = () => undefined;
    const place = new Promise<number>((resolve, reject) => {
      found = resolve;
      failed = reject;
    });
    place.catch(() => undefined);
    const held: Held = { write, place, appends, passedAt: null, found, failed };
    // Two writes of this node acknowledged at one sequence (the fault itself): a caller of either waits for both.
    const other = this.#places.get(write.seq);
    const both = other === undefined ? place : Promise.all([other, place]).then(([a, b]) => Math.max(a, b));
    both.catch(() => undefined);
    this.#places.set(write.seq, both);
    for (const seq of this.#places.keys()) {
      if (this.#places.size <= PLACES_KEPT) break;
      this.#places.delete(seq);
    }
    const readAt = this.#recentReads.get(write.msgId);
    if (readAt !== undefined) {
      this.#keepFound(write);
      found(readAt);
      return false;
    }
    this.#held.set(write.msgId, held);
    this.#heldBytes += write.bytes.length;
    for (const [msgId, oldest] of this.#held) {
      if (this.#heldBytes <= HELD_BYTES) break;
      this.#release(msgId, oldest);
      oldest.found(oldest.write.seq);
      if (this.#forgotten++ === 0) this.#logger.warn('this node is far behind its own writes: the oldest are no longer checked against the cluster log', { heldBytes: this.#heldBytes });
    }
    this.#sweeper ??= setInterval(() => this.#sweep(), SWEEP_MS);
    this.#sweeper.unref?.();
    return true;
  }

  /**
   * This node read the command at `seq`, with its message id (null for one without) and the number of
   * commands its server held after it (null when unknown). Sequences come in log order.
   */
  read(seq: number, msgId: string | null, after: number | null): void {
    this.#readUpTo = Math.max(this.#readUpTo, seq);
    if (this.#recentFrom === 0) this.#recentFrom = seq;
    this.#atEnd = after === 0;
    if (this.#atEnd) this.#atEndAt = Date.now();
    if (msgId !== null) {
      this.#recentReads.set(msgId, seq);
      if (this.#recentReads.size > RECENT_READS) {
        this.#recentReads.delete(this.#recentReads.keys().next().value!);
        this.#recentFrom = this.#recentReads.values().next().value!;
      }
      const held = this.#held.get(msgId);
      if (held !== undefined) {
        this.#release(msgId, held);
        this.#keepFound(held.write);
        held.found(seq);
      }
    }
  }

  /** Which of `msgIds` this node read lately (a node that read the odd history asks: handOverOwnWrites). */
  readIds(msgIds: readonly string[]): ReadIds {
    return { read: msgIds.filter((msgId) => this.#recentReads.has(msgId)), coversFrom: this.#recentFrom, upTo: this.#readUpTo, atEnd: this.#atEnd };
  }

  /** This node's writes it read back that JetStream acknowledged at `seq` or later, as far as it kept them. */
  foundSince(seq: number): AcknowledgedWrite[] {
    return [...this.#found.values()].filter((write) => write.seq >= seq);
  }

  /**
   * Where this node read the write JetStream acknowledged at `seq` (its own sequence, or the one it was
   * appended again at), once it did; undefined for a write not checked here.
   */
  readAt(seq: number): Promise<number> | undefined {
    return this.#places.get(seq);
  }

  /** The writes not yet read: their lowest acknowledged sequence (null for none), and where each is read, once it is (or why it is lost). */
  held(): { lowest: number | null; places: Promise<number>[] } {
    let lowest: number | null = null;
    const places: Promise<number>[] = [];
    for (const { write, place } of this.#held.values()) {
      lowest = Math.min(lowest ?? write.seq, write.seq);
      places.push(place);
    }
    return { lowest, places };
  }

  /** Stops checking: the writes still held are neither found nor lost. */
  close(): void {
    if (this.#sweeper !== null) clearInterval(this.#sweeper);
    this.#sweeper = null;
  }

  #sweep(): void {
    const now = Date.now();
    // Every held write each time (a few normally): by the servers' own numbering, one acknowledged later may
    // have the lower sequence.
    for (const [msgId, held] of this.#held) {
      if (this.#readUpTo < held.write.seq) continue;
      held.passedAt ??= now;
      if (this.#readUpTo >= held.write.seq + LOST_PAST || (this.#atEnd ? now : this.#atEndAt) - held.passedAt >= LOST_AFTER_MS) {
        // Journaled until its new write is (in #lost).
        this.#release(msgId, held, false);
        this.#lost(held);
      }
    }
    if (this.#held.size === 0 && this.#sweeper !== null) {
      clearInterval(this.#sweeper);
      this.#sweeper = null;
      this.#forgotten = 0;
    }
  }

  #keepFound(write: AcknowledgedWrite): void {
    this.#found.set(write.msgId, write);
    this.#foundBytes += write.bytes.length;
    for (const [msgId, oldest] of this.#found) {
      if (this.#foundBytes <= FOUND_BYTES) break;
      this.#found.delete(msgId);
      this.#foundBytes -= oldest.bytes.length;
    }
  }

  #release(msgId: string, held: Held, fromJournal = true): void {
    this.#held.delete(msgId);
    this.#heldBytes -= held.write.bytes.length;
    if (fromJournal) this.#unjournal(msgId);
  }

  #unjournal(msgId: string): void {
    this.#journal?.release(msgId).catch((error: Error) => this.#journalFailed(error));
  }

  /** The write is held in memory still, as without a journal; it would not be read back after a restart. */
  #journalFailed(error: Error): void {
    if (this.#journalFailing) return;
    this.#journalFailing = true;
    this.#logger.error('journaling this node\'s writes on its disk failed: a write the log loses is lost if this node dies before it reads past it', { reason: error.message });
  }

  #lost({ write, appends, found, failed }: Held): void {
    if (appends >= MAX_APPENDS) {
      this.#logger.error('a write appended again is still missing from the cluster log as this node reads it: given up', { seq: write.seq, msgId: write.msgId, appends: appends + 1 });
      this.#unjournal(write.msgId);
      failed(new Error(`the cluster log lost write ${write.msgId} ${appends + 1} times`));
      return;
    }
    this.#logger.warn(APPENDING_AGAIN, { seq: write.seq, msgId: write.msgId, readUpTo: this.#readUpTo });
    this.#appendAgain(write, appends + 1).then(
      (seq) => {
        this.#logger.info('a lost write is appended again', { seq: write.seq, now: seq });
        // Its new write is journaled (or read already): the lost one is no longer needed.
        this.#unjournal(write.msgId);
        // The appender called `acknowledged` with it: held again, under its new sequence.
        const place = this.#places.get(seq);
        if (place === undefined) found(seq);
        else place.then(found, failed);
      },
      (error: Error) => {
        this.#logger.error('appending a lost write again failed: it is lost', { seq: write.seq, msgId: write.msgId, reason: error.message });
        this.#unjournal(write.msgId);
        failed(error);
      },
    );
  }
}
