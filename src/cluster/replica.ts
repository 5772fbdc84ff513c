// A node's replica of the whole log: applies each command, in log order, through the same code a single
// node's API uses (src/writes.ts), and remembers the last applied sequence in its store.
import type { ConsumerMessages } from '@nats-io/jetstream';
import type { Logger } from '../log.ts';
import type { Dictionary } from '../storage/dictionary.ts';
import { putKey, revokeKey } from '../storage/keys.ts';
import type { Store } from '../storage/store.ts';
import { findVm, MissingTagError } from '../storage/vms.ts';
import { putVulnerabilities } from '../storage/vulns.ts';
import type { LocalWrites } from '../writes.ts';
import { isCopyOfApplied, recordApplied } from './applied-ids.ts';
import { APPLIED_AFTER_START, keepUntilStarted, KEPT_UNTIL_START, readyWrites, release } from './awaiting-start.ts';
import type { ReadyWrite } from './awaiting-start.ts';
import { foldApplied } from './applied-windows.ts';
import { decodeCommand, loggedEvents } from './commands.ts';
import type { Command } from './commands.ts';
import { describeNatsError, LogUnavailableError, msgIdOf, notFor } from './log.ts';
import type { ClusterLog } from './log.ts';
import { CHECK_EVERY } from './log-checks.ts';
import { LastSeqQuestions } from './read-barrier.ts';

/** The store's meta key holding the last applied log sequence. */
const APPLIED_SEQ = 'logSeq';
/** What a node logs for a logged command it skips, as every node reading this history does. */
const SKIPPED = 'a logged command does not apply and is skipped';

/** What a node logs while a command's apply takes longer than APPLY_SLOW_MS. */
export const APPLYING_SLOWLY = 'a command of the cluster log is taking long to apply';
/** What a node logs for a write it skips as another copy of one it applied (applied-ids.ts); the chaos bench counts these lines. */
export const COPY_SKIPPED = 'a write appended again is skipped: this node applied another copy of it';
/** What a node logs of the commands it read one by one while no consumer could follow the log (any server's replica answers those reads). */
export const READ_ONE_BY_ONE = 'read the cluster log command by command while no consumer could follow it';

/**
 * A report page whole, or the first part of one: the parts after it write into the file it makes, so they
 * wait for it (src/cluster/reports.ts, #appendPage).
 */
function isWholePage(command: Command): command is Extract<Command, { kind: 'report.page' }> {
  return command.kind === 'report.page' && command.offset === undefined;
}

/** The last log sequence applied to this store (0 for a store that never applied one). */
export function appliedSeq(store: Pick<Store, 'meta'>): number {
  return (store.meta.get(APPLIED_SEQ) as number | undefined) ?? 0;
}

/** Records `seq` as the last applied outside the replica: a single node's data adopted as a log's first command (log-identity.ts). */
export async function recordAppliedSeq(store: Pick<Store, 'meta'>, seq: number): Promise<void> {
  await store.meta.put(APPLIED_SEQ, seq);
}

/**
 * Throws unless the store has applied the log up to `seq`: a command in flight stores its own sequence only
 * after the one before it, so none outlives a failed one (the node starts over from the failed command).
 */
function expectApplied(store: Pick<Store, 'meta'>, seq: number): void {
  const stored = appliedSeq(store);
  if (stored !== seq) throw new Error(`command ${seq + 1} of the cluster log follows command ${seq}, but this node's store has applied up to ${stored}`);
}

const RETRY_MS = 1_000;
/** A consumer JetStream could not create (its API request timed out) is asked for again this soon. */
const FOLLOW_RETRY_MS = 200;
/**
 * A consumer that delivers nothing this long while a read waits for a command it lacks is replaced: its
 * nats-server died, say (the library itself notices only after two missed 15 s heartbeats). Doubled, up to
 * 2 s, after a replacement that delivered nothing yet: while JetStream elects leaders a new consumer cannot be
 * created, and the one tried last should not wait long once it can.
 */
const STALL_MS = 1_000;
const STALL_MAX_MS = 2_000;
/** With no read waiting, the log is asked whether it has more at most this often. */
const IDLE_CHECK_MS = 3_000;
const WATCHDOG_MS = 250;
/**
 * A command still applying after this long is logged (again each time as long again), and health is DOWN
 * naming it: the watchdog replaces only a silent consumer, and a node whose apply never ends looked idle.
 */
const APPLY_SLOW_MS = 30_000;
/** How long a read waits for this node to catch up before answering 503. */
const CATCH_UP_MS = 10_000;
/**
 * Last-sequence questions in flight at most for reads (read-barrier.ts). In throwaway A/Bs of CVE pages
 * through a node of three under 10 connections, 1, 3 and 6 gave alike (5.0-5.7k req/s), and 3 against the
 * questions unshared gave 5,525 against 5,152 req/s on average (README "Measured").
 */
const LAST_SEQ_QUESTIONS_IN_FLIGHT = 3;
/**
 * Agent batches applied before the one ahead of them is on disk, at most: lmdb-js commits those queued
 * together in one transaction, with one flush. A transaction each cost a node catching up (after a restart,
 * or on a machine of its own) about 15 % of its time: alone in three code groups it applied 1.49-1.50M
 * known code items/s, and 1.76M with this (`npm run bench -- --filter alone`). Report pages too (#applyPage).
 */
const MAX_IN_FLIGHT = 8;

export interface ReplicaOptions {
  /** This node: commands not for it (log.ts, notFor) are recorded as applied without being read. */
  nodeId: string;
  log: ClusterLog;
  store: Store;
  dict: Dictionary;
  writes: LocalWrites;
  /** The code group whose items this node applies (src/storage/code-groups.ts). */
  codeGroup: number;
  /**
   * Each command as it is read, in log order, before it is applied, with its message id and how many
   * commands the server held after it, when known (acknowledged-writes.ts checks this node's writes).
   */
  read?: (seq: number, data: Uint8Array, msgId: string | null, after: number | null) => void;
  /** Commands a window of the log's hashes holds (applied-windows.ts; CHECK_EVERY unless a test says otherwise). */
  windowEvery?: number;
  /** Called once the command at `seq` is applied, in log order. */
  applied?: (seq: number) => void;
  /** Test only (`--test-faults misread-log`): the bytes hashed for the command at `seq` in place of its own. */
  hashed?: (seq: number, data: Uint8Array) => Uint8Array;
  /** Applies report commands (src/cluster/reports.ts). */
  applyReport: (command: Command) => Promise<void>;
  /** Re-matches the fleet's components against the vulnerability data just stored. */
  rematch: () => Promise<void>;
  logger: Logger;
  /** Test only (`--test-faults slow-apply`): every command takes this much longer to apply. */
  slowApplyMs?: number;
  /** Test only (`--test-faults failing-apply`): while this says so, applying any command fails, as on a full disk. */
  applyFails?: () => boolean;
  /** Test only (`--test-faults hanging-apply`): while this says so, an apply does not end, as one waiting for a lock never given. */
  applyHangs?: () => boolean;
  /** A command still applying after this long is slow (APPLY_SLOW_MS unless a test says otherwise). */
  applySlowMs?: number;
}

export class Replica {
  readonly #options: ReplicaOptions;
  #applied: number;
  readonly #waiters: { seq: number; resolve: () => void }[] = [];
  #stopped = false;
  #stop: (() => void) | null = null;
  #running: Promise<void> = Promise.resolve();
  /** When the consumer last delivered a command, was started, or a command's apply ended. */
  #receivedAt = Date.now();
  /** The commands being applied now, by sequence (several while agent batches are in flight): their kind, since when, and what they wait for. */
  readonly #applying = new Map<number, { kind: string; since: number; step: string }>();
  /** When a command applying slowly was last logged (see APPLY_SLOW_MS). */
  #slowLoggedAt = 0;
  /** The agent batches, or the report pages, in flight, oldest first: each settles once it is applied or has failed. */
  readonly #inFlight: Promise<void>[] = [];
  #inFlightKind: 'events' | 'report.page' = 'events';
  /** The last one started, which the next one waits for before it counts as applied. */
  #lastInFlight: Promise<void> = Promise.resolve();
  /** Why a batch in flight failed (the others after it then fail too), until #follow starts over. */
  #failure: Error | null = null;
  /** When the last command was applied: a command in flight behind it took only the time since. */
  #appliedAt = 0;
  #stallMs = STALL_MS;
  #askedAt = 0;
  /** The log's last sequence, asked for reads (read your writes). */
  readonly #questions: LastSeqQuestions;
  #watchdog: ReturnType<typeof setInterval> | null = null;
  /** Why this node can no longer follow the log (it was truncated past it), or null. */
  #problem: string | null = null;
  /** The command that failed to apply and why, until one applies: reads here would only wait (health is DOWN). */
  #applyFailure: { seq: number; problem: string } | null = null;
  /**
   * The highest log sequence this node knows of: from the last-sequence questions, from reads waiting, and
   * from each delivered command with JetStream's count of those after it (as of its delivery).
   */
  #knownLast = 0;
  /** How long applying a command takes here, averaged over the recent ones. */
  #applyMs = 0;

  constructor(options: ReplicaOptions) {
    this.#options = options;
    this.#applied = appliedSeq(options.store);
    this.#questions = new LastSeqQuestions(async () => {
      const last = await options.log.lastSeq();
      this.#knownLast = Math.max(this.#knownLast, last);
      return last;
    }, LAST_SEQ_QUESTIONS_IN_FLIGHT);
  }

  /**
   * About how long this node needs to apply the commands it knows the log holds beyond its last applied one
   * (their count times its recent time per command): reads here wait about as long.
   */
  behindMs(): number {
    // Counted here rather than from the log's timestamps: those are the servers' clocks, not this one's.
    return Math.max(0, this.#knownLast - this.#applied) * this.#applyMs;
  }

  /** Why this replica cannot follow the log any more, or null: health's note. */
  get problem(): string | null {
    return this.#problem ?? this.#applyFailure?.problem ?? this.#slowApply()?.problem ?? null;
  }

  get #slowMs(): number {
    return this.#options.applySlowMs ?? APPLY_SLOW_MS;
  }

  /** The oldest command applying for longer than APPLY_SLOW_MS, or null. */
  #slowApply(): { seq: number; kind: string; step: string; applyingMs: number; problem: string } | null {
    const oldest = this.#applying.entries().next().value;
    if (oldest === undefined) return null;
    const [seq, { kind, since, step }] = oldest;
    const applyingMs = Date.now() - since;
    if (applyingMs < this.#slowMs) return null;
    return { seq, kind, step, applyingMs, problem: `applying command ${seq} of the cluster log (${kind}) has taken ${Math.round(applyingMs / 1000)} s so far; reads wait for it` };
  }

  /** The highest log sequence this node knows of (see #knownLast). */
  get knownLast(): number {
    return Math.max(this.#knownLast, this.#applied);
  }

  /** The last sequence applied to this node's store. */
  get applied(): number {
    return this.#applied;
  }

  start(): void {
    this.#running = this.#follow();
    this.#watchdog = setInterval(() => void this.#checkProgress(), WATCHDOG_MS);
    this.#watchdog.unref();
  }

  /**
   * An ordered consumer whose server died stays silent: when the log is ahead and nothing came for a while,
   * start a new one. A read waiting for a command not yet here is proof enough that the log is ahead;
   * otherwise the log is asked, every few seconds.
   */
  async #checkProgress(): Promise<void> {
    if (this.#stopped) return;
    if (this.#applying.size > 0) return this.#logSlowApply();
    if (Date.now() - this.#receivedAt < this.#stallMs) return;
    let last = this.#waiters.reduce((highest, waiter) => Math.max(highest, waiter.seq), 0);
    if (last <= this.#applied) {
      if (Date.now() - this.#askedAt < IDLE_CHECK_MS) return;
      this.#askedAt = Date.now();
      last = await this.#options.log.lastSeq().catch(() => -1);
      this.#knownLast = Math.max(this.#knownLast, last);
      if (last <= this.#applied || Date.now() - this.#receivedAt < this.#stallMs) return;
    }
    this.#options.logger.warn('the cluster log consumer stalled; starting a new one', { applied: this.#applied, last, silentMs: Date.now() - this.#receivedAt });
    this.#receivedAt = Date.now();
    this.#stallMs = Math.min(STALL_MAX_MS, this.#stallMs * 2);
    this.#stop?.();
  }

  /** Logs a command applying for longer than APPLY_SLOW_MS, once per such span. */
  #logSlowApply(): void {
    const slow = this.#slowApply();
    if (slow === null || Date.now() - this.#slowLoggedAt < this.#slowMs) return;
    this.#slowLoggedAt = Date.now();
    this.#options.logger.warn(APPLYING_SLOWLY, { seq: slow.seq, kind: slow.kind, step: slow.step, applyingMs: slow.applyingMs, inFlight: this.#applying.size, applied: this.#applied });
  }

  /** Resolves once everything up to `seq` is applied here. */
  waitFor(seq: number): Promise<void> {
    if (this.#applied >= seq) return Promise.resolve();
    this.#knownLast = Math.max(this.#knownLast, seq);
    return new Promise((resolve) => this.#waiters.push({ seq, resolve }));
  }

  /** Resolves once every write the log acknowledged before this call is applied here (read your writes). */
  async caughtUp(): Promise<void> {
    const target = await this.#questions.afterNow();
    if (this.#applied >= target) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new LogUnavailableError(`this node has applied the cluster log up to ${this.#applied} of ${target} and did not catch up within ${CATCH_UP_MS / 1000} s`)), CATCH_UP_MS);
    });
    try {
      await Promise.race([this.waitFor(target), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  async #follow(): Promise<void> {
    const { log, logger } = this.#options;
    while (!this.#stopped) {
      let messages: ConsumerMessages;
      try {
        this.#receivedAt = Date.now();
        const first = await log.firstSeq();
        if (first > this.#applied + 1) return this.#truncated(first);
        messages = await log.follow(this.#applied + 1);
      } catch (error) {
        if (this.#stopped) return;
        // While JetStream elects leaders after a server died each try times out; the first after it succeeds.
        // Meanwhile the servers still give the log's commands one by one.
        logger.warn('following the cluster log failed; reading it command by command meanwhile', { applied: this.#applied, reason: describeNatsError(error as Error) });
        await this.#applyDirect();
        await new Promise((resolve) => setTimeout(resolve, FOLLOW_RETRY_MS));
        continue;
      }
      this.#stop = () => messages.stop();
      if (this.#stopped) messages.stop();
      try {
        // The next sequence to apply: #applied lags it while batches are in flight.
        let next = this.#applied + 1;
        for await (const message of messages) {
          // A batch in flight failed: the consumer is stopped, and what it still delivers would fail too.
          if (this.#failure !== null) break;
          this.#receivedAt = Date.now();
          this.#stallMs = STALL_MS;
          // An ordered consumer restarted by the library may deliver what is applied already.
          if (message.seq < next) continue;
          // Sequences run without gaps but where the log was truncated (an earlier version kept key commands there, so a gap can follow one).
          if (message.seq > next) {
            messages.stop();
            await this.#settled();
            if (this.#failure !== null) break;
            return this.#truncated(message.seq);
          }
          next = message.seq + 1;
          this.#knownLast = Math.max(this.#knownLast, message.seq + message.info.pending);
          const msgId = msgIdOf(message.headers);
          this.#options.read?.(message.seq, message.data, msgId, message.info.pending);
          if (notFor(message.headers) === this.#options.nodeId) await this.#skip(message.seq, message.data, msgId);
          else await this.#applyReceived(message.seq, message.data, msgId, true);
        }
        await this.#settled();
        if (this.#failure !== null) throw this.#failure;
      } catch (error) {
        await this.#settled();
        this.#failure = null;
        if (this.#stopped) return;
        logger.error('applying the cluster log failed; retrying from the last applied command', { applied: this.#applied, stack: (error as Error).stack });
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    }
  }

  /** Applies the commands after the last applied one, read one by one (ClusterLog.commandAt), until one is not there (yet). */
  async #applyDirect(): Promise<void> {
    const from = this.#applied + 1;
    try {
      while (!this.#stopped) {
        const seq = this.#applied + 1;
        const command = await this.#options.log.commandAt(seq);
        if (command === null) return;
        this.#options.read?.(seq, command.data, command.msgId, null);
        if (command.notFor === this.#options.nodeId) await this.#skip(seq, command.data, command.msgId);
        else await this.#applyReceived(seq, command.data, command.msgId, false);
      }
    } catch (error) {
      // Unavailable too, or a command that does not apply: the consumer's path retries and says which.
      this.#options.logger.warn('reading the cluster log command by command stopped', { applied: this.#applied, reason: describeNatsError(error as Error) });
    } finally {
      // Any server's replica answers these reads, not the consumer's: said, so that a window found odd later can be traced to them.
      if (this.#applied >= from) this.#options.logger.info(READ_ONE_BY_ONE, { from, to: this.#applied });
    }
  }

  /**
   * Applies the command at `seq`. With `inFlight`, an agent batch or a report page is only started (up to
   * MAX_IN_FLIGHT of them): its failure stops the consumer, and #follow starts over from the last applied command.
   */
  async #applyReceived(seq: number, data: Uint8Array, msgId: string | null, inFlight: boolean): Promise<void> {
    let command: Command;
    try {
      command = decodeCommand(data);
    } catch (error) {
      throw this.#failedAt(seq, error as Error);
    }
    if ((command.kind === 'events' || isWholePage(command)) && inFlight && this.#options.slowApplyMs === undefined) {
      // Batches and pages are never in flight together: a batch's transaction expects the command before it stored.
      if (this.#inFlight.length > 0 && this.#inFlightKind !== command.kind) {
        await this.#settled();
        if (this.#failure !== null) throw this.#failure;
      }
      this.#inFlightKind = command.kind;
      const applying = (command.kind === 'events' ? this.#applyEvents(seq, data, command, msgId) : this.#applyPage(seq, data, command, msgId)).catch((error: Error) => {
        this.#failure ??= error;
        this.#stop?.();
      });
      this.#inFlight.push(applying);
      void applying.then(() => this.#inFlight.splice(this.#inFlight.indexOf(applying), 1));
      if (this.#inFlight.length >= MAX_IN_FLIGHT) await this.#inFlight[0];
      return;
    }
    await this.#settled();
    if (this.#failure !== null) throw this.#failure;
    if (command.kind === 'events') await this.#applyEvents(seq, data, command, msgId);
    else await this.#measured(seq, command.kind, () => this.#apply(seq, data, command, msgId));
  }

  /** Records a command this node holds the effect of already (log.ts, NOT_FOR_HEADER) as applied, unread. */
  async #skip(seq: number, data: Uint8Array, msgId: string | null): Promise<void> {
    await this.#settled();
    if (this.#failure !== null) throw this.#failure;
    await this.#measured(seq, 'skipped: another node\'s effect', () => this.#recordApplied(seq, data, msgId, false));
  }

  /** Until every agent batch or page in flight is applied or has failed. */
  async #settled(): Promise<void> {
    while (this.#inFlight.length > 0) await this.#inFlight[0];
  }

  /**
   * Stores an agent batch with its sequence in one transaction, which it runs only if the command before it
   * is applied: in flight, it may share a transaction with the ones before it, and must not outlive a failed one.
   */
  #applyEvents(seq: number, data: Uint8Array, command: Extract<Command, { kind: 'events' }>, msgId: string | null): Promise<void> {
    const { store, dict, writes, logger, codeGroup } = this.#options;
    const { decode, receivedAt } = loggedEvents(command, codeGroup);
    const previous = this.#lastInFlight;
    // Called at once (unless a test slows applies down), so the transactions queue in log order.
    const applied = this.#measured(seq, command.kind, async () => {
      // A batch naming VMs nothing started is not rejected: decided by the data the log put before it, so
      // every replica keeps the same command until they start (awaiting-start.ts), and its sequence commits.
      let copy = false;
      let kept = false;
      let ready: ReadyWrite[] = [];
      let released: ReturnType<typeof release> = [];
      const { skipped } = await writes.decoded(() => {
        expectApplied(store, seq - 1);
        // The sequence commits in the batch's own transaction: a restart never applies a batch twice.
        store.meta.put(APPLIED_SEQ, seq);
        this.#fold(seq, data);
        const events = decode();
        // Applied again, only a batch that starts a VM can undo a newer write (applied-ids.ts).
        const starts = events.some((event) => event.type === 'vm.start');
        copy = starts && isCopyOfApplied(store, msgId);
        recordApplied(store, seq, msgId, starts && !copy);
        if (copy) return [];
        // The writes that waited for the VMs it starts apply in its transaction, after its own events.
        ready = starts ? readyWrites(store, events, codeGroup) : [];
        return ready.length === 0 ? events : [...events, ...ready.flatMap((write) => ('events' in write ? write.events : []))];
      }, receivedAt, {
        unknownVms: (error) => {
          kept = keepUntilStarted(store, seq, data, error.vmIds);
        },
        written: () => {
          released = release(store, dict, ready);
        },
      });
      this.#step(seq, 'waiting for the command before it');
      await previous;
      if (copy) logger.warn(COPY_SKIPPED, { seq, msgId });
      if (skipped !== null) logger.warn(kept ? KEPT_UNTIL_START : SKIPPED, { seq, kind: command.kind, vmIds: skipped.vmIds.slice(0, 10), reason: skipped.message });
      for (const write of released) logger.warn(APPLIED_AFTER_START, { seq, kept: write.seq, ...(write.skipped === undefined ? {} : { skipped: write.skipped }) });
    });
    this.#lastInFlight = applied.catch(() => undefined);
    return applied;
  }

  /**
   * Writes a report's page (a file, synced), several at once: one after the other, each 5.5 MB page took a
   * node 10 to 100 ms, most of the time every other node served a code report after its coordinator. The
   * sequence is stored in log order, once the page and every command before it are.
   */
  #applyPage(seq: number, data: Uint8Array, command: Extract<Command, { kind: 'report.page' }>, msgId: string | null): Promise<void> {
    const { store, applyReport } = this.#options;
    const previous = this.#lastInFlight;
    const applied = this.#measured(seq, command.kind, async () => {
      await applyReport(command);
      this.#step(seq, 'waiting for the command before it');
      await previous;
      this.#step(seq, 'storing its sequence');
      expectApplied(store, seq - 1);
      // A page written again is the same file: its copies are not looked for.
      await this.#recordApplied(seq, data, msgId, false);
    });
    this.#lastInFlight = applied.catch(() => undefined);
    return applied;
  }

  /**
   * The log no longer holds the commands after this node's last: it stops and says so; only a copy of
   * another node's data helps, which a node takes at its start (restore.ts).
   */
  #truncated(next: number): void {
    this.#problem = `this node applied the cluster log up to ${this.#applied}, but the log now goes on at ${next}: the commands between were truncated once every other node had applied them; restart this node while another node of its code group is UP (it then starts from a copy of that node's data; README "Running a cluster")`;
    this.#options.logger.error('the cluster log was truncated past this node', { applied: this.#applied, next });
  }

  /**
   * Notes that the command at `seq` does not apply here (not an error of the consumer's, such as a server
   * gone): health is DOWN with `error` until a command applies. Returns `error`, to be thrown.
   */
  #failedAt(seq: number, error: Error): Error {
    // The first of the batches in flight that failed is the one that does not apply; those after it fail for it.
    if (this.#applyFailure === null || seq <= this.#applyFailure.seq) {
      this.#applyFailure = { seq, problem: `applying the cluster log fails at command ${seq} (${error.message}); retrying every ${RETRY_MS / 1000} s` };
    }
    return error;
  }

  /** Names what the command at `seq` waits for now: a slow apply is logged with it. */
  #step(seq: number, step: string): void {
    const applying = this.#applying.get(seq);
    if (applying !== undefined) applying.step = step;
  }

  /** Counts `apply` as applying the command at `seq`, and once it is done, says so to the reads waiting for it. */
  async #measured(seq: number, kind: string, apply: () => Promise<void>): Promise<void> {
    const started = performance.now();
    this.#applying.set(seq, { kind, since: Date.now(), step: 'applying' });
    try {
      if (this.#options.slowApplyMs !== undefined) await new Promise((resolve) => setTimeout(resolve, this.#options.slowApplyMs));
      try {
        if (this.#options.applyFails?.() === true) throw new Error('test fault: applying fails');
        while (this.#options.applyHangs?.() === true) await new Promise((resolve) => setTimeout(resolve, 100));
        await apply();
      } catch (error) {
        throw this.#failedAt(seq, error as Error);
      }
    } finally {
      this.#applying.delete(seq);
      this.#receivedAt = Date.now();
    }
    // A command in flight behind another took only the time since that one was applied.
    const now = performance.now();
    const took = now - Math.max(started, this.#appliedAt);
    this.#appliedAt = now;
    this.#applyMs = this.#applyMs === 0 ? took : 0.9 * this.#applyMs + 0.1 * took;
    this.#applied = seq;
    this.#applyFailure = null;
    this.#options.applied?.(seq);
    for (let i = this.#waiters.length - 1; i >= 0; i--) {
      if (this.#waiters[i].seq <= seq) {
        this.#waiters[i].resolve();
        this.#waiters.splice(i, 1);
      }
    }
  }

  /** Applies a command other than an agent batch; the sequence is written after it, as these are idempotent. */
  async #apply(seq: number, data: Uint8Array, command: Exclude<Command, { kind: 'events' }>, msgId: string | null): Promise<void> {
    // The parts of a page after its first are the same bytes each time: their copies are not looked for.
    const { store, logger } = this.#options;
    const looked = command.kind !== 'report.page';
    const copy = looked && isCopyOfApplied(store, msgId);
    // A tag edit of a VM this node does not hold yet waits for its start, kept in the sequence's transaction (awaiting-start.ts).
    const waiting = !copy && command.kind === 'tags' && findVm(store, command.edit.vmId) === undefined ? command.edit.vmId : null;
    let kept = false;
    if (copy) logger.warn(COPY_SKIPPED, { seq, msgId });
    else if (waiting === null) await this.#change(seq, command);
    this.#step(seq, 'storing its sequence');
    // Applied again after a crash, these commands leave the same state.
    await this.#recordApplied(seq, data, msgId, looked && !copy, () => {
      if (waiting !== null) kept = keepUntilStarted(store, seq, data, [waiting]);
    });
    if (waiting !== null) logger.warn(kept ? KEPT_UNTIL_START : SKIPPED, { seq, kind: command.kind, vmIds: [waiting] });
  }

  /** Makes the command's change to this node's store; one that does not apply (a tag the VM lacks) is logged and skipped. */
  async #change(seq: number, command: Exclude<Command, { kind: 'events' }>): Promise<void> {
    const { store, writes, logger } = this.#options;
    try {
      switch (command.kind) {
        case 'tags':
          await writes.tags(command.edit);
          break;
        case 'key.put':
          await putKey(store, command.record);
          break;
        case 'key.revoke':
          await revokeKey(store, command.keyId, command.at, true);
          break;
        case 'vulns':
          await putVulnerabilities(store, command.records, command.at);
          // Before the next command: a batch after the import is applied against the re-matched fleet.
          await this.#options.rematch();
          break;
        default:
          await this.#options.applyReport(command);
      }
    } catch (error) {
      // Decided by the data the log put before it, so every replica skips the same command.
      if (!(error instanceof MissingTagError)) throw error;
      logger.warn(SKIPPED, { seq, kind: command.kind, reason: error.message });
    }
  }

  /**
   * Stores `seq` as the last applied, its bytes in its window's hash, and its message id if `remember`
   * (applied-ids.ts), in one transaction, with what `also` writes.
   */
  async #recordApplied(seq: number, data: Uint8Array, msgId: string | null, remember: boolean, also?: () => void): Promise<void> {
    const { store } = this.#options;
    await store.env.transaction(() => {
      store.meta.put(APPLIED_SEQ, seq);
      this.#fold(seq, data);
      recordApplied(store, seq, msgId, remember);
      also?.();
    });
  }

  /** Folds the command's bytes into its window's hash (applied-windows.ts): call in the transaction that applies it. */
  #fold(seq: number, data: Uint8Array): void {
    const { store, hashed, windowEvery } = this.#options;
    foldApplied(store, seq, hashed?.(seq, data) ?? data, windowEvery ?? CHECK_EVERY);
  }

  /** Stops applying the log for good, for `problem` (health's note until the node restarts). */
  halt(problem: string): void {
    if (this.#problem === problem) return;
    this.#problem = problem;
    this.#options.logger.error('stopped applying the cluster log', { reason: problem });
    this.#stopped = true;
    this.#stop?.();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#watchdog !== null) clearInterval(this.#watchdog);
    this.#stop?.();
    await this.#running;
  }
}
