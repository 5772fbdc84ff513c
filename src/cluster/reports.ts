// Reports in a cluster: the node that takes the POST coordinates it (generates it with the existing engine)
// and publishes its pages and final record through the log, so every node serves the same pages.
import type { ReportJobs, Reports } from '../engine/reports/jobs.ts';
import type { ParsedReportRequest } from '../engine/reports/report-request.ts';
import type { ReportFamily, ReportMeta } from '../engine/reports/report-types.ts';
import { putPage } from '../engine/reports/pages.ts';
import type { Logger } from '../log.ts';
import type { Store } from '../storage/store.ts';
import type { Command } from './commands.ts';
import { CommandTooLargeError } from './log.ts';
import type { Membership } from './membership.ts';

const PUBLISH_RETRY_MS = 1_000;
/** Pages published before the first of them is acknowledged. */
const PAGES_IN_FLIGHT = 4;
const TAKEOVER_CHECK_MS = 5_000;

export interface ClusterReportsOptions {
  nodeId: string;
  /** Appends to the cluster's log; resolves with the sequence (src/cluster/log.ts, `append`). */
  append: (command: Command, msgId?: string, notForNode?: string) => Promise<number>;
  store: Store;
  logger: Logger;
  /** Resolves once this node applied the log up to `seq`. */
  waitFor: (seq: number) => Promise<void>;
}


/**
 * The log's message id of a claim of `meta` as stored now: one per takeover, as a node asks again each round
 * until its claim is applied and only one of two nodes claiming at once should get in (the nodes apply the
 * first copy of an id the log holds, applied-ids.ts); and a new one once a claim was applied, as a report
 * taken back and forth would otherwise have its third claim skipped as a copy of its first.
 */
export function claimId(meta: Pick<ReportMeta, 'reportId' | 'claims'>): string {
  return `claim.${meta.reportId}.${meta.claims ?? 0}`;
}

/** A report as a claim by `coordinator` leaves it: generated there, one takeover more. */
export function claimedBy(meta: ReportMeta, coordinator: string): ReportMeta {
  return { ...meta, coordinator, claims: (meta.claims ?? 0) + 1 };
}

export class ClusterReports implements Reports {
  readonly #options: ClusterReportsOptions;
  #jobs: ReportJobs | null = null;
  #membership: Membership | null = null;
  #timer: ReturnType<typeof setInterval> | null = null;
  #closed = false;

  constructor(options: ClusterReportsOptions) {
    this.#options = options;
  }

  /** The job queue this node generates its reports with; reports are only taken over once both are known. */
  attach(jobs: ReportJobs, membership: Membership): void {
    this.#jobs = jobs;
    this.#membership = membership;
    // It fails while JetStream elects a leader after a server died (a timeout every few seconds): said once per try, without a stack.
    this.#timer = setInterval(() => this.#takeOver().catch((error: Error) => this.#options.logger.warn('report takeover failed; it is tried again', { reason: error.message })), TAKEOVER_CHECK_MS);
    this.#timer.unref();
  }

  get #queue(): ReportJobs {
    if (this.#jobs === null) throw new Error('cluster reports used before the job queue was attached');
    return this.#jobs;
  }

  /** Reports this node re-runs after a restart: the ones it coordinates. */
  runsHere(meta: ReportMeta): boolean {
    return meta.coordinator === this.#options.nodeId;
  }

  async create(family: ReportFamily, parsed: ParsedReportRequest, userId: string): Promise<ReportMeta> {
    const meta: ReportMeta = { ...this.#queue.newReport(family, parsed, userId), coordinator: this.#options.nodeId };
    await this.#options.waitFor(await this.#options.append({ kind: 'report.create', meta }));
    return meta;
  }

  find(reportId: string, family: ReportFamily): ReportMeta | undefined {
    return this.#queue.find(reportId, family);
  }

  list(family: ReportFamily): ReportMeta[] {
    return this.#queue.list(family);
  }

  async delete(reportId: string, family: ReportFamily): Promise<boolean> {
    if (this.find(reportId, family) === undefined) return false;
    await this.#options.waitFor(await this.#options.append({ kind: 'report.delete', reportId }));
    return true;
  }

  /**
   * Called by the job queue on the coordinator: its pages, then its final record, go to every node. Up to
   * PAGES_IN_FLIGHT pages at a time, the next one read meanwhile (a report's pages may be hundreds of
   * megabytes): each page waits for JetStream's quorum, and the other nodes write several at once.
   */
  async publishFinished(meta: ReportMeta): Promise<void> {
    const { store, append } = this.#options;
    const read = (index: number) => (index < meta.totalPages ? store.pageFiles.json(meta.reportId, index) : Promise.resolve(undefined));
    const msgId = (index: number) => `${meta.reportId}.${meta.startTime}.${index}`;
    const publishing: Promise<boolean>[] = [];
    let reading = read(0);
    for (let index = 0; index < meta.totalPages; index++) {
      const json = await reading;
      reading = read(index + 1);
      // Settled by the next turn, or left when this one returns early.
      reading.catch(() => undefined);
      // A page gone: the report was deleted meanwhile.
      if (json === undefined) return;
      publishing.push(this.#published(meta, () => this.#appendPage(meta.reportId, index, json, 0, msgId(index))));
      if (publishing.length >= PAGES_IN_FLIGHT && !(await publishing.shift()!)) return;
    }
    for (const page of publishing) if (!(await page)) return;
    await this.#published(meta, () => append({ kind: 'report.final', meta }, msgId(meta.totalPages)));
  }

  /**
   * Retries `publish` until the log takes it (a report's pages must reach every node, or the others serve it
   * PROCESSING); false, never a rejection, once the report needs it no more: deleted meanwhile (the delete came
   * through the log and was applied here), taken over by another node, or this node closing.
   */
  async #published(meta: ReportMeta, publish: () => Promise<unknown>): Promise<boolean> {
    for (;;) {
      if (this.#closed || this.#stored(meta.reportId)?.coordinator !== this.#options.nodeId) return false;
      try {
        await publish();
        return true;
      } catch (error) {
        this.#options.logger.warn('publishing a finished report failed; retrying', { reportId: meta.reportId, reason: (error as Error).message });
        await new Promise((resolve) => setTimeout(resolve, PUBLISH_RETRY_MS));
      }
    }
  }

  /**
   * Appends a page's bytes from `offset` on: whole, or in consecutive halves where one message would exceed
   * the servers' max_payload even deflated (NATS's default is 1 MiB, a page up to 5.5 MB).
   */
  async #appendPage(reportId: string, page: number, json: Uint8Array, offset: number, msgId: string): Promise<void> {
    try {
      // The coordinator wrote its pages itself: it skips them unread.
      const { nodeId } = this.#options;
      await this.#options.append({ kind: 'report.page', reportId, page, json, coordinator: nodeId, ...(offset === 0 ? {} : { offset }) }, `${msgId}.${offset}`, nodeId);
    } catch (error) {
      if (!(error instanceof CommandTooLargeError) || json.length < 2) throw error;
      const middle = json.length >> 1;
      await this.#appendPage(reportId, page, json.subarray(0, middle), offset, msgId);
      await this.#appendPage(reportId, page, json.subarray(middle), offset + middle, msgId);
    }
  }

  /** Applies a report command from the log to this node's store. */
  async apply(command: Command): Promise<void> {
    const jobs = this.#queue;
    const self = this.#options.nodeId;
    switch (command.kind) {
      case 'report.create': {
        // Applied again after a restart: the record is there already (and may be finished).
        if (this.#stored(command.meta.reportId) !== undefined) return;
        if (command.meta.coordinator === self) await jobs.accept(command.meta);
        else await jobs.record(command.meta);
        return;
      }
      case 'report.page': {
        const stored = this.#stored(command.reportId);
        // The coordinator wrote its pages itself; a deleted report takes no pages, nor one taken over since
        // from the node that generated them (it was given up for gone, and went on).
        if (stored === undefined || stored.coordinator === self) return;
        if (command.coordinator !== undefined && command.coordinator !== stored.coordinator) return;
        await putPage(this.#options.store, command.reportId, command.page, command.json, command.offset);
        return;
      }
      case 'report.final': {
        // The coordinator's own too: it stores its final record as the log orders it (ReportJobs `finished`).
        const stored = this.#stored(command.meta.reportId);
        if (stored === undefined || stored.coordinator !== command.meta.coordinator) return;
        await jobs.record(command.meta);
        return;
      }
      case 'report.claim': {
        const stored = this.#stored(command.reportId);
        if (stored === undefined || stored.state !== 'PROCESSING') return;
        const meta = claimedBy(stored, command.coordinator);
        if (command.coordinator === self) await jobs.rerun(meta);
        else await jobs.handOver(meta);
        return;
      }
      case 'report.delete': {
        const stored = this.#stored(command.reportId);
        if (stored !== undefined) await jobs.delete(command.reportId, stored.family);
        return;
      }
      default:
        throw new Error(`not a report command: ${command.kind}`);
    }
  }

  #stored(reportId: string): ReportMeta | undefined {
    return this.#options.store.reports.get(reportId) as unknown as ReportMeta | undefined;
  }

  /** The lowest live node claims the unfinished reports of coordinators that are gone (not connected, or their heartbeat expired). */
  async #takeOver(): Promise<void> {
    if (this.#membership === null) return;
    const live = await this.#membership.connected();
    if (live[0] !== this.#options.nodeId) return;
    for (const { value } of this.#options.store.reports.getRange()) {
      const meta = value as unknown as ReportMeta;
      if (meta.state !== 'PROCESSING' || meta.coordinator === undefined || live.includes(meta.coordinator)) continue;
      this.#options.logger.info('taking over a report whose coordinator left', { reportId: meta.reportId, coordinator: meta.coordinator });
      await this.#options.append({ kind: 'report.claim', reportId: meta.reportId, coordinator: this.#options.nodeId }, claimId(meta));
    }
  }

  close(): void {
    this.#closed = true;
    if (this.#timer !== null) clearInterval(this.#timer);
  }
}
