// Code reports over a cluster's code groups (src/storage/code-groups.ts): each node stores the classes of
// one group, so the coordinator of a code report takes its own group's classes from its pool and asks a
// live node of every other group for theirs, in chunks (a group's classes may take hundreds of megabytes,
// a NATS message one); the engine merges the groups' classes in key order (`codeFinalize`). A group with
// no live node leaves the report PARTIALLY_FAILED without its classes, and health names it meanwhile.
import type { Msg, NatsConnection } from '@nats-io/transport-node';
import type { Placement } from '../engine/reports/jobs.ts';
import { timedCode } from '../engine/reports/kernels/code.ts';
import type { Partition, ReportMeta, ReportRequest } from '../engine/reports/report-types.ts';
import type { PackedClasses } from '../engine/reports/tasks.ts';
import { packRecords } from '../msgpack-records.ts';
import { fnv1a } from '../hash.ts';
import type { Logger } from '../log.ts';
import { SlotTimes } from '../storage/code-times.ts';
import type { CodeGroup } from '../storage/code-groups.ts';
import type { Store } from '../storage/store.ts';
import { decodeRecords, encodeRecords } from './commands.ts';
import type { Membership } from './membership.ts';
import { replyLimit, respond } from './replies.ts';
import { caughtUp, membershipWithin, unlessStopped } from './waits.ts';

const SUBJECT = 'jvmlens.code';
/**
 * Methods per chunk: as many as fit the servers' max_payload at BYTES_PER_METHOD (about 40 packed, before
 * deflate; longer names halve a chunk until it fits), at most MAX_CHUNK_METHODS, which the giving node's main
 * thread scans in about 30 ms. Each chunk is a round trip: 10,000 per chunk on the deployment's 8 MiB
 * servers left a code report of 461,601 methods in three groups at 0.94 s against 0.28 on one node.
 */
const BYTES_PER_METHOD = 64;
const MAX_CHUNK_METHODS = 50_000;
/** The longest a coordinator waits for one chunk before asking another node of the group. */
const CHUNK_WAIT_MS = 30_000;
/** How often the groups without a live node are looked for, for health. */
const GROUPS_CHECK_MS = 2_000;

/** One chunk of a group's classes: after class `after` (null: from the first), over the log as applied up to `seq` at least. */
interface ChunkAsk {
  reportId: string;
  request: ReportRequest;
  seq: number;
  after: string[] | null;
  methods: number;
}

/**
 * The chunk's classes (TimedClasses packed as msgpack records, for the thread that writes the pages), and
 * the last class's key to ask after next (null: the group's classes are all given).
 */
type ChunkAnswer = { ok: true; classes: Uint8Array; last: string[] | null } | { ok: false; message: string };

export interface CodeReportsOptions {
  nc: NatsConnection;
  nodeId: string;
  group: CodeGroup;
  membership: Membership;
  store: Store;
  /** This node's position in the log, and a wait until it reaches `seq`. */
  applied: () => number;
  waitFor: (seq: number) => Promise<void>;
  logger: Logger;
}

export class CodeReports {
  readonly #options: CodeReportsOptions;
  #subscription: ReturnType<NatsConnection['subscribe']> | null = null;
  #timer: ReturnType<typeof setInterval> | null = null;
  /** The code groups no live node stores, as last seen. */
  #orphans: number[] = [];
  /** The times of the report whose chunks this node gives now: a report's chunks come one after the other. */
  #times: { reportId: string; times: SlotTimes } | null = null;

  constructor(options: CodeReportsOptions) {
    this.#options = options;
  }

  /** Gives this group's classes to other coordinators from now on, and watches for groups without a live node. */
  serve(): void {
    const { nc, nodeId, membership, group } = this.#options;
    this.#subscription = nc.subscribe(`${SUBJECT}.${nodeId}`, { callback: (error, msg) => (error === null ? this.#answer(msg) : undefined) });
    let checking = false;
    this.#timer = setInterval(() => {
      if (checking) return;
      checking = true;
      // Connected, not only in the membership: a node that crashed stays there until its heartbeat expires.
      // A membership that does not answer (JetStream electing a leader) leaves the last answer: the next check asks again.
      Promise.all([membership.members(), membership.connected()]).then(([members, connected]) => {
        const held = new Set(members.filter((member) => connected.includes(member.nodeId)).map((member) => member.codeGroup));
        held.add(group.of);
        this.#orphans = Array.from({ length: group.count }, (_, of) => of).filter((of) => !held.has(of));
      }, () => undefined).finally(() => (checking = false));
    }, GROUPS_CHECK_MS);
    this.#timer.unref();
  }

  /** One partition per code group: this node's runs here, the others' are gathered from their nodes. Null without groups. */
  place(meta: ReportMeta): Placement | null {
    const { group, applied } = this.#options;
    if (meta.family !== 'codeInventory' || group.count === 1) return null;
    // Every group's classes as applied here when the report starts: a write acknowledged before it is in.
    const seq = applied();
    const partitions: Partition[] = Array.from({ length: group.count }, () => ({ kind: 'keys', start: null, end: null, classes: true }));
    return {
      partitions,
      run: (index, here, stopped) => (index === group.of ? here() : this.#gather(index, meta, seq, stopped)),
    };
  }

  /** Health's note while a code group has no live node, or null. */
  degradation(): string | null {
    if (this.#orphans.length === 0) return null;
    const count = this.#options.group.count;
    return `degraded: no live node stores code group ${this.#orphans.join(', ')} of ${count}: code reports leave out its classes (PARTIALLY_FAILED) until one of its nodes is back`;
  }

  /** Group `of`'s classes, chunk after chunk from one of its live nodes, from where the last stopped when one fails. */
  async #gather(of: number, meta: ReportMeta, seq: number, stopped: AbortSignal): Promise<PackedClasses> {
    const { nc, membership } = this.#options;
    const chunks: Uint8Array[] = [];
    const methods = Math.min(MAX_CHUNK_METHODS, Math.floor(replyLimit(nc) / BYTES_PER_METHOD));
    let after: string[] | null = null;
    const failed = new Map<string, string>();
    for (;;) {
      const members = await membershipWithin(membership.members());
      const candidates = members.filter((member) => member.codeGroup === of && !failed.has(member.nodeId));
      // Reports spread over the group's nodes.
      const node = candidates.length === 0 ? undefined : candidates[fnv1a(meta.reportId) % candidates.length].nodeId;
      if (node === undefined) {
        const reasons = [...failed].map(([nodeId, reason]) => `${nodeId}: ${reason}`);
        throw new Error(`no live node of code group ${of} gave its classes${reasons.length === 0 ? '' : ` (${reasons.join('; ')})`}`);
      }
      try {
        for (;;) {
          const ask: ChunkAsk = { reportId: meta.reportId, request: meta.request, seq, after, methods };
          const reply = await unlessStopped(nc.request(`${SUBJECT}.${node}`, encodeRecords(ask), { timeout: CHUNK_WAIT_MS }), stopped);
          const answer = decodeRecords(reply.data) as ChunkAnswer;
          if (!answer.ok) throw new Error(answer.message);
          chunks.push(answer.classes);
          if (answer.last === null) return { kind: 'packed-classes', chunks };
          after = answer.last;
        }
      } catch (error) {
        if (stopped.aborted) throw error;
        failed.set(node, (error as Error).message);
        this.#options.logger.warn('a node did not give its code group\'s classes; another is asked', { peer: node, codeGroup: of, reason: (error as Error).message });
      }
    }
  }

  /** Answers a coordinator: never throws (a message it cannot read, or a connection closed meanwhile, is logged). */
  #answer(msg: Msg): void {
    const { nc, logger } = this.#options;
    void (async () => {
      let bytes: Uint8Array;
      try {
        const ask = decodeRecords(msg.data) as ChunkAsk;
        await caughtUp(this.#options.waitFor(ask.seq));
        const limit = replyLimit(nc);
        // Names far longer than usual: fewer methods per chunk until it fits.
        for (let methods = ask.methods; ; methods = Math.floor(methods / 2)) {
          bytes = encodeRecords(this.#chunk(ask, Math.max(1, methods)));
          if (bytes.length <= limit) break;
          if (methods <= 1) throw new Error(`a class's methods take ${bytes.length} bytes, over the largest reply the servers take (${limit})`);
        }
      } catch (error) {
        bytes = encodeRecords({ ok: false, message: (error as Error).message } satisfies ChunkAnswer);
      }
      if (!respond(msg, bytes)) logger.warn('a chunk of code classes could not be sent', { bytes: bytes.length });
    })();
  }

  #chunk(ask: ChunkAsk, methods: number): ChunkAnswer {
    const { store } = this.#options;
    if (this.#times?.reportId !== ask.reportId || ask.after === null) this.#times = { reportId: ask.reportId, times: new SlotTimes(store) };
    const { classes, last } = timedCode(store, ask.request, this.#times.times, null, null, { after: ask.after, methods });
    return { ok: true, classes: packRecords(classes), last };
  }

  close(): void {
    this.#subscription?.unsubscribe();
    if (this.#timer !== null) clearInterval(this.#timer);
  }
}
