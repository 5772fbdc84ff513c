// The report job queue and lifecycle (decisions §6): PROCESSING → a final state, with timeout, cancel, recovery and expiry.
import { randomUUID } from 'node:crypto';
import type { Config } from '../../config.ts';
import type { Logger } from '../../log.ts';
import type { Store } from '../../storage/store.ts';
import type { FleetColumnsView } from '../../storage/fleet-columns.ts';
import { cancel, isCancelled, newCancelFlag } from './cancel-flag.ts';
import { envelopeReserve } from './envelope.ts';
import { codeItemsInKeyOrder, codePartitions, codeRecordCount } from './kernels/code.ts';
import { deletePages, EncodedPageWriter, writeEmptyPage, writeEncodedPages } from './pages.ts';
import type { WorkerPool } from './pool.ts';
import { plannedRequest } from './report-request.ts';
import type { ParsedReportRequest } from './report-request.ts';
import type { Partition, ReportError, ReportFamily, ReportMeta, ReportState } from './report-types.ts';
import { transferablesOf } from './encoded-items.ts';
import type { EncodedItems } from './encoded-items.ts';
import type { FinalizeResult, FinalizeTask, FinishedPartition, FinishHere, PartialResult, TestFault } from './tasks.ts';

/** decisions §6: at most this many jobs wait; beyond, 429. */
export const MAX_WAITING = 100;

/** A job the queue does not take: it is stopping (shutdown), or MAX_WAITING jobs wait already. */
export class JobRefused extends Error {
  readonly reason: 'stopped' | 'full';
  constructor(reason: 'stopped' | 'full') {
    super(reason === 'full' ? `${MAX_WAITING} report jobs are already waiting; retry later` : 'the service is not taking report jobs now');
    this.name = 'JobRefused';
    this.reason = reason;
  }
}
/** VM rows a partition takes at least: a small fleet is not worth splitting over the workers. */
const MIN_ROWS_PER_PARTITION = 10_000;
const KEYS_PER_PARTITION = 20_000;
const MAX_PARTITIONS = 64;
const DAY = 86_400_000;
const MAX_REPORT_ID = 64;
const SUCCEEDED_MESSAGE = 'report generated';

interface RunningJob {
  /** Aborted on delete and shutdown. */
  controller: AbortController;
  /** Set when the controller aborts: every worker task of the job stops at its next check. */
  cancelFlag: Int32Array;
  /** Set on abort and on timeout: partition tasks stop, while the pages of what was produced are still written. */
  partitionsFlag: Int32Array;
  /** Aborted with `partitionsFlag`: partitions run elsewhere (Placement) stop being waited for. */
  partitionsStopped: AbortController;
  cancelled: boolean;
  done: Promise<void>;
}

export interface JobsOptions {
  store: Store;
  pool: WorkerPool;
  /** The VM columns partitions scan, as of now (another process's writes included). */
  fleetView: () => FleetColumnsView;
  config: Config;
  clock: () => number;
  logger: Logger;
  /** Which unfinished reports this process re-runs at start (cluster mode: those it coordinates); default all. */
  runsHere?: (meta: ReportMeta) => boolean;
  /**
   * Where a finished report's record goes once its pages are stored: by default into the store. A cluster's
   * coordinator publishes pages and record, and the log stores the record on every node, itself included, in
   * the log's order: a node that took the report over before it wins everywhere (src/cluster/reports.ts).
   */
  finished?: (meta: ReportMeta) => Promise<void>;
  /** Cluster mode: where a report's partitions run, or null to run them here as a single node does. */
  place?: (meta: ReportMeta) => Promise<Placement | null>;
}

/** A report's partitions and how each runs: elsewhere, or with `here` in this process's pool. */
export interface Placement {
  partitions: Partition[];
  /** Resolves with partition `index`'s result; `stopped` aborts on cancel and timeout. */
  run(index: number, here: () => Promise<PartialResult>, stopped: AbortSignal): Promise<PartialResult>;
}

/** What the report routes need: a single node's job queue, or a cluster node's (src/cluster/reports.ts). */
export interface Reports {
  create(family: ReportFamily, parsed: ParsedReportRequest, userId: string): Promise<ReportMeta>;
  find(reportId: string, family: ReportFamily): ReportMeta | undefined;
  list(family: ReportFamily): ReportMeta[];
  delete(reportId: string, family: ReportFamily): Promise<boolean>;
}

export class ReportJobs implements Reports {
  readonly #store: Store;
  readonly #pool: WorkerPool;
  readonly #fleetView: () => FleetColumnsView;
  readonly #config: Config;
  readonly #clock: () => number;
  readonly #logger: Logger;
  readonly #waiting: string[] = [];
  readonly #running = new Map<string, RunningJob>();
  readonly #faults: TestFault[];
  readonly #runsHere: (meta: ReportMeta) => boolean;
  readonly #finished: (meta: ReportMeta) => Promise<void>;
  readonly #place: ((meta: ReportMeta) => Promise<Placement | null>) | undefined;
  /** Jobs accepted but not yet saved: they count against MAX_WAITING so concurrent POSTs cannot overfill it. */
  #reserved = 0;
  #accepting = false;
  #stopped = false;

  constructor(options: JobsOptions) {
    this.#store = options.store;
    this.#pool = options.pool;
    this.#fleetView = options.fleetView;
    this.#config = options.config;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#faults = options.config.testFaults as TestFault[];
    this.#runsHere = options.runsHere ?? (() => true);
    this.#finished = options.finished ?? ((meta) => this.#save(meta));
    this.#place = options.place;
  }

  /** Starts taking jobs; re-runs those left PROCESSING by a previous process (decisions §6). */
  async start(): Promise<void> {
    this.#accepting = true;
    const unfinished = [...this.#store.reports.getRange()].map(({ value }) => value as unknown as ReportMeta).filter((meta) => meta.state === 'PROCESSING' && this.#runsHere(meta));
    unfinished.sort((a, b) => a.requestTime - b.requestTime);
    for (const meta of unfinished) {
      const request = plannedRequest(meta.request);
      if (request !== meta.request) await this.#save({ ...meta, request });
      await deletePages(this.#store, meta.reportId);
      this.#waiting.push(meta.reportId);
    }
    if (unfinished.length > 0) this.#logger.info('re-running reports left unfinished', { count: unfinished.length });
    this.#pump();
  }

  /** Queues a report; throws JobRefused while not taking jobs or when MAX_WAITING wait already. */
  async create(family: ReportFamily, parsed: ParsedReportRequest, userId: string): Promise<ReportMeta> {
    const meta = this.newReport(family, parsed, userId);
    await this.accept(meta);
    return meta;
  }

  /** A new report's record, not yet stored; throws JobRefused while not taking jobs or when MAX_WAITING wait already. */
  newReport(family: ReportFamily, parsed: ParsedReportRequest, userId: string): ReportMeta {
    if (!this.#accepting) throw new JobRefused('stopped');
    if (this.#waiting.length + this.#reserved >= MAX_WAITING) throw new JobRefused('full');
    return {
      reportId: randomUUID(),
      family,
      state: 'PROCESSING',
      stateMessages: ['report generation is queued'],
      errors: [],
      userId,
      reportName: parsed.reportName,
      params: parsed.params,
      request: parsed.request,
      requestTime: parsed.request.now,
      startTime: null,
      finishTime: null,
      totalCount: 0,
      totalPages: 0,
      summary: null,
    };
  }

  /**
   * Stores a new report and queues it here; resolves once the record is on disk. The job may start as
   * soon as the record is committed, while the disk flush that the caller's answer waits for runs.
   */
  async accept(meta: ReportMeta): Promise<void> {
    this.#reserved++;
    try {
      await this.#store.reports.put(meta.reportId, meta as unknown as Record<string, unknown>);
    } finally {
      this.#reserved--;
    }
    this.#waiting.push(meta.reportId);
    this.#pump();
    await this.#store.env.flushed;
  }

  /** Stores a report's record as another node made it (cluster mode): its pages arrive separately, before its final state. */
  async record(meta: ReportMeta): Promise<void> {
    if (meta.state !== 'PROCESSING') await this.#store.pageFiles.sync(meta.reportId);
    await this.#save(meta);
  }

  /** A report this process now generates from scratch (cluster mode: its coordinator died). */
  async rerun(meta: ReportMeta): Promise<void> {
    await deletePages(this.#store, meta.reportId);
    await this.accept(meta);
  }

  /** The report of this family with this id, or undefined. */
  find(reportId: string, family: ReportFamily): ReportMeta | undefined {
    // Report ids are UUIDs: a longer one is not looked up (a key past LMDB's limit would throw).
    const meta = reportId.length <= MAX_REPORT_ID ? (this.#store.reports.get(reportId) as unknown as ReportMeta | undefined) : undefined;
    return meta?.family === family ? meta : undefined;
  }

  /**
   * A report another node generates now (cluster mode: it took the report over from this one, which the
   * membership had given up for gone): this node's job stops, and its pages go, as the other node's come.
   */
  async handOver(meta: ReportMeta): Promise<void> {
    await this.#cancel(meta.reportId);
    await this.#save(meta);
    await deletePages(this.#store, meta.reportId);
  }

  /** Deletes a report, a running one cancelled first (decisions §6); false when there is no such report. */
  async delete(reportId: string, family: ReportFamily): Promise<boolean> {
    if (this.find(reportId, family) === undefined) return false;
    await this.#cancel(reportId);
    await this.#remove(reportId);
    return true;
  }

  /** Takes a report out of the queue, or stops its job and waits until nothing of it runs. */
  async #cancel(reportId: string): Promise<void> {
    const waiting = this.#waiting.indexOf(reportId);
    if (waiting >= 0) this.#waiting.splice(waiting, 1);
    const running = this.#running.get(reportId);
    if (running !== undefined) {
      running.cancelled = true;
      running.controller.abort();
      await running.done;
    }
  }

  list(family: ReportFamily): ReportMeta[] {
    const reports: ReportMeta[] = [];
    for (const { value } of this.#store.reports.getRange()) {
      const meta = value as unknown as ReportMeta;
      if (meta.family === family) reports.push(meta);
    }
    return reports;
  }

  /** Deletes reports finished more than report-ttl-days ago. */
  async expire(): Promise<number> {
    const limit = this.#clock() - this.#config.reportTtlDays * DAY;
    const expired = this.list('jvmInventory').concat(this.list('codeInventory'), this.list('component')).filter((meta) => meta.finishTime !== null && meta.finishTime < limit);
    for (const meta of expired) await this.#remove(meta.reportId);
    return expired.length;
  }

  /** Refuses new jobs and stops running ones; they stay PROCESSING and re-run at the next start. */
  async stop(): Promise<void> {
    this.#accepting = false;
    this.#stopped = true;
    this.#waiting.length = 0;
    for (const job of this.#running.values()) job.controller.abort();
    await Promise.all([...this.#running.values()].map((job) => job.done));
  }

  get waiting(): number {
    return this.#waiting.length;
  }

  async #save(meta: ReportMeta): Promise<void> {
    await this.#store.reports.put(meta.reportId, meta as unknown as Record<string, unknown>);
    await this.#store.env.flushed;
  }

  async #remove(reportId: string): Promise<void> {
    await deletePages(this.#store, reportId);
    await this.#store.reports.remove(reportId);
  }

  #pump(): void {
    const slots = Math.max(1, this.#config.workers);
    while (!this.#stopped && this.#running.size < slots && this.#waiting.length > 0) {
      const reportId = this.#waiting.shift()!;
      const job: RunningJob = { controller: new AbortController(), cancelFlag: newCancelFlag(), partitionsFlag: newCancelFlag(), partitionsStopped: new AbortController(), cancelled: false, done: Promise.resolve() };
      job.controller.signal.addEventListener('abort', () => {
        cancel(job.cancelFlag);
        stopPartitions(job);
      }, { once: true });
      this.#running.set(reportId, job);
      job.done = this.#run(reportId, job)
        .catch((error: Error) => this.#logger.error('report job failed unexpectedly', { reportId, stack: error.stack }))
        .finally(() => {
          this.#running.delete(reportId);
          this.#pump();
        });
    }
  }

  #partitions(meta: ReportMeta): Partition[] {
    if (meta.family === 'codeInventory') {
      // With one worker, partitions would run one after the other: one partition streams its pages instead.
      const perPartition = this.#config.testPartitionSize || (this.#config.workers === 1 ? Number.POSITIVE_INFINITY : KEYS_PER_PARTITION);
      const count = Math.min(MAX_PARTITIONS, Math.max(1, Math.ceil(codeRecordCount(this.#store, meta.request) / perPartition)));
      return codePartitions(this.#store, meta.request, count).map((range) => ({ kind: 'keys', ...range }));
    }
    const rows = (this.#store.meta.get('rowNext') as number | undefined) ?? 0;
    // One partition per worker: more would run one after the other, each result crossing to the service and
    // back to be merged (a component report of 1M VMs by host in ten partitions merged 400k groups, 1.3 s
    // and 300 MB more); with one worker, one partition writes the pages itself.
    let count = this.#config.testPartitionSize
      ? Math.min(MAX_PARTITIONS, Math.max(1, Math.ceil(rows / this.#config.testPartitionSize)))
      : Math.min(MAX_PARTITIONS, this.#config.workers, Math.max(1, Math.ceil(rows / MIN_ROWS_PER_PARTITION)));
    // The partition fault needs a partition 1 to fail.
    if (this.#faults.includes('partition-fail')) count = Math.max(count, 2);
    const size = Math.max(1, Math.ceil(rows / count));
    return Array.from({ length: count }, (_, k) => ({ kind: 'rows', start: k * size, end: (k + 1) * size }));
  }

  async #run(reportId: string, job: RunningJob): Promise<void> {
    const stored = this.#store.reports.get(reportId) as unknown as ReportMeta | undefined;
    if (stored === undefined) return;
    let meta: ReportMeta = { ...stored, startTime: this.#clock(), stateMessages: ['report generation is running'] };
    // Where a report's time goes, logged when it finishes (issue 14's profile, kept for operators).
    const phases: Record<string, number> = {};
    let phaseStart = performance.now();
    const phase = (name: string): void => {
      const now = performance.now();
      phases[name] = Math.round((now - phaseStart) * 10) / 10;
      phaseStart = now;
    };
    // Not awaited: the record is PROCESSING since accept() saved it, so its start time may commit while the
    // partitions run (an fsync off the report's path). A failure shows in the final save, which commits after.
    // Stamped on the record as the write transaction finds it: one written meanwhile (a cluster's log applying
    // another node's claim or record of it) is not put back to what was read above.
    this.#store.env.transaction(() => {
      const current = this.#store.reports.get(reportId) as unknown as ReportMeta | undefined;
      if (current?.state === 'PROCESSING' && current.coordinator === stored.coordinator) {
        this.#store.reports.put(reportId, { ...current, startTime: meta.startTime, stateMessages: meta.stateMessages } as unknown as Record<string, unknown>);
      }
    }).catch(() => undefined);
    const placement = await this.#placement(meta);
    const partitions = placement?.partitions ?? this.#partitions(meta);
    // A report's only partition writes the pages itself, under a success's envelope or a timeout's (the
    // limit may stop it while it writes them). With several, the code report's fast path cuts pages here as
    // they finish, under the envelope of a report that succeeds, so that disk writes overlap the partitions
    // still running.
    const finish: FinishHere | undefined = placement === null && partitions.length === 1
      ? { pageBytes: this.#config.pageBytes, reserve: Math.max(envelopeReserve(succeeded(meta)), envelopeReserve(this.#timedOut(meta, STOPPED_WRITING, []))), cancel: job.cancelFlag }
      : undefined;
    // Partitions placed elsewhere (a cluster's code groups) give classes, which merge before pages are cut.
    const early = finish === undefined && placement === null && codeItemsEncoded(meta)
      ? { writer: new EncodedPageWriter(this.#store, reportId, this.#config.pageBytes, envelopeReserve(succeeded(meta))), consumed: Promise.resolve() }
      : null;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      stopPartitions(job);
    }, this.#config.reportTimeoutMs);
    try {
      const outcomes = await this.#runPartitions(meta, partitions, placement, job, finish, early === null ? null : (partial) => {
        early.consumed = early.consumed.then(async () => {
          for (const chunk of partial as EncodedItems[]) await early.writer.add(chunk);
        });
        // Awaited in #writePages; until then a failed cut must not count as unhandled.
        early.consumed.catch(() => undefined);
      });
      clearTimeout(timer);
      if (job.cancelled || (this.#stopped && !timedOut)) return;
      const only = outcomes.length === 1 && outcomes[0].status === 'fulfilled' ? outcomes[0].value : null;
      if (only !== null && 'kind' in only && (only.kind === 'finished' || only.kind === 'finish-failed')) {
        if (only.kind === 'finish-failed') meta = await this.#failedPages(meta, [], new Error(only.message));
        else {
          const ended = only.stopped ? this.#timedOut(meta, STOPPED_WRITING, []) : succeeded(meta);
          meta = { ...ended, totalCount: only.result.totalCount, totalPages: only.result.totalPages, summary: only.result.summary };
        }
        phase('partitionsAndPagesMs');
        return await this.#finish(meta, partitions.length, phases, phase);
      }
      phase('partitionsMs');
      const partials = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value as PartialResult] : []));
      const failures = outcomes.flatMap((outcome, index) => (outcome.status === 'rejected' && !isCancelled(job.partitionsFlag) ? [{ index, reason: outcome.reason as Error }] : []));
      const errors: ReportError[] = failures.map(({ index, reason }) => ({ code: 'PARTITION_FAILED', message: `partition ${index + 1} of ${partitions.length} failed: ${reason.message}` }));
      for (const { index, reason } of failures) this.#logger.error('report partition failed', { reportId, partition: index, stack: reason.stack });
      let state: ReportState;
      const messages: string[] = [];
      if (timedOut) {
        state = 'TIMED_OUT';
        const ended = this.#timedOut(meta, `${partials.length} of ${partitions.length} partitions finished and their data is in the pages`, errors);
        errors.splice(0, errors.length, ...ended.errors);
        messages.push(...ended.stateMessages);
      } else if (failures.length === partitions.length) {
        state = 'FAILED';
        messages.push('report generation failed: no partition finished');
      } else if (failures.length > 0) {
        state = 'PARTIALLY_FAILED';
        messages.push(`${failures.length} of ${partitions.length} partitions failed; the pages hold the data of the others`);
      } else {
        state = 'SUCCEEDED';
        messages.push(SUCCEEDED_MESSAGE);
      }
      meta = { ...meta, state, errors, stateMessages: messages };
      if (state === 'FAILED') {
        await writeEmptyPage(this.#store, reportId);
        meta.totalPages = 1;
      } else {
        try {
          const result = await this.#writePages(meta, partials, early, job.cancelFlag);
          phase('mergeSortPagesMs');
          meta = { ...meta, totalCount: result.totalCount, totalPages: result.totalPages, summary: result.summary };
        } catch (error) {
          if (job.cancelled) return;
          if (early !== null) await settle(early);
          meta = await this.#failedPages(meta, errors, error as Error);
        }
      }
      if (job.cancelled) return;
      await this.#finish(meta, partitions.length, phases, phase);
    } finally {
      clearTimeout(timer);
      // Nothing of this job may still be writing when it is over: a delete or a re-run removes its pages next.
      if (early !== null) await settle(early);
    }
  }

  /** The report as it ends when the time limit stopped it; `produced` says what its pages hold. */
  #timedOut(meta: ReportMeta, produced: string, errors: readonly ReportError[]): ReportMeta {
    const limit = this.#config.reportTimeoutMs;
    return { ...meta, state: 'TIMED_OUT', errors: [...errors, { code: 'TIMED_OUT', message: `generation took longer than ${limit} ms` }], stateMessages: [`timed out after ${limit} ms; ${produced}`] };
  }

  /** A report whose pages could not be written: FAILED, with one empty page. */
  async #failedPages(meta: ReportMeta, errors: ReportError[], error: Error): Promise<ReportMeta> {
    this.#logger.error('report pages could not be written', { reportId: meta.reportId, stack: error.stack });
    await deletePages(this.#store, meta.reportId);
    await writeEmptyPage(this.#store, meta.reportId);
    return { ...meta, state: 'FAILED', totalCount: 0, totalPages: 1, summary: null, errors: [...errors, { code: 'GENERATION_FAILED', message: error.message }], stateMessages: ['report generation failed while writing pages'] };
  }

  /** Stores a report's final record (its pages are stored) and logs where its time went. */
  async #finish(meta: ReportMeta, partitions: number, phases: Record<string, number>, phase: (name: string) => void): Promise<void> {
    meta.finishTime = this.#clock();
    await this.#store.pageFiles.sync(meta.reportId);
    await this.#finished(meta);
    phase('finishSaveMs');
    this.#logger.info('report finished', { reportId: meta.reportId, family: meta.family, state: meta.state, queuedMs: meta.startTime! - meta.requestTime, partitions, ...phases });
  }

  /**
   * Runs every partition as a pool task; `ready`, when given, gets the results in partition order as soon
   * as all before them have settled (a failed partition is skipped).
   */
  async #runPartitions(meta: ReportMeta, partitions: readonly Partition[], placement: Placement | null, job: RunningJob, finish: FinishHere | undefined, ready: ((partial: PartialResult) => void) | null): Promise<PromiseSettledResult<PartitionOutcome>[]> {
    const outcomes: (PromiseSettledResult<PartitionOutcome> | undefined)[] = new Array(partitions.length);
    let next = 0;
    // One view for every partition: they all scan the same state of the fleet.
    const fleet = this.#fleetView();
    const settled = (index: number, outcome: PromiseSettledResult<PartitionOutcome>) => {
      outcomes[index] = outcome;
      for (let done = outcomes[next]; done !== undefined; done = outcomes[++next]) if (done.status === 'fulfilled') ready?.(done.value as PartialResult);
    };
    const here = (partition: Partition, index: number) => () =>
      this.#pool.run<PartitionOutcome>({ kind: 'partition', reportId: meta.reportId, request: meta.request, partition, fleet, index, faults: this.#faults, cancel: job.partitionsFlag, ...(finish === undefined ? {} : { finish }) });
    await Promise.all(
      partitions.map((partition, index) =>
        (placement === null ? here(partition, index)() : placement.run(index, here(partition, index) as () => Promise<PartialResult>, job.partitionsStopped.signal)).then(
          (value) => settled(index, { status: 'fulfilled', value }),
          (reason: unknown) => settled(index, { status: 'rejected', reason }),
        ),
      ),
    );
    return outcomes as PromiseSettledResult<PartitionOutcome>[];
  }

  /** Where the report's partitions run when not all in this process (cluster mode); null when they do. */
  async #placement(meta: ReportMeta): Promise<Placement | null> {
    if (this.#place === undefined) return null;
    try {
      return await this.#place(meta);
    } catch (error) {
      this.#logger.warn('placing a report\'s partitions failed; it runs here', { reportId: meta.reportId, reason: (error as Error).message });
      return null;
    }
  }

  /** The pages of a finished report: cut already (the code fast path), or by a final task in the pool. */
  async #writePages(meta: ReportMeta, partials: PartialResult[], early: EarlyPages | null, cancelFlag: Int32Array): Promise<FinalizeResult> {
    const only = partials.length === 1 ? partials[0] : null;
    if (early === null && only !== null && 'kind' in only && only.kind === 'encoded') {
      if (this.#faults.includes('finalize-fail')) throw new Error('test fault: page writing fails');
      // One partition's items are in their final order already: pages are cut here from its bytes, as the
      // code report's are, without a round trip to a worker.
      return { ...(await writeEncodedPages(this.#store, meta.reportId, this.#config.pageBytes, envelopeReserve(meta), [only.items])), summary: null };
    }
    if (early === null) {
      const task: FinalizeTask = { kind: 'finalize', reportId: meta.reportId, request: meta.request, partials, pageBytes: this.#config.pageBytes, reserve: envelopeReserve(meta), faults: this.#faults, cancel: cancelFlag };
      // Encoded items move to the finalizing thread rather than being copied there.
      const transfers = partials.flatMap((partial) => ('kind' in partial && partial.kind === 'encoded' ? transferablesOf(partial.items) : []));
      return this.#pool.run<FinalizeResult>(task, transfers);
    }
    if (this.#faults.includes('finalize-fail')) throw new Error('test fault: page writing fails');
    await early.consumed;
    if (meta.state === 'SUCCEEDED') return { ...(await early.writer.finish()), summary: null };
    // Its envelope (errors, messages) is not a success's: cut the pages again under its own.
    await settle(early);
    await deletePages(this.#store, meta.reportId);
    return { ...(await writeEncodedPages(this.#store, meta.reportId, this.#config.pageBytes, envelopeReserve(meta), (partials as EncodedItems[][]).flat())), summary: null };
  }
}

function stopPartitions(job: RunningJob): void {
  cancel(job.partitionsFlag);
  job.partitionsStopped.abort();
}

/** A partition's result, or with `finish` the report's pages. */
type PartitionOutcome = PartialResult | FinishedPartition;

/** Pages cut while the partitions run, and the chain of cuts still to finish. */
interface EarlyPages {
  writer: EncodedPageWriter;
  consumed: Promise<void>;
}

/** Lets cuts and page writes in flight finish, whatever their outcome, and starts no more. */
async function settle(early: EarlyPages): Promise<void> {
  await early.consumed.catch(() => undefined);
  await early.writer.abandon();
}

/** What a timed-out report's pages hold when its only partition was stopped while writing them. */
const STOPPED_WRITING = 'the pages hold the items written before the limit';

/** Whether the report's partitions give its items encoded in their final order (the code report's fast path). */
function codeItemsEncoded(meta: ReportMeta): boolean {
  return meta.family === 'codeInventory' && codeItemsInKeyOrder(meta.request);
}

/** The report as it ends when every partition succeeds: the envelope fast-path pages are cut under. */
function succeeded(meta: ReportMeta): ReportMeta {
  return { ...meta, state: 'SUCCEEDED', errors: [], stateMessages: [SUCCEEDED_MESSAGE] };
}
