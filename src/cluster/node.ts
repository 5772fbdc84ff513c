// A jvmlens node of a cluster: its writes go through the JetStream log, its reads wait until its replica
// has applied every write acknowledged before them, and its reports are coordinated through the log.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Config } from '../config.ts';
import { ApiError } from '../errors.ts';
import type { Placement, ReportJobs } from '../engine/reports/jobs.ts';
import type { WorkerPool } from '../engine/reports/pool.ts';
import type { ReportMeta } from '../engine/reports/report-types.ts';
import type { TestFault } from '../engine/reports/tasks.ts';
import type { FleetColumnsView } from '../storage/fleet-columns.ts';
import type { Readiness } from '../http/readiness.ts';
import type { AgentEvent } from '../ingest/events.ts';
import type { Logger } from '../log.ts';
import type { Dictionary } from '../storage/dictionary.ts';
import { checkKnownVms, UnknownVmsError } from '../storage/ingest.ts';
import { listKeys } from '../storage/keys.ts';
import type { Store } from '../storage/store.ts';
import { readTags } from '../storage/vm-tags.ts';
import { findVm, MissingTagError, vmTags } from '../storage/vms.ts';
import { batchEvents } from '../writes.ts';
import type { LocalWrites, Writes } from '../writes.ts';
import { appliedCommands, appliedTail, appliedWindow, appliedWindows } from './applied-windows.ts';
import { eventsCommand, LOG_FORMAT } from './commands.ts';
import type { Command } from './commands.ts';
import { CatchUpHealth } from './catch-up.ts';
import { compactionRoundMs, LogCompaction, recordedPositions } from './compaction.ts';
import { CHECKING_HAND_OVER, handOverOwnWrites, serveReadIds, writesToHandOver } from './hand-over-writes.ts';
import { CHECK_EVERY, LogChecks } from './log-checks.ts';
import type { OddWindow } from './right-reading.ts';
import type { WindowHash } from './applied-windows.ts';
import { followedLog, holdLog, replacedLog } from './log-identity.ts';
import { ClusterLog, CommandTooLargeError, describeNatsError, LogUnavailableError } from './log.ts';
import { liveNodes, Membership, NodeIdInUseError, nodeOfGroup, nodesOfGroup } from './membership.ts';
import { appliedSeq, Replica } from './replica.ts';
import { ClusterReports } from './reports.ts';
import { ReportFanOut } from './fan-out.ts';
import type { FanOutCounts } from './fan-out.ts';
import { agreeOnShape, ClusterShapeError } from './shards.ts';
import { CodeReports } from './code-reports.ts';
import { codeGroupOf, dropClaim } from './code-group-choice.ts';
import { recordCodeGroup, storedCodeGroup } from '../storage/code-groups.ts';
import type { CodeGroup } from '../storage/code-groups.ts';
import { SnapshotSource } from './snapshot.ts';
import { serveNodeHealth } from './status.ts';
import { TookTooLongError, within } from './waits.ts';
import { READING_BACK_JOURNALED, WriteJournal } from './write-journal.ts';
import type { AcknowledgedWrites } from './acknowledged-writes.ts';

const RETRY_AFTER_S = '5';
const JOIN_RETRY_MS = 1_000;
const JOIN_LOG_EVERY = 60;
const STOP_WAIT_MS = 2_000;
const DEGRADATION_CHECK_MS = 2_000;
/**
 * JetStream silent this long (no leader, no answer, no write acknowledged): the node cannot serve, as writes
 * and reads give up after as long. Shorter silences are the leader elections that follow a server's death.
 */
const JETSTREAM_SILENT_MS = 10_000;
/** Test only (`--test-faults slow-apply`): how much longer each command takes to apply. */
const SLOW_APPLY_MS = 100;
/** Test only (`--test-faults failing-apply`): applying fails while this file is in the data directory. */
export const FAIL_APPLY_FILE = 'test-fail-apply';
/** Test only (`--test-faults hanging-apply`): applying does not end while this file is in the data directory. */
export const HANG_APPLY_FILE = 'test-hang-apply';
/** Test only (`--test-faults hanging-apply`): a command applying this long is slow (30 s otherwise). */
const HANGING_APPLY_SLOW_MS = 2_000;
/** A node without a NATS server this long is DOWN; shorter, its requests wait for the reconnection. */
const RECONNECT_GRACE_MS = 3_000;
/** A node that read the odd history and found no node to copy at its start asks for another try this often. */
const REBUILD_RETRY_MS = 60_000;
/** How often such a node looks whether it can take a copy now, or serve its own data (LogChecks.lookWhileWaiting). */
const WAITING_LOOK_MS = 5_000;
/** Test only (`--test-faults soon-gone-for-good`): how long the nodes of that reading are gone before it no longer counts (GONE_FOR_GOOD_MS otherwise). */
const SOON_GONE_FOR_GOOD_MS = 3_000;
/** How long the log stays quiet (nothing read) before this node compares its tail, the window read so far, with the others'. */
export const TAIL_QUIET_MS = 5_000;
/**
 * Test only (`--test-faults misread-log`, `misread-log-otherwise`): the log's commands up to this one are
 * hashed from other bytes as they apply, as a node whose server gave it another history for a while, until
 * the node finds it read an odd history (`misreadOver`, for this process).
 */
const MISREAD_UNTIL = 8;
let misreadOver = false;
/** Test only (`--test-faults lose-writes`): the agent batches whose sequence the log gives another write. */
const LOST_WRITES = 4;
/** How long a batch that starts a VM waits for this node to apply it before its 200 (as long as a read waits). */
const READ_BACK_MS = 10_000;
/** The longest a coordinator waits for another node's report partition before running it itself. */
const PARTITION_WAIT_MS = 60_000;
/** A node that read the odd history hands its writes to the others (20 s of asking, then the appends) before it rebuilds, for at most this long. */
const HAND_OVER_WAIT_MS = 40_000;
/** Commands a node may be behind the log's last it knows of and still take an agent batch without catching up first. */
const INGEST_LAG = 16;
export const CLUSTER_STEP = 'cluster log';

export interface ClusterNodeOptions {
  config: Config;
  store: Store;
  dict: Dictionary;
  /** How this node applies commands to its own store (the single node's code). */
  local: LocalWrites;
  readiness: Readiness;
  logger: Logger;
}

/** What a node runs other coordinators' report partitions with: this process's pool and fleet columns. */
export interface ReportEngine {
  pool: WorkerPool;
  fleetView: () => FleetColumnsView;
}

/** A write or read the log could not serve: 503, nothing acknowledged, retry. */
function unavailable(error: unknown): never {
  if (error instanceof LogUnavailableError) throw new ApiError('CLUSTER_UNAVAILABLE', `${error.message}; nothing was acknowledged, retry`, undefined, { 'Retry-After': RETRY_AFTER_S });
  throw error;
}

/**
 * A live node of another jvmlens version may write commands this node cannot apply, or apply this node's
 * wrongly (a rolling upgrade): the join fails, and is retried, until none is left (README "Running a cluster").
 */
async function refuseOtherLogFormats(nc: NatsConnection, nodeId: string): Promise<void> {
  const others = (await liveNodes(nc)).filter((node) => node.nodeId !== nodeId && node.logFormat !== LOG_FORMAT);
  if (others.length === 0) return;
  const named = others.map((node) => `${node.nodeId} (log format ${node.logFormat})`).join(', ');
  throw new Error(`live node(s) ${named} run another jvmlens version than this node (log format ${LOG_FORMAT}), and would not apply the log alike: stop every node, then start one version on each`);
}

export class ClusterNode {
  readonly #options: ClusterNodeOptions;
  #log: ClusterLog | null = null;
  #replica: Replica | null = null;
  #membership: Membership | null = null;
  /** The code group this node stores, once known (code-group-choice.ts). */
  #codeGroup: number | null = null;
  #fanOut: ReportFanOut | null = null;
  /** Code reports over the cluster's code groups (code-reports.ts). */
  #codeReports: CodeReports | null = null;
  /** Whether this node read the log as the others did (log-checks.ts). */
  #logChecks: LogChecks | null = null;
  /** Gives nodes the log was truncated past a copy of this node's data (restore.ts). */
  #snapshots: SnapshotSource | null = null;
  /** This node's answers to `jvmlens cluster status` (status.ts). */
  #healthAnswers: Subscription | null = null;
  /** This node's answers to a node that read the odd history, asking which of its writes this one read (hand-over-writes.ts). */
  #readIdsAnswers: Subscription | null = null;
  /** This node's writes not yet read back, on its disk. */
  #journal: WriteJournal | null = null;
  /** The log's last sequence when this node joined: health is UP once it is applied. */
  #target = 0;
  #joinProblem: string | null = null;
  #stopped = false;
  /** What health notes while UP, refreshed every few seconds from the stream's cluster info. */
  #degradation: string | null = null;
  /** How many nodes were live at the last look (see liveNodes). */
  #liveNodes = 0;
  /** Why the last look at the log's stream failed, or null when it answered. */
  #logSilence: string | null = null;
  #watch: ReturnType<typeof setInterval> | null = null;
  /** Whether the log and the buckets are being given more replicas. */
  #keepingReplicas = false;
  #compaction: ReturnType<typeof setInterval> | null = null;
  /** Rounds of truncation failed in a row (logged at the first, and when one works again). */
  #compactionFailures = 0;
  readonly #catchUp = new CatchUpHealth();
  #askRebuild: () => void = () => undefined;
  #rebuildRetry: ReturnType<typeof setTimeout> | null = null;
  #waitingLooks: ReturnType<typeof setInterval> | null = null;
  /** Compares the log's tail with the other nodes' once the log is quiet. */
  #tailChecks: ReturnType<typeof setInterval> | null = null;
  /**
   * Resolves when this node read another history of the log than the others (log-checks.ts): its data is
   * to be replaced by a copy of a node that agrees with them, which its next start takes (restore.ts).
   */
  readonly rebuild = new Promise<void>((resolve) => (this.#askRebuild = resolve));
  readonly reports: ClusterReports;
  /** The writes routes make: into the log. */
  readonly writes: Writes;

  constructor(options: ClusterNodeOptions) {
    this.#options = options;
    this.reports = new ClusterReports({
      nodeId: options.config.nodeId,
      append: (command, msgId, notForNode) => this.#append(command, msgId, notForNode).catch(unavailable),
      store: options.store,
      logger: options.logger,
      waitFor: (seq) => this.#appliedWrite(seq).catch(unavailable),
    });
    this.writes = {
      events: async (batch) => {
        // Backpressure without a round trip to JetStream per batch: a node within INGEST_LAG commands of the
        // log's last it knows of takes a batch at once; one further behind first catches up, as a read does.
        const replica = this.#requireReplica();
        if (replica.knownLast - replica.applied > INGEST_LAG) await this.barrier();
        // The 400s of a single node, before anything is published; the log then carries the validated events.
        const events = batchEvents(batch);
        try {
          checkKnownVms(options.store, events);
        } catch (error) {
          // A VM started through another node a moment ago may not be applied here yet.
          if (!(error instanceof UnknownVmsError)) throw error;
          await this.barrier();
          checkKnownVms(options.store, events);
        }
        const log = this.#requireLog();
        const part = (slice: readonly AgentEvent[]): Command => eventsCommand(slice, batch.now, options.config.codeGroups);
        try {
          const seq = await log.append(part(events));
          // The VM's later batches are refused, or skipped in the log, until its start is applied: one whose
          // start the log lost and took again (acknowledged-writes.ts) is answered once it is there. Not for
          // longer than a read waits (the batch is acknowledged, and still checked when this node reads it);
          // 503 for one given up as lost, which the agent sends again. Other batches are answered at the
          // acknowledgement: waiting for every batch's read-back cost 15% of known-code ingestion in three
          // code groups (README "Each node reads its own writes back").
          if (events.some((event) => event.type === 'vm.start')) {
            await within(this.#appliedWrite(seq), READ_BACK_MS, 'not read back').catch((error: Error) => {
              if (!(error instanceof TookTooLongError)) unavailable(error);
            });
          }
        } catch (error) {
          if (!(error instanceof CommandTooLargeError)) unavailable(error);
          // Over the servers' max_payload even compressed: consecutive parts, applied in log order.
          // Refused before any part is appended: one event alone over the limit would leave the batch half stored.
          const index = events.findIndex((event) => !log.fits(part([event])));
          if (index >= 0) throw new ApiError('PAYLOAD_TOO_LARGE', `event ${index + 1} of this batch does not fit one message of the cluster's log even compressed (max_payload ${log.maxPayload} bytes): send fewer items per event`);
          await log.appendSplit(events, part).catch(unavailable);
        }
        return events.length;
      },
      tags: async (edit) => {
        const record = findVm(options.store, edit.vmId);
        if (record === undefined) return undefined;
        if (edit.op === 'remove' && !readTags(options.store, options.dict, record.row).has(edit.key)) throw new MissingTagError(`VM '${edit.vmId}' has no tag '${edit.key}'`);
        await this.#appliedWrite(await this.#append({ kind: 'tags', edit }).catch(unavailable)).catch(unavailable);
        return vmTags(options.store, options.dict, edit.vmId);
      },
    };
  }

  #requireLog(): ClusterLog {
    if (this.#log === null) throw new LogUnavailableError('not connected to the cluster yet');
    return this.#log;
  }

  #requireReplica(): Replica {
    if (this.#replica === null) throw new LogUnavailableError('not connected to the cluster yet');
    return this.#replica;
  }

  #append(command: Command, msgId?: string, notForNode?: string): Promise<number> {
    return this.#requireLog().append(command, msgId, notForNode);
  }

  /**
   * Resolves once this node applied the write JetStream acknowledged at `seq`, where this node read it in the
   * log, which may be another sequence, or a later one where it was appended again (acknowledged-writes.ts).
   */
  async #appliedWrite(seq: number): Promise<void> {
    const place = this.#log?.acknowledged?.readAt(seq);
    const readAt = place === undefined ? seq : await place.catch((error: Error) => {
      throw new LogUnavailableError(error.message);
    });
    await this.#requireReplica().waitFor(readAt);
  }

  /**
   * Writes this node's process before this one journaled and had not read back (write-journal.ts): read
   * back from the log now, each one it lacks appended again, before this node applies anything or takes a
   * write. One that is not read back in time stays held, and this node's own reading of the log decides.
   */
  async #readBackJournaled(log: ClusterLog, acknowledged: AcknowledgedWrites): Promise<void> {
    const { logger } = this.#options;
    const held = acknowledged.holdJournaled();
    if (held === 0) return;
    logger.warn(READING_BACK_JOURNALED, { writes: held });
    try {
      await log.readBackWrites();
      logger.info('the writes journaled by this node\'s last process are in the cluster log', { writes: held });
    } catch (error) {
      logger.warn('reading the journaled writes back failed; this node checks them as it reads the log', { reason: (error as Error).message });
    }
  }

  /**
   * Connects, replays the log into this node's store, joins the membership and starts taking reports,
   * retrying until it can (NATS down, a JetStream cluster still electing its leaders). Health stays DOWN
   * (CLUSTER_STEP, and the last failure in its note) until the replica has applied everything the log held.
   */
  async start(jobs: ReportJobs, engine: ReportEngine, ports: { gatewayPort: number; apiPort: number }, rematch: () => Promise<void>): Promise<void> {
    let lastReason = '';
    for (let attempt = 1; !this.#stopped; attempt++) {
      try {
        await this.#join(jobs, engine, ports, rematch);
        this.#joinProblem = null;
        return;
      } catch (error) {
        if (error instanceof NodeIdInUseError || error instanceof ClusterShapeError) throw error;
        const reason = describeNatsError(error as Error);
        this.#joinProblem = `joining the cluster failed (attempt ${attempt}): ${reason}`;
        // Retried every second while the servers are down: logged when the reason changes, and every minute.
        if (reason !== lastReason || attempt % JOIN_LOG_EVERY === 0) this.#options.logger.warn('joining the cluster failed; retrying', { attempt, reason });
        lastReason = reason;
        await new Promise((resolve) => setTimeout(resolve, JOIN_RETRY_MS));
      }
    }
  }

  async #join(jobs: ReportJobs, engine: ReportEngine, ports: { gatewayPort: number; apiPort: number }, rematch: () => Promise<void>): Promise<void> {
    const { config, store, dict, local, logger, readiness } = this.#options;
    this.#log ??= await ClusterLog.open(config.cluster, `jvmlens-${config.nodeId}`, 'node', config.clusterCa);
    const log = this.#log;
    const { replicas } = log;
    // Before this node shows up as a member: one that follows another log must not look live.
    if (this.#replica === null) await holdLog(store, log, { adopt: config.adoptClusterLog, codeGroups: config.codeGroups }, replicas, logger);
    await agreeOnShape(log.nc, replicas, { vmShards: config.vmShards, codeGroups: config.codeGroups });
    const group: CodeGroup = { count: config.codeGroups, of: (this.#codeGroup ??= await codeGroupOf(config, storedCodeGroup(store), log.nc, replicas, logger)) };
    if (this.#membership === null) {
      await refuseOtherLogFormats(log.nc, config.nodeId);
      this.#membership = await Membership.join(log.nc, { nodeId: config.nodeId, ...ports, startedAt: Date.now(), codeGroup: group.of, logFormat: LOG_FORMAT }, replicas, logger);
    }
    if (this.#replica === null) {
      await holdCodeGroup(store, group);
      // Its heartbeat counts for its group now.
      if (config.codeGroup === null && config.codeGroups > 1) await dropClaim(log.nc, config.nodeId, replicas).catch((error: Error) => logger.warn('dropping this node\'s claim of its code group failed; it lapses within a minute', { reason: error.message }));
      this.reports.attach(jobs, this.#membership);
      const every = config.testLogCheckEvery || CHECK_EVERY;
      const journal = (this.#journal ??= WriteJournal.open(config.dataDir));
      const acknowledged = log.checkWrites(logger, journal);
      await this.#readBackJournaled(log, acknowledged);
      this.#readIdsAnswers = serveReadIds(log.nc, config.nodeId, acknowledged);
      // Its writes only its history held would be lost with its data: handed to the others first, journaled
      // meanwhile (killed before it is done, it hands them over at its next start: restore.ts).
      const handOver = async (odd: OddWindow) => {
        const writes = writesToHandOver(acknowledged, { ...odd, from: odd.to - every + 1 });
        await journal.keepToHandOver(writes);
        logger.info(CHECKING_HAND_OVER, { writes: writes.length, agreed: odd.nodes });
        // Test only: a hand-over that takes long, for a test to kill the node meanwhile.
        if (config.testFaults.includes('slow-hand-over')) await new Promise((resolve) => setTimeout(resolve, HAND_OVER_WAIT_MS));
        await handOverOwnWrites(log.nc, writes, (write) => log.appendAgain(write), odd.nodes, logger);
        await journal.handedOver();
      };
      const foundOdd = (odd: OddWindow) => {
        misreadOver = true;
        void within(handOver(odd), HAND_OVER_WAIT_MS, `not done within ${HAND_OVER_WAIT_MS / 1000} s`).catch((error: Error) => logger.error('handing this node\'s writes to the other nodes failed', { reason: error.message })).finally(() => this.#askRebuild());
      };
      const goneForGood = config.testFaults.includes('soon-gone-for-good') ? { goneForGoodMs: SOON_GONE_FOR_GOOD_MS } : {};
      const canGiveCopy = (nodeId: string) => nodeOfGroup(log.nc, nodeId, group.of);
      // Every node that runs or holds a place in the log (a stopped one may come back).
      const groupPeers = async () => {
        const known = new Set([...(await liveNodes(log.nc)).map((node) => node.nodeId), ...(await recordedPositions(log.nc)).map((position) => position.nodeId)]);
        known.delete(config.nodeId);
        return nodesOfGroup(log.nc, [...known], group.of);
      };
      const checks = await LogChecks.open(log.nc, { nodeId: config.nodeId, replicas, logger, store, every, foundOdd, readAgain: (from, to) => log.hashOf(from, to), canGiveCopy, groupPeers, commandsOf: (from, to) => appliedCommands(store, from, to), ...goneForGood });
      this.#logChecks = checks;
      const compareFailed = (to: number | null) => (error: Error) => logger.warn('comparing the cluster log with the other nodes failed', { to, reason: describeNatsError(error) });
      const record = (window: WindowHash) => void checks.record(window).catch(compareFailed(window.to));
      // Those its last process may not have recorded (killed first, or JetStream did not take them): recorded again, alike.
      for (const window of appliedWindows(store)) record(window);
      // Its start found no node to copy (restore.ts): another try in a while, or as soon as a node that could give
      // one runs. Once the reading it was found odd by no longer counts, it serves its own data, its windows compared again.
      if (checks.problem !== null) {
        this.#rebuildRetry = setTimeout(() => this.#askRebuild(), REBUILD_RETRY_MS);
        let asking = false;
        this.#waitingLooks = setInterval(() => {
          if (asking) return;
          asking = true;
          checks.lookWhileWaiting().then(
            (look) => {
              if (look === 'copy') this.#askRebuild();
              if (look !== 'serve') return;
              this.#stopWaitingForCopy();
              for (const window of appliedWindows(store)) record(window);
            },
            (error: Error) => this.#stopped || logger.warn('looking whether this node can take a copy or serve its own data failed', { reason: error.message }),
          ).finally(() => (asking = false));
        }, WAITING_LOOK_MS);
      }
      // A window may take long to fill (a chaos row's last writes differed in one the run never filled):
      // while the log is quiet, the tail applied so far is compared too, and the windows still undecided again.
      let lastRead = Date.now();
      let comparingTail = false;
      this.#tailChecks = setInterval(() => {
        if (comparingTail || Date.now() - lastRead < TAIL_QUIET_MS) return;
        comparingTail = true;
        const tail = appliedTail(store, every);
        checks.checkTail(tail).catch(compareFailed(tail?.to ?? null)).finally(() => (comparingTail = false));
      }, TAIL_QUIET_MS);
      // Test only: this node hashes other bytes than it read at the log's start, as a node whose server gave it another history for a while
      // (`misread-log-otherwise`: yet other bytes, another history again).
      const misreadWith = config.testFaults.includes('misread-log-otherwise') ? 1 : config.testFaults.includes('misread-log') ? 0 : null;
      if (config.testFaults.includes('lose-writes')) log.loseWritesForTest(LOST_WRITES);
      // Test only: this node reads the writes it lost (above) where the log holds their stand-ins, as a node whose server's history held them.
      const readLost = config.testFaults.includes('read-lost-writes');
      this.#replica = new Replica({
        nodeId: config.nodeId, log, store, dict, writes: local, codeGroup: group.of, applyReport: (command) => this.reports.apply(command), rematch, logger,
        read: (seq, data, msgId, after) => {
          acknowledged.read(seq, readLost && msgId !== null ? (log.lostWriteFor(msgId) ?? msgId) : msgId, after);
          lastRead = Date.now();
        },
        windowEvery: every,
        applied: (seq) => {
          const window = seq % every === 0 ? appliedWindow(store, seq) : null;
          if (window !== null) record(window);
        },
        ...(misreadWith === null ? {} : { hashed: (seq: number, data: Uint8Array) => (!misreadOver && seq <= MISREAD_UNTIL ? Uint8Array.of(...data.subarray(0, 16), misreadWith) : data) }),
        ...(config.testFaults.includes('slow-apply') ? { slowApplyMs: SLOW_APPLY_MS } : {}),
        ...(config.testFaults.includes('failing-apply') ? { applyFails: () => existsSync(join(config.dataDir, FAIL_APPLY_FILE)) } : {}),
        ...(config.testFaults.includes('hanging-apply') ? { applyHangs: () => existsSync(join(config.dataDir, HANG_APPLY_FILE)), applySlowMs: HANGING_APPLY_SLOW_MS } : {}),
      });
      const replica = this.#replica;
      // From now on, so that `jvmlens cluster status` shows a node replaying the log too.
      this.#healthAnswers = serveNodeHealth(log.nc, config.nodeId, () => ({
        up: readiness.reason() === null, note: readiness.reason() ?? readiness.degradation(), applied: replica.applied, behindMs: replica.behindMs(),
      }));
      this.#target = await log.lastSeq();
      logger.info('replaying the cluster log', { from: this.#replica.applied + 1, to: this.#target });
      this.#replica.start();
    }
    await this.#replica.waitFor(this.#target);
    logger.info('cluster log replayed', { applied: this.#replica.applied });
    if (this.#fanOut === null) {
      const replica = this.#replica;
      this.#fanOut = new ReportFanOut({
        nc: log.nc, nodeId: config.nodeId, vmShards: config.vmShards, membership: this.#membership, store, ...engine,
        applied: () => replica.applied, waitFor: (seq) => replica.waitFor(seq),
        timeoutMs: Math.min(config.reportTimeoutMs, PARTITION_WAIT_MS), minVms: config.reportFanOutVms, faults: config.testFaults as TestFault[], logger,
      });
      this.#fanOut.serve();
      this.#codeReports = new CodeReports({ nc: log.nc, nodeId: config.nodeId, group, membership: this.#membership, store, applied: () => replica.applied, waitFor: (seq) => replica.waitFor(seq), logger });
      this.#codeReports.serve();
    }
    readiness.done(CLUSTER_STEP);
    readiness.setDegradation(() => [this.#degradation, log.refusedWrites(), this.#logChecks?.degradation ?? null, this.#fanOut?.degradation() ?? null, this.#codeReports?.degradation() ?? null].filter((note) => note !== null).join('; ') || null);
    const membership = this.#membership;
    this.#watch ??= setInterval(() => {
      membership.live().then((live) => (this.#liveNodes = live.length), () => undefined);
      log.degradation().then(
        ({ degradation, created, replicas }) => {
          this.#degradation = degradation;
          this.#logSilence = null;
          if (replicas < log.replicas) this.#keepReplicas(log);
          const followed = followedLog(store);
          // Deleted and made again by a node that started (the servers lost their data): not this node's log.
          if (followed !== undefined && created !== followed) this.#replica?.halt(replacedLog(followed, created));
        },
        (error: Error) => {
          this.#degradation = `degraded: the cluster log's state is unknown (${describeNatsError(error)})`;
          this.#logSilence = describeNatsError(error);
        },
      );
    }, DEGRADATION_CHECK_MS);
    this.#watch.unref();
    // Once caught up: a node still replaying is not yet where its position would say.
    const compaction = await LogCompaction.open(log, log.replicas, config.logRetentionMs);
    this.#compaction ??= setInterval(() => void this.#compact(compaction), compactionRoundMs(config.logRetentionMs));
    this.#compaction.unref();
    if (this.#snapshots === null) {
      const replica = this.#replica;
      this.#snapshots = new SnapshotSource({
        nc: log.nc, nodeId: config.nodeId, dataDir: config.dataDir, store, unavailable: async () => this.problem() ?? (await this.#logChecks?.undecided()) ?? null,
        applied: () => replica.applied, holdLog: (nodeId, seq) => compaction.record(nodeId, seq), logger,
      });
      await this.#snapshots.serve();
    }
  }

  /** The log has fewer replicas than the servers now name (made before the cluster had formed): the log and the buckets get them. */
  #keepReplicas(log: ClusterLog): void {
    if (this.#keepingReplicas) return;
    this.#keepingReplicas = true;
    const { logger } = this.#options;
    log.keepReplicas().then(
      () => logger.info('the NATS servers name more of their cluster than the cluster log had replicas on: the log and the buckets have as many now', { replicas: log.replicas }),
      (error: Error) => logger.warn('giving the cluster log and buckets more replicas failed; trying again', { replicas: log.replicas, reason: describeNatsError(error) }),
    ).finally(() => (this.#keepingReplicas = false));
  }

  /**
   * Where a report's partitions run: a code report over the code groups, a grouped report spread over the
   * live nodes by VM shard, or null (all here) before this node joined.
   */
  async place(meta: ReportMeta): Promise<Placement | null> {
    return this.#codeReports?.place(meta) ?? (this.#fanOut === null ? null : this.#fanOut.place(meta));
  }

  /**
   * This node's place in the log (for /metrics): the last command applied, the highest it knows the log holds,
   * and about how long it needs to apply those in between; zeros before it joined.
   */
  get logPosition(): { applied: number; known: number; behindSeconds: number } {
    const replica = this.#replica;
    return replica === null ? { applied: 0, known: 0, behindSeconds: 0 } : { applied: replica.applied, known: replica.knownLast, behindSeconds: replica.behindMs() / 1000 };
  }

  /** The live nodes this node saw at its last look (every 2 s), itself included; 0 before it joined. */
  get liveNodes(): number {
    return this.#liveNodes;
  }

  /** Report partitions served for others (and stopped by their coordinator), sent to others, and run here after another node failed to give one. */
  get partitionCounts(): FanOutCounts {
    return this.#fanOut?.counts ?? { served: 0, cancelled: 0, sent: 0, ranHere: 0 };
  }

  /** Records this node's position; the lowest live node then truncates what every node applied. */
  async #compact(compaction: LogCompaction): Promise<void> {
    const { config, logger } = this.#options;
    try {
      // A window whose readings differ is kept for the log read again to decide (log-checks.ts).
      const keepFrom = this.#logChecks?.keepFrom ?? null;
      const applied = this.#requireReplica().applied;
      await compaction.record(config.nodeId, keepFrom === null ? applied : Math.min(applied, keepFrom - 1));
      if ((await this.#membership?.live())?.[0] === config.nodeId) await compaction.truncate(Date.now(), () => listKeys(this.#options.store));
      if (this.#compactionFailures > 0) logger.info('truncating the cluster log works again', { failedRounds: this.#compactionFailures });
      this.#compactionFailures = 0;
    } catch (error) {
      // The next round tries again: a truncation that waits costs only disk on the NATS servers. Said once
      // per run of failures (every round fails while JetStream elects a leader), not every few seconds.
      if (this.#compactionFailures++ === 0) logger.warn('truncating the cluster log failed; trying again every round', { reason: describeNatsError(error as Error) });
    }
  }

  /** Read your writes: resolves once this node applied every write acknowledged before the call. */
  async barrier(): Promise<void> {
    await this.#requireReplica().caughtUp().catch(unavailable);
  }

  /** Why this node cannot serve (health's note), or null. */
  problem(): string | null {
    // Also once connected: a join can fail after the log opened (a live node of another version, say).
    if (this.#joinProblem !== null) return this.#joinProblem;
    const log = this.#log;
    if (log === null) return null;
    if (this.#replica?.problem) return this.#replica.problem;
    if (this.#logChecks?.problem) return this.#logChecks.problem;
    if (log.nc.isClosed()) return 'the connection to NATS is closed';
    // A node whose server died reconnects to another within a second: requests meanwhile wait (the client
    // sends them once reconnected) rather than be refused.
    if (log.disconnectedMs() > RECONNECT_GRACE_MS) return `not connected to any NATS server for ${Math.round(log.disconnectedMs() / 1000)} s (reconnecting)`;
    const catchingUp = this.#catchUp.note(this.#replica?.behindMs() ?? 0);
    if (catchingUp !== null) return catchingUp;
    const silentMs = Date.now() - log.answeredAt;
    if (this.#logSilence !== null && silentMs > JETSTREAM_SILENT_MS) {
      return `JetStream has not answered for the cluster log for ${Math.round(silentMs / 1000)} s (${this.#logSilence}): no write or read can be served until a majority of the NATS servers is back`;
    }
    return null;
  }

  #stopWaitingForCopy(): void {
    if (this.#rebuildRetry !== null) clearTimeout(this.#rebuildRetry);
    if (this.#waitingLooks !== null) clearInterval(this.#waitingLooks);
  }

  /** Leaves the cluster; bounded, since a NATS that is down would keep a clean leave waiting forever. */
  async stop(): Promise<void> {
    this.#stopped = true;
    // Its work still running ends once the connection below is closed, before the store closes.
    const checksDone = this.#logChecks?.close();
    this.#stopWaitingForCopy();
    if (this.#tailChecks !== null) clearInterval(this.#tailChecks);
    if (this.#watch !== null) clearInterval(this.#watch);
    if (this.#compaction !== null) clearInterval(this.#compaction);
    this.reports.close();
    this.#fanOut?.close();
    this.#codeReports?.close();
    this.#healthAnswers?.unsubscribe();
    this.#readIdsAnswers?.unsubscribe();
    await this.#snapshots?.close();
    const leave = (async () => {
      await this.#membership?.leave();
      await this.#replica?.stop();
    })();
    await Promise.race([leave, new Promise((resolve) => setTimeout(resolve, STOP_WAIT_MS))]);
    await this.#log?.close();
    await within(checksDone ?? Promise.resolve(), STOP_WAIT_MS, 'the log checks were still running').catch((error: Error) => this.#options.logger.warn('closing the store while the log checks still run', { reason: error.message }));
    await this.#journal?.close();
  }
}

/**
 * A data directory stores the classes of one code group: a node started with another would mix groups
 * (its code reports would count classes twice, or miss some). One that applied nothing yet takes the group.
 */
async function holdCodeGroup(store: Store, group: CodeGroup): Promise<void> {
  const held = storedCodeGroup(store);
  if (held.count === group.count && held.of === group.of) return;
  if (appliedSeq(store) > 0) {
    throw new ClusterShapeError(`this data directory stores code group ${held.of} of ${held.count}; this node was started with --code-group ${group.of} --code-groups ${group.count}: start it with --code-group ${held.of}, or give it an empty --data-dir`);
  }
  await recordCodeGroup(store, group);
}
