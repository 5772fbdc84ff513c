// Entry point of a Piscina worker thread: runs report partitions and writes report pages.
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { threadId, workerData } from 'node:worker_threads';
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { Dictionary } from '../../storage/dictionary.ts';
import { openStore } from '../../storage/store.ts';
import type { Store } from '../../storage/store.ts';
import { rematchAll } from '../../storage/vulns.ts';
import { classesInKeyOrder, codeFinalize, codeItemsInKeyOrder, codePartition, encodeCode, encodeKeptCode, encodesRecords, readsWholeRecords, scanCode, timedCode } from './kernels/code.ts';
import { ClassRecords } from './kernels/class-records.ts';
import { CodeItemEncoder } from './kernels/code-items.ts';
import { SlotTimes } from '../../storage/code-times.ts';
import { packRecords, unpackRecords } from '../../msgpack-records.ts';
import type { ClassMethods } from './kernels/class-methods.ts';
import { classMethodsOf, TimedClassesBuilder, timedClassList } from './kernels/timed-classes.ts';
import type { TimedClasses } from './kernels/timed-classes.ts';
import { componentFinalize, componentPartition } from './kernels/component.ts';
import type { ComponentPartial } from './kernels/component.ts';
import type { KernelContext } from './kernels/kernel-context.ts';
import { RowOrder } from './kernels/row-order.ts';
import { RowShards } from './vm-shards.ts';
import { ComponentNames } from './kernels/component-names.ts';
import { jvmFinalize, jvmItemRuns, jvmItemsInDefaultOrder, jvmPartition } from './kernels/jvm.ts';
import { mergeJvmItems } from './kernels/jvm-items.ts';
import type { EncodedJvmItems } from './kernels/jvm-items.ts';
import type { JvmPartial } from './kernels/jvm.ts';
import { isCancelled, throwIfCancelled } from './cancel-flag.ts';
import { PagedItems, PageWriter, writeEncodedPages, writeItemPages } from './pages.ts';
import { ChunkedItems, transferablesOf } from './encoded-items.ts';
import type { EncodedItems } from './encoded-items.ts';
import type { FinalizeResult, FinalizeTask, FinishedPartition, FinishHere, PackedClasses, PartialResult, PartitionTask, WorkerData, WorkerTask } from './tasks.ts';
import type { ReportRequest } from './report-types.ts';

let opened: { store: Store; dict: Dictionary } | undefined;

/**
 * Each worker opens the same LMDB environment for what is not in the fleet columns (dictionary, components,
 * code): reads are snapshots of the store.
 */
function storeContext(): { store: Store; dict: Dictionary } {
  if (opened === undefined) {
    const store = openStore((workerData as WorkerData).dataDir);
    opened = { store, dict: new Dictionary(store) };
  }
  // A fresh read snapshot per task: see what was committed since the last one.
  opened.store.env.resetReadTxn();
  return opened;
}

/** What this thread keeps for its next reports: the fleet's rows in the ungrouped JVM report's order, their shards, component names, class records. */
const rowOrder = new RowOrder();
const rowShards = new RowShards();
const componentNames = new ComponentNames();
const classRecords = new ClassRecords();

let reportTimes: { reportId: string; times: SlotTimes } | null = null;

/**
 * The code times of the report's first partition in this thread, shared by its later ones: a method
 * changed since shows its times as of then (each partition reads its own snapshot anyway).
 */
function slotTimes(ctx: { store: Store }, reportId: string): SlotTimes {
  if (reportTimes?.reportId !== reportId) reportTimes = { reportId, times: new SlotTimes(ctx.store) };
  return reportTimes.times;
}

/** Piscina transfers the items' buffers to the service instead of cloning them. */
function moved(partial: EncodedItems[] | EncodedJvmItems): PartialResult {
  const chunks = 'kind' in partial ? [partial.items] : partial;
  return move({ [transferableSymbol]: chunks.flatMap(transferablesOf), [valueSymbol]: partial }) as unknown as PartialResult;
}

async function runPartition(task: PartitionTask): Promise<PartialResult | FinishedPartition> {
  // A slow partition that still notices a cancel, as a real one does between its steps.
  if (task.faults.includes('slow-partition')) for (let waited = 0; waited < 300 && !isCancelled(task.cancel); waited += 10) await sleep(10);
  if (task.faults.includes('partition-fail') && task.index === 1) throw new Error('test fault: partition 1 fails');
  throwIfCancelled(task.cancel);
  const { request, partition } = task;
  const opened = storeContext();
  const shards = partition.kind === 'rows' && partition.shards !== undefined ? rowShards.filter(partition.shards, task.fleet, opened.dict) : undefined;
  const ctx: KernelContext = { ...opened, fleet: task.fleet, rowOrder, ...(shards === undefined ? {} : { shards }) };
  // Checked once the kernel ran: a partition a timeout stopped meanwhile gives its result, and the job decides.
  const finishes = (): FinishHere | null => (task.finish !== undefined && !isCancelled(task.cancel) ? task.finish : null);
  if (partition.kind === 'keys') {
    const times = slotTimes(ctx, task.reportId);
    if (partition.classes === true) {
      // Merged with other nodes' classes by the thread that writes the pages: bytes cross to it, not objects.
      return { kind: 'packed-classes', chunks: [packRecords(groupClasses(ctx.store, request, times, partition))] };
    }
    if (!codeItemsInKeyOrder(request)) {
      const partial = codePartition(ctx, request, times, partition.start, partition.end);
      const finish = finishes();
      return finish === null ? partial : finishHere(ctx.store, task, finish, [partial]);
    }
    const withCount = request.groupBy.length === 3;
    if (task.finish !== undefined) {
      const pages = new PagedItems(ctx.store, task.reportId, task.finish.pageBytes, task.finish.reserve);
      const encoder = new CodeItemEncoder(withCount, pages);
      if (!encodesRecords(request)) {
        return streamPages(task, task.finish, pages, () => {
          scanCode(ctx.store, request, times, partition.start, partition.end, (cls) => encoder.add(cls));
          return true;
        });
      }
      // Each call stops once a page is full and resumes after the last class record it read. A report over
      // every class reads them from this thread's copy when no write changed them since, and otherwise
      // copies them for the next one as it reads them.
      const whole = partition.start === null && partition.end === null;
      const kept = whole ? classRecords.current(ctx.store) : null;
      if (kept !== null) {
        let next = 0;
        return streamPages(task, task.finish, pages, () => (next = encodeKeptCode(request, times, kept, encoder, next)) === -1);
      }
      const collector = whole ? classRecords.collect(ctx.store) : null;
      let after: string[] | null = null;
      return streamPages(task, task.finish, pages, () => {
        after = encodeCode(ctx.store, request, times, partition.start, partition.end, encoder, { after }, collector);
        if (after !== null) return false;
        collector?.done();
        return true;
      });
    }
    const chunks = new ChunkedItems();
    const encoder = new CodeItemEncoder(withCount, chunks);
    if (encodesRecords(request)) encodeCode(ctx.store, request, times, partition.start, partition.end, encoder);
    else scanCode(ctx.store, request, times, partition.start, partition.end, (cls) => encoder.add(cls));
    return moved(chunks.finish());
  }
  if (request.family === 'jvmInventory' && task.finish !== undefined && jvmItemsInDefaultOrder(request)) {
    const items = jvmItemRuns(ctx, request, partition.start, partition.end);
    const pages = new PagedItems(ctx.store, task.reportId, task.finish.pageBytes, task.finish.reserve);
    let from = 0;
    return streamPages(task, task.finish, pages, () => {
      const to = Math.min(items.count, from + RUN_ITEMS);
      items.encodeInto(pages, from, to);
      from = to;
      return to === items.count;
    });
  }
  const partial = request.family === 'jvmInventory' ? jvmPartition(ctx, request, partition.start, partition.end) : componentPartition(ctx, request, partition.start, partition.end);
  const finish = finishes();
  if (finish !== null) return finishHere(ctx.store, task, finish, [partial]);
  return 'kind' in partial && partial.kind === 'encoded' ? moved(partial) : partial;
}

/**
 * This node's code group's classes for a cluster's code report: all of them, from this thread's copy of
 * the class records when no write changed them since (read and copied otherwise), as a report of one node
 * reads its own.
 */
function groupClasses(store: Store, request: ReportRequest, times: SlotTimes, partition: { start: string[] | null; end: string[] | null }): TimedClasses {
  const whole = partition.start === null && partition.end === null && readsWholeRecords(request);
  const kept = whole ? classRecords.current(store) : null;
  if (kept === null) return timedCode(store, request, times, partition.start, partition.end, undefined, whole ? classRecords.collect(store) : null).classes;
  const builder = new TimedClassesBuilder();
  for (let next = 0; next !== -1; ) next = encodeKeptCode(request, times, kept, builder, next);
  return builder.finish();
}

/** The pages of a report whose only partition ran in this task. */
function finishHere(store: Store, task: PartitionTask, finish: FinishHere, partials: PartialResult[]): Promise<FinishedPartition> {
  return written(task, finish, async () => ({ result: await writeReport(store, task.reportId, task.request, partials, finish.pageBytes, finish.reserve, finish.cancel), stopped: false }));
}

/** Items of an ungrouped JVM report's only partition encoded per run: pages of one go to disk while the next is encoded. */
const RUN_ITEMS = 10_000;

/**
 * The pages of a report's only partition, written while it encodes: each `step` encodes more items into
 * `pages` (true once all are), then the pages it filled go to LMDB and the kernel yields a turn, since
 * lmdb-js commits a turn's writes when the turn ends. The time limit stops it after a step, with the items
 * so far in the pages; a cancel stops it and writes no more.
 */
function streamPages(task: PartitionTask, finish: FinishHere, pages: PagedItems, step: () => boolean): Promise<FinishedPartition> {
  return written(task, finish, async () => {
    try {
      let stopped = false;
      for (let done = false; !done && !stopped;) {
        done = step();
        await pages.write();
        await nextTurn();
        if (task.faults.includes('slow-pages')) await sleep(300);
        throwIfCancelled(finish.cancel);
        // The partitions' flag without the job's: the time limit.
        stopped = !done && isCancelled(task.cancel);
      }
      return { result: { ...(await pages.finish()), summary: null }, stopped };
    } catch (error) {
      // Nothing of the report may still be writing when the job deletes its pages.
      await pages.abandon();
      throw error;
    }
  });
}

/** What writing a report's pages in a partition task gave: a failure is a value, a cancel an error. */
async function written(task: PartitionTask, finish: FinishHere, write: () => Promise<{ result: FinalizeResult; stopped: boolean }>): Promise<FinishedPartition> {
  try {
    if (task.faults.includes('finalize-fail')) throw new Error('test fault: page writing fails');
    return { kind: 'finished', ...(await write()) };
  } catch (error) {
    // A cancelled job (deleted, shutting down) has no pages to write: the job sees the cancel.
    if (isCancelled(finish.cancel)) throw error;
    return { kind: 'finish-failed', message: (error as Error).message };
  }
}

async function runFinalize(task: FinalizeTask): Promise<FinalizeResult> {
  if (task.faults.includes('finalize-fail')) throw new Error('test fault: page writing fails');
  return writeReport(storeContext().store, task.reportId, task.request, task.partials, task.pageBytes, task.reserve, task.cancel);
}

/** A code group's partition's classes, chunk after chunk. */
function timedChunks(partial: PartialResult): TimedClasses[] {
  return (partial as PackedClasses).chunks.map((chunk) => unpackRecords(chunk) as TimedClasses);
}

/** A code partition's classes, as objects when a code group's partition gave them as bytes. */
function classMethods(partial: PartialResult): ClassMethods[] {
  if (!('kind' in partial && partial.kind === 'packed-classes')) return partial as ClassMethods[];
  return timedChunks(partial).flatMap(classMethodsOf);
}

/** Merges the partitions' results into the report's items in their final order and writes its pages. */
async function writeReport(store: Store, reportId: string, request: ReportRequest, partials: PartialResult[], pageBytes: number, reserve: number, cancel: Int32Array): Promise<FinalizeResult> {
  throwIfCancelled(cancel);
  let items: Record<string, unknown>[];
  if (request.family === 'jvmInventory') {
    const jvmPartials = partials as JvmPartial[];
    if (jvmPartials.length > 0 && jvmPartials.every((partial) => partial.kind === 'encoded')) {
      const merged = mergeJvmItems(jvmPartials as EncodedJvmItems[]);
      return { ...(await writeEncodedPages(store, reportId, pageBytes, reserve, [merged])), summary: null };
    }
    items = jvmFinalize(request, jvmPartials);
  } else if (request.family === 'codeInventory') {
    if (codeItemsInKeyOrder(request)) {
      // Partitions that gave classes (a cluster's code groups): their items encoded into pages in key order, as
      // the fast path's are, without an object per method.
      const pages = new PagedItems(store, reportId, pageBytes, reserve);
      const encoder = new CodeItemEncoder(request.groupBy.length === 3, pages);
      for (const cls of classesInKeyOrder(partials.map((partial) => timedClassList(timedChunks(partial))))) {
        encoder.addTimed(cls);
        if (!pages.ready) continue;
        await pages.write();
        throwIfCancelled(cancel);
      }
      return { ...(await pages.finish()), summary: null };
    }
    items = codeFinalize(request, partials.map(classMethods));
  } else {
    // Component items nest by their group fields; most are written as JSON, without objects.
    const result = componentFinalize(store, componentNames, request, partials as ComponentPartial[]);
    throwIfCancelled(cancel);
    const writer = new PageWriter(store, reportId, pageBytes, reserve, request.groupBy);
    await result.write(writer);
    return { ...(await writer.finish()), summary: result.summary };
  }
  throwIfCancelled(cancel);
  return { ...(await writeItemPages(store, reportId, pageBytes, reserve, items)), summary: null };
}

/** One task; its read snapshot ends with it. */
async function runTask(task: WorkerTask): Promise<unknown> {
  switch (task.kind) {
    case 'ping': {
      const { dict } = storeContext();
      if (task.shards !== undefined) rowShards.filter({ count: task.shards.count, of: [] }, task.shards.fleet, dict);
      return threadId;
    }
    case 'partition':
      return runPartition(task);
    case 'finalize':
      return runFinalize(task);
    case 'rematch':
      return rematchAll(storeContext().store, task.now);
  }
}

export default async function run(task: WorkerTask): Promise<unknown> {
  try {
    return await runTask(task);
  } finally {
    // An idle Piscina worker blocks in Atomics.wait, so lmdb-js's timer that ends a read snapshot never
    // fires: a snapshot kept open stops LMDB from reusing freed pages, and the file and its free list
    // grow with every write until each commit crawls (a 100k-VM ingest left 1.7 GB instead of 0.45 GB).
    opened?.store.env.resetReadTxn();
  }
}
