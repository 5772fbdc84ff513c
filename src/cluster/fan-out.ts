// Reports fanned out over the live nodes: the coordinator gives each node the VM shards it owns (shards.ts),
// each runs the report's kernels over its shards' VMs and answers with a portable partial, and the
// coordinator merges them as it merges its own partitions. Every node holds every shard (a full replica),
// so a node that does not answer costs time, never data: its partition then runs on the coordinator.
import type { NatsConnection, Msg } from '@nats-io/transport-node';
import { cancel, isCancelled, newCancelFlag } from '../engine/reports/cancel-flag.ts';
import type { Placement } from '../engine/reports/jobs.ts';
import type { WorkerPool } from '../engine/reports/pool.ts';
import { fromPortable, hasPortablePartials, toPortable } from '../engine/reports/portable-partials.ts';
import type { PortablePartial } from '../engine/reports/portable-partials.ts';
import type { Partition, ReportMeta, ReportRequest } from '../engine/reports/report-types.ts';
import type { PartialResult, TestFault } from '../engine/reports/tasks.ts';
import type { Logger } from '../log.ts';
import type { FleetColumnsView } from '../storage/fleet-columns.ts';
import type { Store } from '../storage/store.ts';
import { decodeMessage, encodeMessage } from './commands.ts';
import { NODE_TTL_MS } from './membership.ts';
import type { Membership } from './membership.ts';
import { assignShards } from './shards.ts';
import { replyLimit } from './replies.ts';
import { caughtUp, membershipWithin, unlessStopped } from './waits.ts';

const SUBJECT = 'jvmlens.partitions';
const CANCEL_SUBJECT = 'jvmlens.partitions.cancel';
/** How long health names a node that did not give a partition, unless it gives one since. */
const FAILURE_NOTED_MS = 60_000;

/** What the coordinator asks a node: one partition of a report, over the log as applied up to `seq` at least. */
interface PartitionAsk {
  reportId: string;
  request: ReportRequest;
  partition: Partition;
  seq: number;
}

/** The node's answer: the partial, and how far it had applied the log (the coordinator waits until it has too). */
type PartitionAnswer = { ok: true; applied: number; partial: PortablePartial } | { ok: false; message: string; tooLarge?: true };

/** A node's partial that does not fit one NATS message: the node is well, the report's groups are many. */
class PartialTooLargeError extends Error {}

export interface FanOutOptions {
  nc: NatsConnection;
  nodeId: string;
  vmShards: number;
  membership: Membership;
  store: Store;
  pool: WorkerPool;
  fleetView: () => FleetColumnsView;
  /** This node's position in the log, and a wait until it reaches `seq`. */
  applied: () => number;
  waitFor: (seq: number) => Promise<void>;
  /** The longest a coordinator waits for another node's partition (at most the report's time limit). */
  timeoutMs: number;
  /** Fleets smaller than this are not worth the round trips and the merge: their reports run here. */
  minVms: number;
  faults: TestFault[];
  logger: Logger;
}

/**
 * Partitions run for other coordinators, stopped here because their coordinator stopped the report, sent to
 * other nodes, and those that fell back to the coordinator.
 */
export interface FanOutCounts {
  served: number;
  cancelled: number;
  sent: number;
  ranHere: number;
}

export class ReportFanOut {
  readonly #options: FanOutOptions;
  readonly counts: FanOutCounts = { served: 0, cancelled: 0, sent: 0, ranHere: 0 };
  /** The cancel flags of the partitions this node runs for other coordinators, by report. */
  readonly #serving = new Map<string, Set<Int32Array>>();
  /** Nodes whose last partition asked of them failed: when, and why. */
  readonly #failing = new Map<string, { at: number; reason: string }>();
  readonly #subscriptions: ReturnType<NatsConnection['subscribe']>[] = [];

  constructor(options: FanOutOptions) {
    this.#options = options;
  }

  /** Answers other coordinators' partitions from now on, and stops those whose report they stopped. */
  serve(): void {
    const { nc, nodeId } = this.#options;
    this.#subscriptions.push(
      nc.subscribe(`${SUBJECT}.${nodeId}`, { callback: (error, msg) => (error === null ? void this.#answer(msg) : undefined) }),
      nc.subscribe(`${CANCEL_SUBJECT}.${nodeId}`, {
        callback: (error, msg) => {
          if (error !== null) return;
          try {
            const { reportId } = decodeMessage(msg.data) as { reportId: string };
            for (const flag of this.#serving.get(reportId) ?? []) cancel(flag);
          } catch (failure) {
            this.#options.logger.warn('a partition cancel could not be read', { reason: (failure as Error).message });
          }
        },
      }),
    );
  }

  /**
   * One partition per live node, each with the shards it owns; null (the report runs here, as on a single
   * node) when its partials are not worth sending, the fleet is small or no other node is live.
   */
  async place(meta: ReportMeta): Promise<Placement | null> {
    const { membership, vmShards, applied, nodeId, fleetView, minVms } = this.#options;
    if (!hasPortablePartials(meta.request) || fleetView().rows < minVms) return null;
    // A node that just failed to give a partition is left out until the membership would have dropped it
    // were it gone: a hung node delays one report, not each.
    const failedSince = Date.now() - NODE_TTL_MS;
    const live = (await membershipWithin(membership.live())).filter((node) => !((this.#failing.get(node)?.at ?? 0) > failedSince));
    if (!live.includes(nodeId)) live.push(nodeId);
    if (live.length < 2) return null;
    const owned = [...assignShards(vmShards, live)];
    // Every node's partition covers what it applied of the log when this node asks; a write acknowledged
    // before the report was created is applied here already, so `seq` includes it.
    const seq = applied();
    const partitions: Partition[] = owned.map(([, of]) => ({ kind: 'rows', start: 0, end: Number.MAX_SAFE_INTEGER, shards: { count: vmShards, of } }));
    return {
      partitions,
      run: async (index, here, stopped) => {
        const node = owned[index][0];
        if (node === nodeId) return here();
        try {
          this.counts.sent++;
          const partial = await this.#ask(node, { reportId: meta.reportId, request: meta.request, partition: partitions[index], seq }, stopped);
          this.#failing.delete(node);
          return partial;
        } catch (error) {
          if (stopped.aborted) {
            // Deleted, timed out or shutting down: the node stops the partition at its next check.
            try {
              this.#options.nc.publish(`${CANCEL_SUBJECT}.${node}`, encodeMessage({ reportId: meta.reportId }));
            } catch {
              // A connection closed meanwhile: the node's partition runs to its end, unread.
            }
            throw error;
          }
          this.counts.ranHere++;
          if (error instanceof PartialTooLargeError) {
            this.#options.logger.info('a node\'s report partition does not fit one message; it runs here', { reportId: meta.reportId, peer: node, reason: error.message });
            return here();
          }
          const reason = (error as Error).message;
          this.#failing.set(node, { at: Date.now(), reason });
          this.#options.logger.warn('a node did not give its report partition; it runs here', { reportId: meta.reportId, peer: node, reason });
          return here();
        }
      },
    };
  }

  /** Health's note while a node recently failed to give its partitions, or null. */
  degradation(): string | null {
    this.#forgetOldFailures();
    if (this.#failing.size === 0) return null;
    const nodes = [...this.#failing].map(([node, { at, reason }]) => `${node} at ${new Date(at).toISOString()} (${reason})`);
    return `degraded: report partitions were not given by node ${nodes.join(', ')}; this node ran them itself`;
  }

  #forgetOldFailures(): void {
    const since = Date.now() - FAILURE_NOTED_MS;
    for (const [node, failure] of this.#failing) if (failure.at < since) this.#failing.delete(node);
  }

  async #ask(node: string, ask: PartitionAsk, stopped: AbortSignal): Promise<PartialResult> {
    const { nc, timeoutMs, store, waitFor } = this.#options;
    const reply = await unlessStopped(nc.request(`${SUBJECT}.${node}`, encodeMessage(ask), { timeout: timeoutMs }), stopped);
    const answer = decodeMessage(reply.data) as PartitionAnswer;
    if (!answer.ok) throw answer.tooLarge === true ? new PartialTooLargeError(`node ${node}: ${answer.message}`) : new Error(`node ${node}: ${answer.message}`);
    // Its partial may count components created by writes this node has not applied yet.
    await unlessStopped(caughtUp(waitFor(answer.applied)), stopped);
    return fromPortable(store, answer.partial);
  }

  /** Answers a coordinator: never throws (a message it cannot read, or a connection closed meanwhile, is logged). */
  async #answer(msg: Msg): Promise<void> {
    const { nc, logger } = this.#options;
    let answer: PartitionAnswer;
    try {
      answer = await this.#serve(decodeMessage(msg.data) as PartitionAsk);
    } catch (error) {
      answer = { ok: false, message: (error as Error).message };
    }
    try {
      let bytes = encodeMessage(answer);
      const limit = replyLimit(nc);
      if (bytes.length > limit) bytes = encodeMessage({ ok: false, message: `the partial takes ${bytes.length} bytes, over the servers' max_payload`, tooLarge: true } satisfies PartitionAnswer);
      msg.respond(bytes);
    } catch (error) {
      logger.warn('answering a report partition failed', { reason: (error as Error).message });
    }
  }

  /** Runs a partition another coordinator asked for; a cancel from it stops the partition at its next check. */
  async #serve(ask: PartitionAsk): Promise<PartitionAnswer> {
    const { store, pool, fleetView, waitFor, applied, faults } = this.#options;
    const flag = newCancelFlag();
    const flags = this.#serving.get(ask.reportId) ?? new Set();
    this.#serving.set(ask.reportId, flags.add(flag));
    try {
      await caughtUp(waitFor(ask.seq));
      const partial = await pool.run<PartialResult>({ kind: 'partition', reportId: ask.reportId, request: ask.request, partition: ask.partition, fleet: fleetView(), index: 0, faults, cancel: flag });
      const answer: PartitionAnswer = { ok: true, applied: applied(), partial: toPortable(store, ask.request, partial) };
      this.counts.served++;
      return answer;
    } catch (error) {
      if (isCancelled(flag)) this.counts.cancelled++;
      throw error;
    } finally {
      flags.delete(flag);
      if (flags.size === 0) this.#serving.delete(ask.reportId);
    }
  }

  close(): void {
    for (const subscription of this.#subscriptions) subscription.unsubscribe();
  }
}
