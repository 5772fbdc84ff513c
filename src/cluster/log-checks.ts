// Whether the nodes read one log: each hashes the commands it applies, a window of them at a time
// (applied-windows.ts), and compares its hash of each window with the other nodes'. JetStream promises
// every reader one history of a stream; Jepsen found replicas of NATS 2.12.1 serving different ones after
// power failures combined with pauses, and a node that applied another history would serve other data with
// nobody the wiser.
import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '../log.ts';
import type { Store } from '../storage/store.ts';
import { forgetAppliedHashes, forgetAppliedWindows } from './applied-windows.ts';
import type { WindowHash } from './applied-windows.ts';
import { bucketEntries, keptBucket, readBucket } from './buckets.ts';
import { LogPartings } from './log-partings.ts';
import { describeNatsError } from './log.ts';
import { goneNode } from './membership.ts';
import { mostShared, oddBefore, rightReading, voided } from './right-reading.ts';
import type { OddWindow, RightReading, WindowCommands } from './right-reading.ts';

const BUCKET = 'jvmlens_log_checks';
/** Commands a window holds: a node applying 30 agent batches a second compares every two minutes or so. */
export const CHECK_EVERY = 4_096;
/** A window's hashes are kept this long: a node replaying the log later than that compares nothing. */
const CHECK_TTL_MS = 24 * 3_600_000;
/** How many of this node's latest windows are compared again at each new one: others may record them later. */
const WINDOWS_RECHECKED = 4;
/** How many of this node's windows JetStream did not take are kept to be recorded later (a window is 4,096 commands). */
const UNRECORDED_KEPT = 16;
/** How many windows that differed, with no reading taken as right yet, are compared again at each new one. */
const UNSETTLED_KEPT = 16;
/** How many differing windows this node remembers since when they differ (the tail's, compared every 5 s, among them). */
const DIFFERING_KEPT = 64;
/** The store's meta key holding the window this node read otherwise than the reading taken as right: it stays DOWN across restarts. */
const ODD_WINDOW = 'logOddWindow';
/** The bucket's key marking a node that read an odd history, until it was rebuilt: its reading is not taken as right. */
const ODD_MARK = 'odd';
/** The bucket's key holding a window's reading taken as right, recorded once for all nodes. */
const RIGHT = 'right';
/** The bucket's key marking a node that serves its own reading of a window taken as odd, no node having given it a copy (it deleted its hash of that window). */
const OWN_MARK = 'own';
/** The store's meta key holding the window a node serves its own reading of, so, for health's note across restarts (a copy of its data carries it). */
const OWN_READING = 'logOwnReading';

/** What a node logs when it finds it read another history than the one taken as right, which two or more nodes read. */
export const FOUND_ODD = 'this node read another history of the cluster log than every other node';
/** What it logs where no two nodes read the window alike, and the first node's reading by id is taken as right. */
export const FOUND_ODD_NO_TWO_ALIKE = 'no two nodes read the cluster log alike: this node takes the reading of the first of them by id as right';
/** What it logs where as many nodes read the window one way as another, and the reading holding commands the others lack is taken as right. */
export const FOUND_ODD_FULLEST = 'as many nodes read the cluster log one way as another: this node takes as right the reading that holds commands the others lack where they part';
/** What it logs where fewer than three nodes read the window, and the log, read again, gave another node's reading. */
export const FOUND_ODD_BY_LOG = 'this node read the cluster log otherwise than the log reads now, as another node read it';
/** What a node logs when the reading it was found odd by was of nodes found since to have read an odd history before it. */
export const FINDING_VOIDED = 'the reading this node was found odd by was of nodes that read an odd history of an earlier window: this node serves its data again, and the window is decided again without them';
/** What a node waiting for a copy logs when every node of the reading it was found odd by has been gone for GONE_FOR_GOOD_MS. */
export const FINDING_GONE = 'the nodes whose reading this node was found odd by have been gone too long to give a copy of their data: this node serves its own data again, and the window is decided again without them';
/** What a node waiting for a copy logs when a node that could give one runs now that did not at its last look. */
export const COPY_NOW = 'a node that can give this node a copy of its data runs now: starting again to take it';
/** What it logs when those nodes run, but none that read so could give it a copy (none of its code group) for GONE_FOR_GOOD_MS. */
export const FINDING_NO_COPY = 'no node that read the history taken as right could give this node a copy of its data for too long (none of its code group): this node serves its own data, which may lack writes acknowledged meanwhile, and no longer compares that window';
/** What it logs when those nodes run, and every other node of its code group read that window otherwise too: none ever can give it a copy. */
export const NO_COPY_CAN_COME = 'every other node of this node\'s code group read that window otherwise than the history taken as right too, so none can give this node a copy of its data: this node serves its own data, which may lack writes acknowledged meanwhile, and no longer compares that window';
/** What a node comparing a window logs when its decision no longer counts so. */
export const DECISION_VOIDED = 'the reading taken as right was of nodes that read an odd history of an earlier window: the window is decided again without them';
/**
 * How long a window that two nodes read differently waits for a third reading before the log is read again
 * to tell which is right: a third node records its hash within seconds, unless it is down or was rebuilt
 * from a copy (its hashes deleted). A chaos run's two differing readings, with the third node rebuilt from
 * one of them, stayed undecided, and one node lacked three acknowledged VMs to the end.
 */
const READ_AGAIN_AFTER_MS = 20_000;
/**
 * How long every node of the reading a node was found odd by must have been gone (no process holds its id:
 * killed, its machine down; a paused one still holds it) while the node waits for a copy of their data,
 * before it serves its own instead. Their data went with them: waiting longer, every node that read
 * otherwise would stay DOWN for good. A restart takes seconds, a machine's reboot minutes.
 */
export const GONE_FOR_GOOD_MS = 10 * 60_000;

/** The window this store's node read otherwise than every other node (it is to be rebuilt), or null. */
export function storedOddWindow(store: Pick<Store, 'meta'>): OddWindow | null {
  const odd = store.meta.get(ODD_WINDOW);
  return typeof odd === 'string' ? (JSON.parse(odd) as OddWindow) : null;
}

async function forgetOddWindow(store: Pick<Store, 'meta'>): Promise<void> {
  await store.meta.remove(ODD_WINDOW);
}

/**
 * Drops what the checks kept of a log in a store (a finding, this node serving its own reading, the hashes of
 * what it applied): a data directory detached from its cluster (detach.ts) follows no log, and a cluster that
 * adopts it goes on with a new one.
 */
export async function forgetLogChecks(store: Pick<Store, 'env' | 'meta'>): Promise<void> {
  await forgetOddWindow(store);
  await store.meta.remove(OWN_READING);
  await forgetAppliedHashes(store);
}

/** Every window hash the nodes recorded (none before any node did), as the chaos bench checks them. */
export function recordedWindows(nc: NatsConnection): Promise<(WindowHash & { nodeId: string })[]> {
  return readBucket(nc, BUCKET, async (kv) => (await bucketEntries(kv)).filter((entry) => /^\d/.test(entry.key)).map((entry) => {
    const dot = entry.key.indexOf('.');
    return { to: Number(entry.key.slice(0, dot)), nodeId: entry.key.slice(dot + 1), crc: Number(entry.string()) };
  }), []);
}

/**
 * Deletes every window hash `nodeId` recorded, and its mark as having read an odd history, once it was
 * rebuilt from a copy of a node whose reading is taken as right (before it reads on): they hash a history it
 * no longer holds, and a node comparing those windows later (one that replays the log from its start) would
 * find them differing from its own or, when it read that odd history too, share them and never find itself
 * the odd one.
 */
export async function forgetWindows(nc: NatsConnection, nodeId: string): Promise<void> {
  await readBucket(nc, BUCKET, (kv) => deleteEntriesOf(kv, nodeId, () => true), undefined);
}

/** Deletes the window hashes and the odd mark of `nodeId` whose window (the key's first part) `which` picks. */
async function deleteEntriesOf(kv: KV, nodeId: string, which: (window: string) => boolean): Promise<void> {
  for (const entry of await bucketEntries(kv, `*.${nodeId}`)) {
    const window = entry.key.slice(0, entry.key.indexOf('.'));
    if (window !== RIGHT && which(window)) await kv.delete(entry.key);
  }
}

/**
 * The nodes that read the window of `odd` as the reading taken as right: those it was decided by, and those
 * that recorded the same hash since (a node that was down, or slower, then). A node that read the odd history
 * copies one of them; with code groups, only one of its own group, which may well have recorded it later.
 */
export function readersOfRight(nc: NatsConnection, odd: OddWindow): Promise<string[]> {
  return readBucket(nc, BUCKET, (kv) => readersOf(kv, odd), odd.nodes);
}

async function readersOf(kv: KV, odd: OddWindow): Promise<string[]> {
  const decision = await kv.get(`${RIGHT}.${odd.to}`);
  if (decision === null || decision.operation !== 'PUT') return odd.nodes;
  const right = JSON.parse(decision.string()) as RightReading;
  // Decided again since (without the nodes it was found odd by): that decision finds it again, or not.
  if (right.nodes.join() !== odd.nodes.join()) return odd.nodes;
  const agreeing = (await bucketEntries(kv, `${odd.to}.*`)).filter((entry) => entry.string() === right.crc).map((entry) => entry.key.slice(entry.key.indexOf('.') + 1));
  return [...new Set([...odd.nodes, ...agreeing])].sort();
}

/** What a node waiting for a copy does after a look (LogChecks.lookWhileWaiting): serve its own data, start again to take a copy now, or wait on. */
export type WaitingLook = 'serve' | 'copy' | 'wait';

export interface LogChecksOptions {
  nodeId: string;
  replicas: number;
  logger: Logger;
  store: Pick<Store, 'meta'>;
  every?: number;
  /** Called once when this node is found to have read the odd history (not for one its store recorded before). */
  foundOdd?: (odd: OddWindow) => void;
  /** Whether a node runs now, to give a copy of its data (by default: unless no process holds its id; a busy one may answer late). */
  live?: (nodeId: string) => Promise<boolean>;
  /** The hash of the commands `from` to `to` as the log gives them now, or null once it holds them no longer (ClusterLog.hashOf); without it two differing readings stay undecided. */
  readAgain?: (from: number, to: number) => Promise<number | null>;
  /** How long two differing readings wait for a third before the log is read again (READ_AGAIN_AFTER_MS). */
  readAgainAfterMs?: number;
  /** GONE_FOR_GOOD_MS unless given. */
  goneForGoodMs?: number;
  /** Whether a node runs now that could give this node a copy of its data (with code groups: one of its own group); `live` by default. */
  canGiveCopy?: (nodeId: string) => Promise<boolean>;
  /**
   * The other nodes of this node's code group (every other node, without groups), or null where that cannot be
   * told now (a node with a place in the log does not answer). Without it, a node waiting for a copy that no
   * node can give serves its own data only after `goneForGoodMs`.
   */
  groupPeers?: () => Promise<string[] | null>;
  /** This node's own hash of each command from `from` to `to` as it applied them (applied-windows.ts `appliedCommands`); without it, where readings part is not told. */
  commandsOf?: (from: number, to: number) => Uint32Array;
}

/**
 * Each node's window hashes, in a KV bucket. A node compares each window it records, and its few before
 * it again (and those that differed with no reading taken as right yet, until one is), with the hashes the
 * others recorded: one that differs is named in its health note. Where three nodes or more recorded a window
 * and not alike (leaving out nodes marked as having read an odd history before, which are to be rebuilt), the
 * first node to compare them records which reading is taken as right (`rightReading`),
 * once for all; where fewer did, for READ_AGAIN_AFTER_MS, the log's reading of the window now (read again)
 * is taken as right, if a node that runs read it so. A node that read another read an odd history, likely without writes acknowledged meanwhile,
 * and is DOWN until rebuilt from a copy of a node that read the right one (restore.ts): its store says so,
 * so a restart does not serve the data it applied, and a mark in the bucket keeps the others from taking its
 * reading of a later window as right.
 */
export class LogChecks {
  readonly #kv: KV;
  readonly #live: (nodeId: string) => Promise<boolean>;
  readonly #canGiveCopy: (nodeId: string) => Promise<boolean>;
  readonly #groupPeers: (() => Promise<string[] | null>) | null;
  /** Where its readings of differing windows part from the others' (log-partings.ts); null without `commandsOf`. */
  readonly #partings: LogPartings | null;
  readonly #nodeId: string;
  readonly #logger: Logger;
  readonly #store: Pick<Store, 'meta'>;
  readonly #every: number;
  /** This node's latest windows, oldest first. */
  readonly #recent: WindowHash[] = [];
  /** The record or check running, which the next waits for. */
  #running: Promise<void> = Promise.resolve();
  /** Set by close(): the work queued is skipped, and a compare running stops at its next window. */
  #closed = false;
  /** This node's windows JetStream has not taken yet, oldest first (record). */
  readonly #unrecorded: WindowHash[] = [];
  /** Windows whose hashes differed while no reading was taken as right (too few nodes had recorded them), oldest first. */
  #unsettled: WindowHash[] = [];
  /**
   * The windows found differing, by their last command (the latest DIFFERING_KEPT): since when, and their
   * hash as the log gave them read again (null: it held them no longer), read once each.
   */
  readonly #differing = new Map<number, { since: number; logCrc?: number | null }>();
  readonly #readLog: ((from: number, to: number) => Promise<number | null>) | null;
  readonly #readAgainAfterMs: number;
  readonly #goneForGoodMs: number;
  /** Since when no node that read the reading this node was found odd by could give it a copy, at each look; null while one could. */
  #goneSince: number | null = null;
  /** The nodes that could give this node a copy at its last look; null before the first. */
  #giversBefore: Set<string> | null = null;
  /** The last command of the tail this node recorded (checkTail), 0 before any. */
  #tailRecorded = 0;
  /** Called once this node is found to have read the odd history (ClusterNode then rebuilds it). */
  readonly #foundOdd: (odd: OddWindow) => void;
  /** The first window whose hash differed from another node's, whose, and the first command the readings part at, once told; null while none did. */
  #mismatch: { to: number; nodes: string[]; parting?: number } | null = null;
  /** The window whose odd reading this node serves, no node having given it a copy, and the nodes whose reading was taken as right; null while none. */
  #ownReading: OddWindow | null;
  /** The first window this node read otherwise than the reading taken as right; null while none. */
  #odd: OddWindow | null;

  private constructor(nc: NatsConnection, kv: KV, options: LogChecksOptions) {
    this.#kv = kv;
    this.#live = options.live ?? (async (nodeId) => !(await goneNode(nc, nodeId)));
    this.#canGiveCopy = options.canGiveCopy ?? this.#live;
    this.#groupPeers = options.groupPeers ?? null;
    this.#partings = options.commandsOf === undefined ? null : new LogPartings(kv, options.nodeId, options.logger, options.commandsOf);
    this.#nodeId = options.nodeId;
    this.#logger = options.logger;
    this.#store = options.store;
    this.#every = options.every ?? CHECK_EVERY;
    this.#foundOdd = options.foundOdd ?? (() => undefined);
    this.#odd = storedOddWindow(options.store);
    const own = options.store.meta.get(OWN_READING);
    this.#ownReading = typeof own === 'string' ? (JSON.parse(own) as OddWindow) : null;
    this.#readLog = options.readAgain ?? null;
    this.#readAgainAfterMs = options.readAgainAfterMs ?? READ_AGAIN_AFTER_MS;
    this.#goneForGoodMs = options.goneForGoodMs ?? GONE_FOR_GOOD_MS;
  }

  static async open(nc: NatsConnection, options: LogChecksOptions): Promise<LogChecks> {
    const kv = await keptBucket(nc, BUCKET, { replicas: options.replicas, ttl: CHECK_TTL_MS });
    const checks = new LogChecks(nc, kv, options);
    await checks.lookWhileWaiting().catch((error: Error) => options.logger.warn('looking whether this node can take a copy or serve its own data failed; it looks again while it waits for a copy', { reason: error.message }));
    return checks;
  }

  /**
   * A look by a node that read an odd history and waits for a copy (at its start, then every few seconds).
   * 'copy' where a node that could give one runs now that did not at the last look (its group's other node
   * came back, or recorded the window since): the node starts again to copy it at once, not at its next try a
   * minute on. 'serve' where the reading it was found odd by no longer counts: it dropped its finding (and the
   * decision, so that the window is decided again without those nodes) and serves its own data, still its own:
   * a node refuses to give a copy while it is odd. A reading no longer counts where:
   * - its nodes turned out to have read an odd history of an earlier window (`voided`). In a chaos run at
   *   dfdae36, n1 was taken as right for a window that n2 and n3 each read otherwise, and found odd for the
   *   window before it, which they read alike: n1 needed a copy of their data and they of n1's, each refused
   *   the other, and all three stayed DOWN.
   * - no node that read it (`readersOf`) and could give this node a copy has run for `goneForGoodMs`, as this
   *   node sees them while it waits (it asks every few seconds): no copy will come. In a chaos run with two code
   *   groups, both nodes of one read that window otherwise than the other group's two, and each other: neither
   *   could copy anyone. Where its nodes run and no copy can ever come (`#noCopyCanCome`), at once.
   */
  async lookWhileWaiting(): Promise<WaitingLook> {
    let look: WaitingLook = 'wait';
    // Not while this node records or compares a window: the no-copy case takes its windows out of both.
    await this.#oneAtATime(async () => {
      look = await this.#look();
    });
    return look;
  }

  async #look(): Promise<WaitingLook> {
    const odd = this.#odd;
    if (odd === null) return 'wait';
    const marks = await this.#marks();
    const detail = { from: this.#from(odd.to), to: odd.to, nodes: odd.nodes };
    if (voided(odd, odd.to, marks)) {
      this.#logger.warn(FINDING_VOIDED, detail);
      await this.#dropDecision(odd.to, (right) => voided(right, odd.to, marks));
    } else {
      const givers = await this.#givers((await readersOf(this.#kv, odd)).filter((nodeId) => nodeId !== this.#nodeId));
      if (givers === 'copy' || givers === 'wait') return givers;
      const running = (await Promise.all(odd.nodes.map((nodeId) => this.#live(nodeId)))).some(Boolean);
      const noneCan = givers === 'none yet' && running && (await this.#noCopyCanCome(odd));
      if (givers === 'none yet' && !noneCan) return 'wait';
      if (running) {
        // Its nodes run (of another code group): the decision stands for the nodes that can copy them; this one
        // keeps its own reading, and compares that window no more.
        this.#logger.warn(noneCan ? NO_COPY_CAN_COME : FINDING_NO_COPY, detail);
        await this.#serveOwnReading(odd);
      } else {
        this.#logger.warn(FINDING_GONE, detail);
        await this.#dropDecision(odd.to, (right) => right.nodes.join() === odd.nodes.join());
      }
    }
    const mark = await this.#kv.get(`${ODD_MARK}.${this.#nodeId}`);
    if (mark !== null && mark.operation === 'PUT' && mark.string() === String(odd.to)) await this.#kv.delete(mark.key, { previousSeq: mark.revision });
    await forgetOddWindow(this.#store);
    this.#odd = null;
    return 'serve';
  }

  /**
   * Keeps this node's reading of the odd window, no node having given it a copy: it forgets its windows up to
   * that one, in its store, the bucket and memory (it compares them no more, and is not found odd again), and
   * says so in its store (health's note) and the bucket (its group's other nodes, `#noCopyCanCome`).
   */
  async #serveOwnReading(odd: OddWindow): Promise<void> {
    const { to } = odd;
    // Health names the first such window, as it does the first that differed.
    if (this.#ownReading === null) {
      await this.#store.meta.put(OWN_READING, JSON.stringify(odd));
      this.#ownReading = odd;
    }
    await this.#kv.put(`${OWN_MARK}.${this.#nodeId}`, String(to));
    await forgetAppliedWindows(this.#store, to);
    await deleteEntriesOf(this.#kv, this.#nodeId, (window) => /^\d/.test(window) && Number(window) <= to);
    const later = (window: WindowHash) => window.to > to;
    for (const windows of [this.#recent, this.#unrecorded]) windows.splice(0, windows.length, ...windows.filter(later));
    this.#unsettled = this.#unsettled.filter(later);
    for (const differing of this.#differing.keys()) if (differing <= to) this.#differing.delete(differing);
  }

  /**
   * Which of `nodes` could give a copy now: 'copy' where one could that could not at the look before (the
   * start's copy tried those that could then), 'wait' where one could, 'none for too long' where none could at
   * each look since `goneForGoodMs` ago (the first look starts the count), else 'none yet'.
   */
  async #givers(nodes: readonly string[]): Promise<'copy' | 'wait' | 'none yet' | 'none for too long'> {
    const could = await Promise.all(nodes.map((nodeId) => this.#canGiveCopy(nodeId)));
    const givers = new Set(nodes.filter((_, index) => could[index]));
    const before = this.#giversBefore;
    this.#giversBefore = givers;
    if (givers.size > 0) {
      this.#goneSince = null;
      const appeared = before === null ? [] : [...givers].filter((nodeId) => !before.has(nodeId));
      if (appeared.length === 0) return 'wait';
      this.#logger.info(COPY_NOW, { nodes: appeared });
      return 'copy';
    }
    this.#goneSince ??= Date.now();
    return Date.now() - this.#goneSince >= this.#goneForGoodMs ? 'none for too long' : 'none yet';
  }

  /**
   * Whether no node will ever give this node a copy of its data for the odd window: every other node of its
   * code group recorded its own hash of the window, not the right one, and hashes stay; or serves its own reading
   * of it (`#serveOwnReading`, which deleted its hash). Not where a node's group cannot be told now: it may come
   * back having read the window right. In a chaos run with two groups, both nodes of one read a window
   * otherwise, each its own way, and each waited for the other.
   */
  async #noCopyCanCome(odd: OddWindow): Promise<boolean> {
    const peers = await this.#groupPeers?.();
    if (peers === undefined || peers === null) return false;
    const decision = await this.#kv.get(`${RIGHT}.${odd.to}`);
    if (decision === null || decision.operation !== 'PUT') return false;
    const right = (JSON.parse(decision.string()) as RightReading).crc;
    for (const nodeId of peers) {
      const hash = await this.#kv.get(`${odd.to}.${nodeId}`);
      if (hash !== null && hash.operation === 'PUT' && hash.string() !== right) continue;
      const own = hash === null || hash.operation !== 'PUT' ? await this.#kv.get(`${OWN_MARK}.${nodeId}`) : null;
      if (own === null || own.operation !== 'PUT' || Number(own.string()) < odd.to) return false;
    }
    return true;
  }

  /** Deletes the reading taken as right of the window ending at `to` where it no longer counts (another node may have decided it again since). */
  async #dropDecision(to: number, noLongerCounts: (right: RightReading) => boolean): Promise<void> {
    const entry = await this.#kv.get(`${RIGHT}.${to}`);
    if (entry === null || entry.operation !== 'PUT' || !noLongerCounts(JSON.parse(entry.string()) as RightReading)) return;
    await this.#kv.delete(entry.key, { previousSeq: entry.revision }).catch(() => undefined);
  }

  /** The nodes marked as having read an odd history, and the last command of the window each read so. */
  async #marks(): Promise<Map<string, number>> {
    const marks = new Map<string, number>();
    for await (const key of await this.#kv.keys(`${ODD_MARK}.*`)) {
      const entry = await this.#kv.get(key);
      if (entry !== null && entry.operation === 'PUT') marks.set(key.slice(ODD_MARK.length + 1), Number(entry.string()));
    }
    return marks;
  }

  /**
   * Records this node's hash of a window and compares it, and the few before it, with the other nodes'
   * hashes. One JetStream did not take (a nats-server paused, the faults in which replicas diverge) is
   * recorded at the next call, or at the next check of the tail: left out, it was compared by nobody.
   */
  record(window: WindowHash): Promise<void> {
    this.#unrecorded.push(window);
    if (this.#unrecorded.length > UNRECORDED_KEPT) this.#unrecorded.shift();
    return this.#oneAtATime(async () => {
      await this.#recordPending();
      this.#unsettled = (await this.#stillUnsettled([...this.#unsettled.filter((old) => !this.#recent.includes(old)), ...this.#recent])).slice(-UNSETTLED_KEPT);
    });
  }

  /**
   * Stops recording and comparing windows, and ends once the work running did: the node closes its store
   * after this. A compare that went on once its node shut down to rebuild itself (the window after the one
   * found odd) would read the closed store, and lmdb-js throws from a timer after such a read, ending the process.
   */
  close(): Promise<void> {
    this.#closed = true;
    return this.#running;
  }

  /** Runs `work` after the record or check before it ended: two at once would put one window twice, and skip another. */
  #oneAtATime(work: () => Promise<void>): Promise<void> {
    const run = this.#running.then(() => (this.#closed ? undefined : work()));
    this.#running = run.catch(() => undefined);
    return run;
  }

  /** Puts the windows not recorded yet in the bucket, oldest first; throws where JetStream does not take one. */
  async #recordPending(): Promise<void> {
    while (this.#unrecorded.length > 0) {
      const window = this.#unrecorded[0];
      await this.#kv.put(`${window.to}.${this.#nodeId}`, String(window.crc));
      this.#unrecorded.shift();
      this.#recent.push(window);
      if (this.#recent.length > WINDOWS_RECHECKED) this.#recent.shift();
    }
    // Kept past the bucket's day while the node waits for a copy.
    if (this.#odd !== null) await this.#kv.put(`${ODD_MARK}.${this.#nodeId}`, String(this.#odd.to));
  }

  /**
   * Compares this node's hash of the log's tail, the window being read up to its last command, while the log
   * is quiet (ClusterNode calls this every few seconds then): recorded once, compared at each call, as the
   * others record theirs once they read so far; the windows that differed with nothing decided are compared
   * again too (no new window comes to do it), also where the log ends with a whole window (no tail: null).
   */
  checkTail(tail: WindowHash | null): Promise<void> {
    return this.#oneAtATime(async () => {
      if (this.#unrecorded.length > 0) await this.#recordPending();
      if (tail !== null && this.#tailRecorded !== tail.to) {
        await this.#kv.put(`${tail.to}.${this.#nodeId}`, String(tail.crc));
        this.#tailRecorded = tail.to;
      }
      // Among the windows compared again while it differs undecided, so that the log keeps it meanwhile (keepFrom).
      const windows = tail === null || this.#unsettled.some((window) => window.to === tail.to) ? this.#unsettled : [...this.#unsettled, tail];
      this.#unsettled = (await this.#stillUnsettled(windows)).slice(-UNSETTLED_KEPT);
    });
  }

  /** Compares each window in turn; those that differ with no reading taken as right yet. */
  async #stillUnsettled(windows: readonly WindowHash[]): Promise<WindowHash[]> {
    const unsettled: WindowHash[] = [];
    for (const window of windows) if (!this.#closed && !(await this.#compare(window))) unsettled.push(window);
    return unsettled;
  }

  /** Compares this node's hash of a window with the others'; false while it differs and no reading is taken as right. */
  async #compare(window: WindowHash): Promise<boolean> {
    const mine = String(window.crc);
    const hashes = new Map<string, string>([[this.#nodeId, mine]]);
    for await (const key of await this.#kv.keys(`${window.to}.*`)) {
      const nodeId = key.slice(key.indexOf('.') + 1);
      const entry = nodeId === this.#nodeId ? null : await this.#kv.get(key);
      if (entry !== null && entry.operation === 'PUT') hashes.set(nodeId, entry.string());
    }
    const differing = [...hashes].filter(([, crc]) => crc !== mine).map(([nodeId]) => nodeId).sort();
    if (differing.length === 0) return true;
    if (this.#mismatch === null) {
      this.#mismatch = { to: window.to, nodes: differing };
      this.#logger.error('the cluster log as this node read it differs from what other nodes read', { from: this.#from(window.to), to: window.to, nodes: differing });
    }
    await this.#tellParting(window.to, differing);
    if (this.#odd !== null) return true;
    if (!this.#differing.has(window.to)) {
      this.#differing.set(window.to, { since: Date.now() });
      if (this.#differing.size > DIFFERING_KEPT) this.#differing.delete(this.#differing.keys().next().value as number);
    }
    const right = await this.#rightReading(window.to, hashes);
    if (right === null) return false;
    if (right.crc === mine) return true;
    this.#odd = { to: window.to, nodes: right.nodes, ...(right.byLog ? { byLog: true } : {}), ...(right.fullest ? { fullest: true } : {}) };
    this.#logger.error(right.byLog ? FOUND_ODD_BY_LOG : right.fullest ? FOUND_ODD_FULLEST : right.nodes.length > 1 ? FOUND_ODD : FOUND_ODD_NO_TWO_ALIKE, { from: this.#from(window.to), to: window.to, nodes: right.nodes });
    // Its store and its rebuild first: a chaos run's node whose mark below failed (JetStream unavailable)
    // never rebuilt, and stayed DOWN. A mark not made is made at its next record().
    await this.#store.meta.put(ODD_WINDOW, JSON.stringify(this.#odd));
    this.#foundOdd(this.#odd);
    await this.#kv.put(`${ODD_MARK}.${this.#nodeId}`, String(window.to)).catch((error: Error) => this.#logger.warn('marking this node as having read an odd history failed; it is marked at the next window it records', { reason: describeNatsError(error) }));
    return true;
  }

  /** Tells where this node's reading of a differing window parts from the others' (log-partings.ts); health's note names the first window's. */
  async #tellParting(to: number, nodes: readonly string[]): Promise<void> {
    try {
      const parting = (await this.#partings?.tell(this.#from(to), to, nodes)) ?? null;
      if (parting !== null && this.#mismatch?.to === to) this.#mismatch.parting = parting;
    } catch (error) {
      this.#logger.warn('telling where this node\'s reading of the cluster log parts from the others\' failed', { to, reason: (error as Error).message });
    }
  }

  /**
   * The reading of a window taken as right: the one a node recorded for all, or, where none did yet and the
   * hashes tell (three or more), or the log read again does (fewer, after READ_AGAIN_AFTER_MS), the one this
   * node records now (where another node recorded first, that one).
   */
  async #rightReading(to: number, hashes: ReadonlyMap<string, string>): Promise<RightReading | null> {
    const key = `${RIGHT}.${to}`;
    const recorded = async () => {
      const entry = await this.#kv.get(key);
      return entry !== null && entry.operation === 'PUT' ? (JSON.parse(entry.string()) as RightReading) : null;
    };
    const taken = await recorded();
    // A node marked as having read an odd history (of an earlier window) is to be rebuilt: its reading does not count.
    const marks = await this.#marks();
    if (taken !== null && !voided(taken, to, marks)) return taken;
    if (taken !== null) {
      this.#logger.warn(DECISION_VOIDED, { from: this.#from(to), to, nodes: taken.nodes });
      await this.#dropDecision(to, (right) => voided(right, to, marks));
    }
    const counted = new Map([...hashes].filter(([nodeId]) => nodeId === this.#nodeId || !oddBefore(marks, nodeId, to)));
    // Only such nodes read it otherwise: nothing to decide (a chaos run's node, taken as right, refused
    // copies while its reading differed from one of theirs, and the two others waited DOWN).
    const mine = hashes.get(this.#nodeId);
    if ([...counted.values()].every((crc) => crc === mine)) return { crc: String(mine), nodes: [...counted.keys()].sort() };
    if (counted.size < 3 && !this.#mayReadAgain(to)) return null;
    const others = [...counted.keys()].filter((nodeId) => nodeId !== this.#nodeId);
    const live = new Set([this.#nodeId, ...(await Promise.all(others.map(async (nodeId) => ((await this.#live(nodeId)) ? nodeId : null)))).filter((nodeId) => nodeId !== null)]);
    let right: RightReading | null;
    if (counted.size >= 3) {
      const commands = await this.#commandsWhereTied(to, counted, live);
      if (commands === 'wait') return null;
      right = rightReading(counted, (nodeId) => live.has(nodeId), commands);
    } else {
      right = await this.#readingOfLog(to, counted, live);
    }
    if (right === null) return null;
    try {
      await this.#kv.create(key, JSON.stringify(right));
      return right;
    } catch {
      // Another node recorded its decision first: every node follows one.
      return (await recorded()) ?? right;
    }
  }

  /**
   * Where as many nodes read the window ending at `to` one way as another: the commands' hashes the nodes
   * recorded, to take the reading that holds commands the others lack (`rightReading`), or 'wait' while a
   * reading's nodes have recorded none yet (each does as it compares the window, within seconds), for
   * READ_AGAIN_AFTER_MS at most. Undefined where the counts decide, or where this node does not tell partings.
   */
  async #commandsWhereTied(to: number, counted: ReadonlyMap<string, string>, live: ReadonlySet<string>): Promise<WindowCommands | 'wait' | undefined> {
    const most = mostShared(counted, (nodeId) => live.has(nodeId));
    if (this.#partings === null || most.length < 2) return undefined;
    const from = this.#from(to);
    const commands = { from, of: await this.#partings.recorded(from, to, [...counted.keys()]) };
    const unrecorded = most.some((reading) => !reading.nodes.some((nodeId) => commands.of.has(nodeId)));
    return unrecorded && !this.#differedLongEnough(to) ? 'wait' : commands;
  }

  /** Whether this node is to read the window ending at `to` again from the log: it differed long enough with too few readings to tell. */
  #mayReadAgain(to: number): boolean {
    return this.#readLog !== null && this.#differedLongEnough(to);
  }

  /** Whether the window ending at `to` has differed, undecided, for READ_AGAIN_AFTER_MS. */
  #differedLongEnough(to: number): boolean {
    const differing = this.#differing.get(to);
    return differing !== undefined && Date.now() - differing.since >= this.#readAgainAfterMs;
  }

  /**
   * Where fewer than three nodes' readings count: the log's, read again now, taken as right once this node
   * may read it again, if a live node read the same (null otherwise, and the window stays undecided): what
   * the servers give now, as they do to every node that reads the window from now on.
   */
  async #readingOfLog(to: number, counted: ReadonlyMap<string, string>, live: ReadonlySet<string>): Promise<RightReading | null> {
    const differing = this.#differing.get(to);
    if (this.#readLog === null || differing === undefined) return null;
    const readNow = differing.logCrc === undefined;
    if (readNow) {
      try {
        differing.logCrc = await this.#readLog(this.#from(to), to);
      } catch (error) {
        this.#logger.warn('reading the cluster log again to tell which reading is right failed; trying at the next check', { from: this.#from(to), to, reason: describeNatsError(error as Error) });
        return null;
      }
    }
    const crc = differing.logCrc ?? null;
    const nodes = [...counted].filter(([, hash]) => hash === String(crc)).map(([nodeId]) => nodeId).sort();
    if (crc !== null && nodes.some((nodeId) => live.has(nodeId))) return { crc: String(crc), nodes, byLog: true };
    // Told once; a node that read the log's reading and was not running may be at the next check.
    if (readNow) this.#logger.warn('the cluster log read again cannot tell which reading is right', { from: this.#from(to), to, reason: crc === null ? 'the log no longer holds these commands' : nodes.length === 0 ? 'no node read them as the log gives them now' : `${nodes.join(', ')}, which read them as the log gives them now, not running` });
    return null;
  }

  /** Where the window ending at `to` begins (a tail's `to` ends no whole window). */
  #from(to: number): number {
    return to - ((to - 1) % this.#every);
  }

  /**
   * Health's note while this node serves its own reading of a window taken as odd (across restarts), or once a
   * window differed from another node's (until the node restarts); null otherwise.
   */
  get degradation(): string | null {
    if (this.#ownReading !== null) {
      const { to, nodes } = this.#ownReading;
      return `degraded: this node serves its own reading of the cluster log from its commands ${this.#from(to)} to ${to} on, which ${nodes.join(' and ')} read otherwise (JetStream's replicas disagree), no node of its code group having read them as they did to give it a copy: its data may lack writes acknowledged meanwhile`;
    }
    if (this.#mismatch === null) return null;
    const { to, nodes, parting } = this.#mismatch;
    const from = parting === undefined ? '' : ` from command ${parting} on`;
    return `degraded: the cluster log's commands ${this.#from(to)} to ${to} as this node read them differ${from} from what ${nodes.join(', ')} read (JetStream's replicas disagree): the nodes' data may differ; compare them before trusting either`;
  }

  /**
   * Why this node's data should not be copied now (snapshot.ts): a window it read differs from another node's
   * reading, not decided yet, and the log read again may still decide it; null otherwise. A chaos run's node
   * rebuilt from a copy of one of two nodes that differed, and would have kept that node's reading had it
   * turned out odd: its own hashes are deleted. Not for longer than twice READ_AGAIN_AFTER_MS: a log
   * truncated past the window decides nothing, and a node that only this node can rebuild would wait forever
   * (another chaos run's two nodes stayed DOWN so).
   */
  async undecided(): Promise<string | null> {
    // Compared again first: another node may have decided since this node last compared (a test's nodes
    // asked for a copy within milliseconds of their decision, and were refused for the minute until they asked again).
    this.#unsettled = await this.#stillUnsettled(this.#unsettled);
    const window = this.#decidable();
    if (window === undefined) return null;
    return `its reading of the cluster log's commands ${this.#from(window.to)} to ${window.to} differs from another node's, and which is right is not decided yet`;
  }

  /**
   * The first command of the earliest window the log read again may still decide, or null: the log is kept
   * from there (compaction.ts), as the chaos bench's 2 s retention truncated such windows before the 20 s
   * wait was over. 40 s at most, as `undecided()`.
   */
  get keepFrom(): number | null {
    const window = this.#decidable();
    return window === undefined ? null : this.#from(window.to);
  }

  /** The earliest differing window not decided yet that the log read again may still decide, within twice READ_AGAIN_AFTER_MS. */
  #decidable(): WindowHash | undefined {
    return this.#unsettled.find((unsettled) => {
      const differing = this.#differing.get(unsettled.to);
      return differing !== undefined && differing.logCrc === undefined && Date.now() - differing.since < 2 * this.#readAgainAfterMs;
    });
  }

  /** Why this node should not serve (health DOWN): it read the odd history; null otherwise. */
  get problem(): string | null {
    if (this.#odd === null) return null;
    const { to, nodes, byLog, fullest } = this.#odd;
    const whose = byLog
      ? `${nodes.join(' and ')}, as the log gives them now (too few nodes read them to tell otherwise)`
      : fullest
        ? `${nodes.join(' and ')}, whose reading holds commands the others lack where they part`
        : nodes.length > 1
          ? `${nodes.join(' and ')}, which agree`
          : `${nodes[0]}, whose reading is taken as right (no two nodes read them alike)`;
    return `this node read the cluster log's commands ${this.#from(to)} to ${to} otherwise than ${whose} (JetStream's replicas disagree): its data likely lacks writes acknowledged meanwhile; it rebuilds itself from a copy of ${nodes.join(' or ')}'s data (or stop it, delete its data directory, start it again)`;
  }
}
