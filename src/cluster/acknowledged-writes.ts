// The writes this node appended, checked against the log as this node reads it. nats-server 2.9.10, with a
// server paused, acknowledged two different writes at one sequence (bench/nats-divergence.ts counts them):
// the log keeps one, and the other was lost for every reader though its client had its 200. A node holds
// each write it appended until it reads that sequence back; a sequence that holds another write's message
// id gets this node's write appended again.
import type { Logger } from '../log.ts';

export interface AcknowledgedWrite {
  seq: number;
  msgId: string;
  subject: string;
  bytes: Uint8Array;
  notForNode?: string;
}

/** The bytes held for writes not yet read back: beyond this, the oldest are no longer checked (a node far behind its own writes). */
const HELD_BYTES = 256 * 1024 * 1024;
/** The message ids of the sequences read lately: JetStream's acknowledgement can arrive after this node read the sequence. */
const RECENT_READS = 8_192;
/** Appended-again writes a caller may still ask about (movedTo). */
const MOVES_KEPT = 1_024;

export class AcknowledgedWrites {
  readonly #held = new Map<number, AcknowledgedWrite>();
  #heldBytes = 0;
  readonly #recentReads = new Map<number, string | null>();
  #readUpTo = 0;
  readonly #moves = new Map<number, Promise<number>>();
  /** Writes no longer held for want of room, since the last warning. */
  #forgotten = 0;
  readonly #appendAgain: (write: AcknowledgedWrite) => Promise<number>;
  readonly #logger: Logger;

  /** `appendAgain` appends a lost write once more (with a message id of its own) and resolves with its new sequence. */
  constructor(appendAgain: (write: AcknowledgedWrite) => Promise<number>, logger: Logger) {
    this.#appendAgain = appendAgain;
    this.#logger = logger;
  }

  /** JetStream acknowledged `write` at `write.seq`. */
  acknowledged(write: AcknowledgedWrite): void {
    if (write.seq <= this.#readUpTo) {
      // Read before its acknowledgement came back; a sequence read too long ago to remember cannot be checked.
      if (this.#recentReads.has(write.seq) && this.#recentReads.get(write.seq) !== write.msgId) this.#lost(write, this.#recentReads.get(write.seq) ?? null);
      return;
    }
    this.#held.set(write.seq, write);
    this.#heldBytes += write.bytes.length;
    for (const [seq, oldest] of this.#held) {
      if (this.#heldBytes <= HELD_BYTES) break;
      this.#drop(seq, oldest);
      if (this.#forgotten++ === 0) this.#logger.warn('this node is far behind its own writes: the oldest are no longer checked against the cluster log', { heldBytes: this.#heldBytes });
    }
  }

  /** This node read the command at `seq`, with its message id (null for one without). Sequences come in log order. */
  read(seq: number, msgId: string | null): void {
    this.#readUpTo = Math.max(this.#readUpTo, seq);
    this.#recentReads.set(seq, msgId);
    this.#recentReads.delete(seq - RECENT_READS);
    const write = this.#held.get(seq);
    if (write === undefined) return;
    this.#drop(seq, write);
    if (this.#held.size === 0) this.#forgotten = 0;
    if (write.msgId !== msgId) this.#lost(write, msgId);
  }

  /** The sequences of the writes not yet read back, in the order acknowledged. */
  held(): number[] {
    return [...this.#held.keys()];
  }

  /** The sequence a write acknowledged at `seq` was appended again at, once it is, when the log lost it there. */
  movedTo(seq: number): Promise<number> | undefined {
    return this.#moves.get(seq);
  }

  #drop(seq: number, write: AcknowledgedWrite): void {
    this.#held.delete(seq);
    this.#heldBytes -= write.bytes.length;
  }

  #lost(write: AcknowledgedWrite, readId: string | null): void {
    this.#logger.warn('the cluster log holds another write at the sequence JetStream acknowledged for one of this node\'s; appending it again', { seq: write.seq, msgId: write.msgId, read: readId });
    const moved = this.#appendAgain(write);
    this.#moves.set(write.seq, moved);
    for (const seq of this.#moves.keys()) {
      if (this.#moves.size <= MOVES_KEPT) break;
      this.#moves.delete(seq);
    }
    moved.then(
      (seq) => this.#logger.info('a lost write is appended again', { seq: write.seq, now: seq }),
      (error: Error) => this.#logger.error('appending a lost write again failed: it is lost', { seq: write.seq, msgId: write.msgId, reason: error.message }),
    );
  }
}
