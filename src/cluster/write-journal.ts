// A node's writes JetStream acknowledged that the node has not read back yet, on the node's disk. A write
// the log lost (nats-server 2.9.10, with a server paused, acknowledged two writes at one sequence and kept
// one: acknowledged-writes.ts) is appended again by its node once it reads past it; a node that died in
// between (a kill within the 2 s it waits at the log's end) took the write's bytes with it, though its
// client had its 200. Journaled before the 200, the write is read back once more at the node's next start.
// So are, while a node that read the odd history hands them over (hand-over-writes.ts), its writes it read
// back that the other nodes may lack: killed meanwhile, it hands them over at its next start, before it
// takes a copy of another node's data (restore.ts). Its own LMDB file: the store's is replaced by that copy,
// and the writes are this node's to append again, whatever data it then holds.
import { join } from 'node:path';
import { open } from 'lmdb';
import type { Database, RootDatabase } from 'lmdb';
import type { AcknowledgedWrite, JournaledWrite, JournalOfWrites } from './acknowledged-writes.ts';
import { refuseReads } from '../storage/closing-reads.ts';

/** The journal's file in a node's data directory. */
export const JOURNAL_FILE = 'unconfirmed-writes.mdb';
/** What a node logs when it starts with writes its last process journaled and had not read back. */
export const READING_BACK_JOURNALED = 'this node\'s last process journaled writes it had not read back in the cluster log: reading them back before it applies the log';

const bySeq = (a: AcknowledgedWrite, b: AcknowledgedWrite) => a.seq - b.seq;

export class WriteJournal implements JournalOfWrites {
  readonly #env: RootDatabase;
  readonly #writes: Database<JournaledWrite, string>;
  readonly #toHandOver: Database<AcknowledgedWrite, string>;

  private constructor(env: RootDatabase) {
    this.#env = env;
    this.#writes = env.openDB<JournaledWrite, string>({ name: 'writes', encoding: 'msgpack' });
    this.#toHandOver = env.openDB<AcknowledgedWrite, string>({ name: 'toHandOver', encoding: 'msgpack' });
  }

  /**
   * No fsync per commit: the journal survives the node's process dying (a kill, a crash, the OOM killer),
   * not its machine losing power, as nats-server 2.9.10's file store does not either (it syncs every two
   * minutes); a sync per batch would cost every batch a disk flush for that.
   */
  static open(dataDir: string): WriteJournal {
    return new WriteJournal(open({ path: join(dataDir, JOURNAL_FILE), maxDbs: 4, noSync: true, mapSize: 4 * 1024 ** 3 }));
  }

  /** The writes journaled and not released, in the order of their acknowledged sequences. */
  unconfirmed(): JournaledWrite[] {
    return [...this.#writes.getRange().map(({ value }) => value)].sort((a, b) => bySeq(a.write, b.write));
  }

  /** Keeps `write` until released; resolves once it is in the file. */
  async hold(write: AcknowledgedWrite, appends: number): Promise<void> {
    await this.#writes.put(write.msgId, { write, appends });
  }

  /** The write with `msgId` was read back (or is held no more): forgets it. */
  async release(msgId: string): Promise<void> {
    await this.#writes.remove(msgId);
  }

  /** Keeps the writes a hand-over is to check (replacing any kept before); resolves once they are in the file. */
  async keepToHandOver(writes: readonly AcknowledgedWrite[]): Promise<void> {
    await this.#toHandOver.transaction(() => {
      for (const msgId of this.#toHandOver.getKeys()) void this.#toHandOver.remove(msgId);
      for (const write of writes) void this.#toHandOver.put(write.msgId, write);
    });
  }

  /** The writes a hand-over that did not finish was to check, in the order of their acknowledged sequences. */
  toHandOver(): AcknowledgedWrite[] {
    return [...this.#toHandOver.getRange().map(({ value }) => value)].sort(bySeq);
  }

  /** The hand-over finished: those writes that were missing are appended again (and journaled as such). */
  async handedOver(): Promise<void> {
    await this.#toHandOver.clearAsync();
  }

  close(): Promise<void> {
    refuseReads('the write journal', [this.#env, this.#writes, this.#toHandOver]);
    return this.#env.close();
  }
}
