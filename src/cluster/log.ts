// The cluster's log on NATS JetStream: one replicated stream that every change goes through, in one order.
import { randomInt, randomUUID } from 'node:crypto';
import { connect, errors, headers } from '@nats-io/transport-node';
import type { MsgHdrs, NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, JetStreamApiError } from '@nats-io/jetstream';
import type { ConsumerMessages, JetStreamClient, JetStreamManager, PeerInfo, StreamInfo } from '@nats-io/jetstream';
import { decodeCommand, encodeCommand, encodeCommandOffThread, STREAM, STREAM_SUBJECTS, subjectOf } from './commands.ts';
import type { Command } from './commands.ts';
import { natsAccess, shownUrls } from './nats-access.ts';
import { AcknowledgedWrites, LOST_PAST } from './acknowledged-writes.ts';
import type { AcknowledgedWrite, JournalOfWrites } from './acknowledged-writes.ts';
import { foldCommand } from './applied-windows.ts';
import { RETRY } from './applied-ids.ts';
import type { Logger } from '../log.ts';
import { packRecords } from '../msgpack-records.ts';
import { keepClusterReplicas, keepReplicas } from './stream-replicas.ts';

/**
 * Attempts at publishing made by this process, counted from a random start: each attempt's id that could
 * repeat one sent before is its write's with the count appended, and a process started again (a coordinator
 * publishing a report's pages again) must not repeat its last run's.
 */
let attempts = randomInt(2 ** 47);

/** A new id for an attempt at publishing the write `msgId` names (firstIdOf in applied-ids.ts gives it back). */
function attemptId(msgId: string): string {
  attempts++;
  return `${msgId}${RETRY}${attempts}`;
}

/** How long a write waits for JetStream's quorum before the client is told to retry (issue 15: about 10 s). */
export const PUBLISH_TIMEOUT_MS = 10_000;
const DUPLICATE_WINDOW_NS = 120e9;
/** One publish attempt; a stream leader election takes a few seconds. */
const ATTEMPT_MS = 1_500;
const RETRY_PAUSE_MS = 100;
/** How long a command line reads its writes back from the log (readBackWrites), and how many message ids it is sent ahead. */
const READ_BACK_MS = 30_000;
const READ_BACK_AHEAD = 256;
/** Between attempts to append a lost write again while JetStream takes no write. */
const APPEND_AGAIN_RETRY_MS = 1_000;
const STARTUP_WAIT_MS = 60_000;
/** How long health names refused writes after the last one (agents send every few seconds; a quiet cluster's note goes). */
const REFUSED_SHOWN_MS = 60_000;
/**
 * JetStream's API without a responder this long, through a server whose INFO says it has no JetStream: no
 * server the connection reaches has it enabled. Waiting the minute above for it said nothing meanwhile. A
 * server with JetStream that does not answer yet (electing its meta leader, say) is waited for that minute.
 */
const NOT_ENABLED_MS = 5_000;
/**
 * A server that stops answering without closing its connections (its machine lost power, a network cut) is
 * noticed by unanswered pings only: with the client's defaults (every 2 min, 2 unanswered), a node on a hung
 * server stayed DOWN for minutes while the other servers had taken over in seconds. Three unanswered pings
 * 3 s apart: the node moves to another server after about 10 s.
 */
const PING_INTERVAL_MS = 3_000;
const MAX_PINGS_OUT = 3;
/**
 * The handshake's time limit (the client's default is 20 s): a hung server's machine may still accept TCP
 * connections, and each reconnection tried to it waited that long before the next server was tried.
 */
const HANDSHAKE_MS = 3_000;
const CONSUME_AHEAD = 32;
/** Reading a window again (hashOf) gives up once no command came for this long. */
const HASH_READ_STALL_MS = 5_000;
/**
 * How long following the log waits for JetStream to create its consumer. Short: a request sent while
 * JetStream elects a leader after a server died is never answered, and a node that cannot follow the log
 * cannot answer reads; a retry after an election is answered at once.
 */
const FOLLOW_API_MS = 1_500;
/**
 * A direct get unanswered this long is not coming: none of the stream's servers takes them yet (nats-server
 * 2.9 serves them on a stream given allow_direct by an update only once its servers restarted).
 */
const DIRECT_GET_MS = 500;
/**
 * Names the node that holds a command's effect already (a report's coordinator, its pages): that node
 * records the command as applied without unpacking it, megabytes for a page. Nodes of earlier versions
 * ignore it and apply the command, which they skip once unpacked.
 */
const NOT_FOR_HEADER = 'Jvmlens-Not-For';

function notForHeaders(node: string): MsgHdrs {
  const headed = headers();
  headed.set(NOT_FOR_HEADER, node);
  return headed;
}

/** The node a command read from the log is not for (see NOT_FOR_HEADER), by its headers, or null. */
export function notFor(headers: MsgHdrs | undefined): string | null {
  return headers?.get(NOT_FOR_HEADER) || null;
}

/** Room left in a message for its headers (the message id, NOT_FOR_HEADER). */
const HEADERS_BYTES = 4096;

/** The message id JetStream de-duplicates by, as a read command carries it (null for none). */
export function msgIdOf(headers: MsgHdrs | undefined): string | null {
  return headers?.get('Nats-Msg-Id') || null;
}

/** JetStream could not take a write in time: nothing is acknowledged, the client retries. */
export class LogUnavailableError extends Error {}

/**
 * `request`, asked again while JetStream does not answer it, for `waitMs`; then a LogUnavailableError. On
 * servers just restarted, the log's state answers seconds before JetStream makes a consumer or opens a bucket
 * ("JetStream system temporarily unavailable", or a request that times out after 10 s), and `jvmlens keys
 * list|create --cluster` failed there with a timeout's stack trace.
 */
export async function untilAnswered<T>(request: () => Promise<T>, waitMs: number): Promise<T> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      return await request();
    } catch (error) {
      if (Date.now() + RETRY_PAUSE_MS >= deadline) throw new LogUnavailableError(`the cluster's log did not answer within ${waitMs / 1000} s: ${describeNatsError(error as Error)}`);
      await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
    }
  }
}

/** A command too large for the servers' max_payload even after splitting. */
export class CommandTooLargeError extends Error {}

export interface LogEntry {
  seq: number;
  command: Command;
}

/**
 * A replica of the log that the stream's leader has not heard from this long is down, as far as anyone can
 * tell: JetStream 2.9 marks a killed server's replica `offline` only once the servers drop it, and until then
 * calls it not current, which read as catching up.
 */
const SILENT_REPLICA_NS = 5e9;

/** How a replica of the log's stream stands, as health and `jvmlens cluster status` say it. */
export function replicaState(peer: Pick<PeerInfo, 'current' | 'offline' | 'active'>): string {
  if (peer.offline === true) return 'offline';
  if (peer.current) return 'current';
  return peer.active > SILENT_REPLICA_NS ? `not heard from for ${Math.round(peer.active / 1e9)} s` : 'catching up';
}

/** A failed request to NATS as health and logs say it: the client's bare `timeout` says nothing of why. */
export function describeNatsError(error: Error): string {
  if (error instanceof errors.TimeoutError) return 'JetStream did not answer in time (while a server is down or has just started, it may be electing a leader)';
  // The client's name for a request no server answered. Once the log is open JetStream is on (ClusterLog.open
  // says when it is not): the log, or JetStream's meta layer, has no leader without a majority of the servers.
  if (error.name === 'JetStreamNotEnabled' && error.message === 'jetstream is not enabled') return NO_MAJORITY;
  return error.message === INSUFFICIENT_RESOURCES ? STORAGE_FULL : error.message;
}

/** As `jvmlens cluster status` says it. */
const NO_MAJORITY = 'JetStream system temporarily unavailable; retry once a majority of the NATS servers is up';

/** What JetStream answers a write, a consumer or a bucket entry it has no room for. */
const INSUFFICIENT_RESOURCES = 'insufficient resources';
const STORAGE_FULL = `${INSUFFICIENT_RESOURCES} (the NATS servers' JetStream storage is full: raise max_file_store in their jetstream block or free their disk; the log's truncation frees what every node applied, after --log-retention-ms)`;

/** A stream without a leader answers its state from a replica, but takes no write. */
function hasLeader(info: StreamInfo): boolean {
  return info.cluster === undefined || (info.cluster.leader !== undefined && info.cluster.leader !== '');
}

export class ClusterLog {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  /** The client following the log uses: its consumer's requests time out sooner (FOLLOW_API_MS). */
  readonly #followJs: JetStreamClient;
  /** How long a write is tried before LogUnavailableError (PUBLISH_TIMEOUT_MS where JetStream refuses it for want of storage): a node's agents get a 503 after PUBLISH_TIMEOUT_MS. */
  readonly #publishWaitMs: number;
  /** Direct gets (commandAt): answered within milliseconds where a server has them, so waited for briefly. */
  #directJsm: JetStreamManager | null = null;
  /** Since when no NATS server is connected (the client reconnects by itself), or null while one is. */
  #disconnectedAt: number | null = null;
  /** When JetStream last answered this client (an acknowledged append, the stream's state): health's evidence. */
  #answeredAt = Date.now();
  /** Since when every write given up was refused (none acknowledged since), the last reason, and whether for full storage; null while writes are taken. */
  #refused: { since: number; at: number; reason: string; storageFull: boolean } | null = null;
  /** This client's writes until they are read back, from checkWrites on (null before). */
  #acknowledged: AcknowledgedWrites | null = null;
  /** Test only (`--test-faults lose-writes`): agent batches and keys created whose acknowledged sequence the log gives another write. */
  #losingWrites = 0;
  /** Test only: the message id of each write lost so, by its stand-in's. */
  readonly #lostForTest = new Map<string, string>();
  #closed = false;

  #replicas: number;

  private constructor(nc: NatsConnection, jsm: JetStreamManager, urlsGiven: number, publishWaitMs: number) {
    this.nc = nc;
    this.jsm = jsm;
    this.#publishWaitMs = publishWaitMs;
    this.#replicas = Math.min(3, urlsGiven);
    this.js = jetstream(nc, { timeout: PUBLISH_TIMEOUT_MS });
    this.#followJs = jetstream(nc, { timeout: FOLLOW_API_MS });
    void this.#watchStatus();
  }

  async #watchStatus(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (status.type === 'disconnect') this.#disconnectedAt ??= Date.now();
      else if (status.type === 'reconnect') this.#disconnectedAt = null;
    }
  }

  /** How long no NATS server has been connected: 0 while one is. */
  disconnectedMs(): number {
    return this.#disconnectedAt === null ? 0 : Date.now() - this.#disconnectedAt;
  }

  /**
   * Connects to any of `servers` (URLs with their credentials, nats-access.ts; `caFile`: a private CA for
   * their TLS) and makes sure the log's stream exists. A node's connection, once made, reconnects forever;
   * a command's (`once`) gives up after a few attempts.
   */
  static async open(servers: readonly string[], name: string, mode: 'node' | 'once' = 'node', caFile = ''): Promise<ClusterLog> {
    let nc: NatsConnection;
    try {
      // A first connection that fails is thrown, not waited for: a node retries its join and health says why
      // (a wrong password, a certificate it cannot check, no server up yet); once connected, it reconnects forever.
      // noAsyncTraces: the client otherwise makes two Errors per request for the stack of a timeout that rarely
      // comes, and each read's last-sequence question is a request (8 % of a node's CPU under CVE page load).
      nc = await connect({ ...natsAccess(servers, caFile), name, reconnectTimeWait: 500, maxReconnectAttempts: mode === 'node' ? -1 : 3, pingInterval: PING_INTERVAL_MS, maxPingOut: MAX_PINGS_OUT, timeout: HANDSHAKE_MS, noAsyncTraces: true });
    } catch (error) {
      throw new LogUnavailableError(`cannot connect to NATS at ${shownUrls(servers)}: ${(error as Error).message}`);
    }
    // No API check here: on a cluster just started it times out (no meta leader yet), the loop below waits for one.
    const jsm = await jetstreamManager(nc, { timeout: ATTEMPT_MS, checkAPI: false });
    // A node answers an agent 503 after PUBLISH_TIMEOUT_MS; a command line waits for a write as long as it waited for JetStream.
    const log = new ClusterLog(nc, jsm, servers.length, mode === 'node' ? PUBLISH_TIMEOUT_MS : STARTUP_WAIT_MS);
    // A cluster just started elects its JetStream meta leader first: until then stream requests fail.
    const deadline = Date.now() + STARTUP_WAIT_MS;
    let notEnabledSince: number | null = null;
    for (;;) {
      try {
        await log.#ensureStream(log.replicas);
        return log;
      } catch (error) {
        // The client's JetStreamNotEnabled (no responder to the API): its class is exported only by the package's internal entry.
        const notEnabled = (error as Error).name === 'JetStreamNotEnabled' && nc.info?.jetstream !== true;
        notEnabledSince = notEnabled ? (notEnabledSince ?? Date.now()) : null;
        if (notEnabledSince !== null && Date.now() - notEnabledSince >= NOT_ENABLED_MS) {
          await nc.close();
          throw new LogUnavailableError(`JetStream is not enabled on the NATS servers at ${shownUrls(servers)} (no server answered its API for ${NOT_ENABLED_MS / 1000} s): start nats-server with --jetstream, or with a jetstream block in its configuration as deploy/cluster/ has`);
        }
        if (Date.now() > deadline) {
          await nc.close();
          throw new LogUnavailableError(`JetStream did not answer within ${STARTUP_WAIT_MS / 1000} s: ${(error as Error).message}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  }

  async #ensureStream(replicas: number): Promise<void> {
    try {
      // Logs of versions before direct reads (commandAt) get them.
      await keepReplicas(this.jsm, STREAM, replicas, { allow_direct: true });
    } catch (error) {
      if (!(error instanceof JetStreamApiError) || error.status !== 404) throw error;
      try {
        await this.jsm.streams.add({ name: STREAM, subjects: STREAM_SUBJECTS, num_replicas: replicas, duplicate_window: DUPLICATE_WINDOW_NS, allow_direct: true });
      } catch (raced) {
        // Another node created it first.
        if (!(raced instanceof JetStreamApiError)) throw raced;
        await this.jsm.streams.info(STREAM);
      }
    }
  }

  /**
   * How many replicas the log and the cluster's buckets get: three on a cluster of three servers or more.
   * The servers are counted from the URLs given and from those the server names as its cluster's
   * (`connect_urls`): given one name (a DNS name in front of three servers, say), the log was created with
   * one replica, and lost with that server's disk. The server's list grows as its cluster forms (a node that
   * connected before the third server had joined counted two, in CI), so this is counted again each time,
   * never fewer than before.
   */
  get replicas(): number {
    this.#replicas = Math.max(this.#replicas, Math.min(3, this.nc.info?.connect_urls?.length ?? 0));
    return this.#replicas;
  }

  /** Gives the log and the cluster's buckets `replicas` replicas where they have fewer (made before the servers named the others). */
  async keepReplicas(): Promise<void> {
    await keepClusterReplicas(this.jsm, this.replicas);
  }

  /** The largest message the servers take. */
  get maxPayload(): number {
    return this.nc.info?.max_payload ?? 1024 * 1024;
  }

  /** Whether a command fits one message (append throws CommandTooLargeError for one that does not). */
  fits(command: Command): boolean {
    return encodeCommand(command).length <= this.maxPayload - HEADERS_BYTES;
  }

  /**
   * Appends a command and resolves with its sequence once a quorum of JetStream servers stored it. `msgId`
   * names the write where it may be sent again (a report's page by a coordinator retrying it, a claim asked
   * again each round): the nodes apply one copy of it (applied-ids.ts), and each attempt is published under
   * that id with a number of its own (`attemptId`), as JetStream's rejection of an id it saw is what
   * nats-server 2.9.10 miscounts (`#publish`). Without it, an id of this call's own, as two writes of the
   * same bytes are two writes (tags set back to what they were a moment ago; a hash of the content took that
   * for a retry, and the write was lost). `notForNode` names a node that holds the command's effect already
   * (NOT_FOR_HEADER).
   */
  async append(command: Command, msgId?: string, notForNode?: string): Promise<number> {
    const bytes = await encodeCommandOffThread(command);
    if (bytes.length > this.maxPayload - HEADERS_BYTES) throw new CommandTooLargeError(`a ${command.kind} command of ${bytes.length} bytes exceeds the servers' max_payload of ${this.maxPayload}`);
    const write = { msgId: msgId ?? randomUUID(), subject: subjectOf(command), bytes, ...(notForNode === undefined ? {} : { notForNode }) };
    if (this.#losingWrites > 0 && (command.kind === 'events' || command.kind === 'key.put')) {
      // Another write takes this one's sequence, as when JetStream acknowledged two writes at one sequence.
      this.#losingWrites--;
      const standIn = randomUUID();
      this.#lostForTest.set(standIn, write.msgId);
      const { seq } = await this.#publish({ ...write, msgId: standIn, bytes: encodeCommand({ kind: 'events', events: packRecords([]), receivedAt: Date.now() }) }, true);
      await this.#acknowledged?.acknowledged({ ...write, seq });
      return seq;
    }
    const acknowledged = await this.#publish(write, msgId === undefined);
    await this.#acknowledged?.acknowledged({ ...write, ...acknowledged });
    return acknowledged.seq;
  }

  /**
   * Publishes a write in short attempts: one sent to a leader that just died is answered by nobody, and the
   * next leader is elected in seconds. Each attempt has an id of its own (`attemptId`; the first keeps the
   * write's where it is `fresh`, made for this call), so a write that did land may be stored twice, and the
   * nodes apply it once (applied-ids.ts). Retried under one id, JetStream rejected the copies as duplicates,
   * which nats-server 2.9.10 counts per server and does not keep in step across a change of leader (fixed in
   * 2.9.21, nats-io/nats-server#4365): a chaos row's servers then gave the nodes histories shifted by 6 or 7
   * commands. Its sequence and the id it was acknowledged under.
   */
  async #publish(write: Omit<AcknowledgedWrite, 'seq'>, fresh: boolean): Promise<{ seq: number; msgId: string }> {
    const headed = write.notForNode === undefined ? {} : { headers: notForHeaders(write.notForNode) };
    const started = Date.now();
    // The last refusal JetStream answered: it says why better than the timeout of a last attempt shortened to the time left.
    let refusal: Error | null = null;
    for (let msgId = fresh ? write.msgId : attemptId(write.msgId); ; msgId = attemptId(write.msgId)) {
      const remaining = started + this.#publishWaitMs - Date.now();
      try {
        const ack = await this.js.publish(write.subject, write.bytes, { msgID: msgId, ...headed, timeout: Math.max(1, Math.min(ATTEMPT_MS, remaining)) });
        this.#answeredAt = Date.now();
        this.#refused = null;
        return { seq: ack.seq, msgId };
      } catch (error) {
        if (!(error instanceof errors.TimeoutError)) refusal = error as Error;
        const cause = refusal ?? (error as Error);
        // Storage that is full stays full: only servers that answer nothing yet, or not JetStream yet, are waited for longer.
        const waitMs = cause.message === INSUFFICIENT_RESOURCES ? Math.min(PUBLISH_TIMEOUT_MS, this.#publishWaitMs) : this.#publishWaitMs;
        if (Date.now() + RETRY_PAUSE_MS >= started + waitMs) {
          const reason = describeNatsError(cause);
          this.#refused = { since: this.#refused?.since ?? Date.now() - waitMs, at: Date.now(), reason, storageFull: cause.message === INSUFFICIENT_RESOURCES };
          throw new LogUnavailableError(`the cluster's log did not take the write within ${waitMs / 1000} s: ${reason}`);
        }
        await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
      }
    }
  }

  /**
   * From now on, holds this client's writes until it reads them in the log, and appends again one it does
   * not (acknowledged-writes.ts). A node's replica reads them, and its journal keeps them on its disk
   * meanwhile (write-journal.ts); a command line calls readBackWrites.
   */
  checkWrites(logger: Logger, journal: JournalOfWrites | null = null): AcknowledgedWrites {
    this.#acknowledged ??= new AcknowledgedWrites((write, appends) => this.#appendAgain(write, appends), logger, journal);
    return this.#acknowledged;
  }

  /**
   * For a client no replica reads the log for (a command line, checkWrites called): reads the log from a
   * little before its first write still held until every one is found, or appended again and found; throws
   * for one given up.
   */
  async readBackWrites(): Promise<void> {
    const { lowest, places } = this.#acknowledged?.held() ?? { lowest: null, places: [] };
    if (lowest === null) return;
    const found = Promise.all(places);
    // Message ids only: the commands before the writes can be report pages of megabytes.
    const consumer = await this.untilAnswered(() => this.#followJs.consumers.get(STREAM, { opt_start_seq: Math.max(1, lowest - LOST_PAST), headers_only: true }));
    const messages = await consumer.consume({ max_messages: READ_BACK_AHEAD });
    void found.then(() => messages.stop(), () => messages.stop());
    // A consumer whose server died delivers nothing more.
    const late = setTimeout(() => messages.stop(), READ_BACK_MS);
    try {
      for await (const message of messages) this.#acknowledged!.read(message.seq, msgIdOf(message.headers), message.info.pending);
    } finally {
      clearTimeout(late);
    }
    const settled = await Promise.race([found, Promise.resolve(null)]);
    if (settled === null) throw new LogUnavailableError(`the cluster's log was not read back within ${READ_BACK_MS / 1000} s: its writes may be lost, run the command again`);
  }

  /**
   * A write of this client's that it read back but the other nodes' histories lack (handOverOwnWrites),
   * appended again as a lost one is; its new sequence.
   */
  appendAgain(write: AcknowledgedWrite): Promise<number> {
    return this.#appendAgain(write, 0);
  }

  /** A lost write, appended again as `<id>.again` (each attempt under an id of its own), until it is or this client closes. */
  async #appendAgain(lost: AcknowledgedWrite, appends: number): Promise<number> {
    for (;;) {
      try {
        const acknowledged = await this.#publish({ ...lost, msgId: `${lost.msgId}.again` }, false);
        await this.#acknowledged?.acknowledged({ ...lost, ...acknowledged }, appends);
        return acknowledged.seq;
      } catch (error) {
        if (this.#closed) throw error;
        await new Promise((resolve) => setTimeout(resolve, APPEND_AGAIN_RETRY_MS));
      }
    }
  }

  /** This node's writes held until read back, once checkWrites was called. */
  get acknowledged(): AcknowledgedWrites | null {
    return this.#acknowledged;
  }

  /** Test only (`--test-faults lose-writes`): the next `count` agent batches or keys created are acknowledged at a sequence the log gives another write. */
  loseWritesForTest(count: number): void {
    this.#losingWrites = count;
  }

  /** Test only: the message id of the write lost where the log holds the stand-in with `msgId` (loseWritesForTest). */
  lostWriteFor(msgId: string): string | undefined {
    return this.#lostForTest.get(msgId);
  }

  /** Appends `items` as one command, or as consecutive halves where one would exceed max_payload; the last sequence. */
  async appendSplit<T>(items: readonly T[], command: (part: readonly T[]) => Command): Promise<number> {
    try {
      return await this.append(command(items));
    } catch (error) {
      if (!(error instanceof CommandTooLargeError) || items.length < 2) throw error;
      const middle = items.length >> 1;
      await this.appendSplit(items.slice(0, middle), command);
      return this.appendSplit(items.slice(middle), command);
    }
  }

  /** The sequence of the last command in the log: what a reader must have applied to see every acknowledged write. */
  async lastSeq(): Promise<number> {
    const info = await this.untilAnswered(() => this.jsm.streams.info(STREAM), PUBLISH_TIMEOUT_MS);
    if (hasLeader(info)) this.#answeredAt = Date.now();
    return info.state.last_seq;
  }

  /** When JetStream created the log (the same on every server, and new if the servers lost their data), its last sequence and how many commands it holds. */
  async identity(): Promise<{ created: string; lastSeq: number; commands: number }> {
    const { created, state } = await this.jsm.streams.info(STREAM);
    return { created, lastSeq: state.last_seq, commands: state.messages };
  }

  /** The sequence of the first command the log still holds: truncation (compaction.ts) moves it on. */
  async firstSeq(): Promise<number> {
    return (await this.jsm.streams.info(STREAM)).state.first_seq;
  }

  /**
   * Whether the log still holds the command at `seq` (false once truncation removed it). Asked as the first
   * command from `seq` on: a log truncated by an earlier version kept its key commands, before `seq` and after.
   */
  async holds(seq: number): Promise<boolean> {
    return (await this.nextOn(STREAM_SUBJECTS[0], seq)) === seq;
  }

  /** The sequence of the first command on `subject` from `seq` on, or null when the log holds none. */
  async nextOn(subject: string, seq: number): Promise<number | null> {
    // JetStream's message get takes `next_by_subj` (nats-server 2.9 and later); the client types it for direct gets only.
    const next = await this.jsm.streams.getMessage(STREAM, { seq, next_by_subj: subject } as unknown as { seq: number });
    return next?.seq ?? null;
  }

  /**
   * Removes every command with a sequence below `seq`. Never by subject: nats-server 2.9.10 moves every
   * consumer of the stream to the first command left on the purged subject (past the end when none is
   * left), so a node whose consumer was behind skipped the commands of other subjects in between, and
   * stopped as if the log had been truncated past it (fixed in later releases: nats-io/nats-server#3838).
   */
  async purgeBelow(seq: number): Promise<void> {
    await this.jsm.streams.purge(STREAM, { seq });
  }

  /**
   * Health's note while writes are refused: the last given up within REFUSED_SHOWN_MS and none acknowledged
   * since. With a leader elected, JetStream can still refuse every write (its servers' storage full: `insufficient
   * resources`), and the node otherwise looked UP with nothing to say.
   */
  refusedWrites(): string | null {
    const refused = this.#refused;
    if (refused === null || Date.now() - refused.at > REFUSED_SHOWN_MS) return null;
    // The log's leader answered since (health's check, a read's barrier): it takes writes again, unless its storage is full.
    if (!refused.storageFull && this.#answeredAt > refused.at) return null;
    return `degraded: the cluster log has refused every write for ${Math.round((refused.at - refused.since) / 1000)} s (${refused.reason}); writes are answered 503 until it takes one again`;
  }

  /** When JetStream last answered: an append acknowledged, or the stream's state with a leader. */
  get answeredAt(): number {
    return this.#answeredAt;
  }

  /**
   * What is degraded about the log's stream (a replica offline or behind), or null when all is well, when
   * the stream was created (log-identity.ts), and its replicas; throws LogUnavailableError while the stream has no leader (no
   * write can be taken then).
   */
  async degradation(): Promise<{ degradation: string | null; created: string; replicas: number }> {
    const info = await this.jsm.streams.info(STREAM);
    if (!hasLeader(info)) throw new LogUnavailableError('the cluster log has no leader (JetStream is electing one)');
    this.#answeredAt = Date.now();
    const lagging = (info.cluster?.replicas ?? []).filter((peer) => peer.offline || !peer.current);
    const degradation = lagging.length === 0 ? null : `degraded: the cluster log's replica on ${lagging.map((peer) => `nats-server ${peer.name} (${replicaState(peer)})`).join(', ')}; writes go on while a majority of servers is up`;
    return { degradation, created: info.created, replicas: info.config.num_replicas };
  }

  /** Every command from `fromSeq` on, in log order, now and as they arrive (unfiltered: sequences without gaps but where the log was truncated). */
  async follow(fromSeq: number): Promise<ConsumerMessages> {
    const consumer = await this.#followJs.consumers.get(STREAM, { opt_start_seq: Math.max(1, fromSeq) });
    // A few messages ahead: a report page can be megabytes (nats-server 2.9 stalls byte-bounded pulls here).
    return consumer.consume({ max_messages: CONSUME_AHEAD });
  }

  /**
   * The command at `seq` as any server holding the log gives it, or null when the one asked has none there.
   * JetStream's direct get needs no consumer, so it answers while JetStream elects its meta leader after a
   * server died, when no consumer can be created.
   */
  async commandAt(seq: number): Promise<{ data: Uint8Array; msgId: string | null; notFor: string | null } | null> {
    this.#directJsm ??= await jetstreamManager(this.nc, { timeout: DIRECT_GET_MS, checkAPI: false });
    const stored = await this.#directJsm.direct.getMessage(STREAM, { seq });
    return stored === null ? null : { data: stored.data, msgId: msgIdOf(stored.header), notFor: notFor(stored.header) };
  }

  /**
   * The CRC-32 of the commands `from` to `to` as the log gives them now, hashed as a node hashes what it reads
   * (log-checks.ts), or null once the log no longer holds them all (truncated): the reading that tells which
   * of two nodes' differing ones is right.
   */
  async hashOf(from: number, to: number): Promise<number | null> {
    const consumer = await this.#followJs.consumers.get(STREAM, { opt_start_seq: from });
    const messages = await consumer.consume({ max_messages: CONSUME_AHEAD });
    let lastAt = Date.now();
    // Commands come while they do; one that does not within a few seconds (the servers electing) ends the try.
    const stalled = setInterval(() => {
      if (Date.now() - lastAt > HASH_READ_STALL_MS) void messages.close();
    }, HASH_READ_STALL_MS / 4);
    let crc = 0;
    let next = from;
    try {
      for await (const message of messages) {
        lastAt = Date.now();
        if (message.seq !== next) return null;
        crc = foldCommand(crc, message.data);
        if (next++ === to) return crc;
      }
      throw new Error(`command ${next} of the log did not come within ${HASH_READ_STALL_MS / 1000} s`);
    } finally {
      clearInterval(stalled);
      messages.stop();
    }
  }

  /** The commands of one family as the log holds them now (no waiting for new ones). */
  async read(subject: string): Promise<Command[]> {
    return (await this.untilAnswered(() => this.#readOnce(subject))).map(decodeCommand);
  }

  /** Every message of `subject`, as many as the log counts. */
  async #readOnce(subject: string): Promise<Uint8Array[]> {
    const messages: Uint8Array[] = [];
    const info = await this.jsm.streams.info(STREAM, { subjects_filter: subject });
    const count = info.state.subjects?.[subject] ?? 0;
    if (count === 0) return messages;
    const consumer = await this.js.consumers.get(STREAM, { filter_subjects: subject });
    for (;;) {
      const message = await consumer.next({ expires: 2_000 });
      // On servers just restarted the first one can take longer: the list so far would be short.
      if (message === null) throw new Error(`${messages.length} of the log's ${count} ${subject} commands came within 2 s`);
      messages.push(message.data);
      if (message.info.pending === 0) return messages;
    }
  }

  /** `untilAnswered(request, waitMs)`: a command line waits as long as `open` waits for JetStream. */
  untilAnswered<T>(request: () => Promise<T>, waitMs = STARTUP_WAIT_MS): Promise<T> {
    return untilAnswered(request, waitMs);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#acknowledged?.close();
    // Draining needs a server; without one, close at once.
    if (this.#disconnectedAt === null) await this.nc.drain().catch(() => this.nc.close());
    else await this.nc.close();
  }
}

