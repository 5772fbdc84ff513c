// The messages between the service and its worker threads.
import type { ComponentPartial } from './kernels/component.ts';
import type { EncodedItems } from './encoded-items.ts';
import type { FleetColumnsView } from '../../storage/fleet-columns.ts';
import type { ClassMethods } from './kernels/class-methods.ts';
import type { JvmPartial } from './kernels/jvm.ts';
import type { Partition, ReportRequest } from './report-types.ts';

export interface WorkerData {
  dataDir: string;
}

export interface PingTask {
  kind: 'ping';
  /** Cluster mode: the thread hashes the fleet's rows into their shards now, not in its first report. */
  shards?: { fleet: FleetColumnsView; count: number };
}

/**
 * Test-only faults (`--test-faults`, never set in production): `partition-fail` fails partition 1,
 * `finalize-fail` fails page writing, `slow-partition` makes every partition take 300 ms more, `slow-pages`
 * makes a report's only partition take 300 ms more after each run of pages it writes.
 */
export type TestFault = 'partition-fail' | 'finalize-fail' | 'slow-partition' | 'slow-pages';

export interface PartitionTask {
  kind: 'partition';
  reportId: string;
  request: ReportRequest;
  partition: Partition;
  /** The VM columns to scan (shared memory; row partitions only read them). */
  fleet: FleetColumnsView;
  index: number;
  faults: TestFault[];
  /** The job's cancel flag (cancel-flag.ts), shared memory the task checks between steps. */
  cancel: Int32Array;
  /** Set on a report's only partition: the task writes the pages itself once the partition is done. */
  finish?: FinishHere;
}

/**
 * How the only partition finishes its report: its results go straight to pages in the thread that holds
 * them, with no second task and no copy of them between threads. `cancel` is the job's own flag, which a
 * timeout does not set: like a finalize task, writing pages is not timed.
 */
export interface FinishHere {
  pageBytes: number;
  /** JSON bytes the envelope of a successful report may take. */
  reserve: number;
  cancel: Int32Array;
}

/**
 * What a task with `finish` gives: the pages written (`stopped`: the time limit stopped the partition while
 * it wrote them, which hold the items before it), or why writing them failed. A partition that a timeout
 * stopped before it wrote pages gives its partial result instead, and the job finishes the report as for
 * several partitions.
 */
export type FinishedPartition = { kind: 'finished'; result: FinalizeResult; stopped: boolean } | { kind: 'finish-failed'; message: string };

/**
 * A code group's classes in a cluster's code report (src/cluster/code-reports.ts), this node's or as another
 * node gave them: chunks of TimedClasses (kernels/timed-classes.ts) packed as msgpack records
 * (src/msgpack-records.ts), unpacked by the thread that writes the pages, which copies each method's name
 * from their bytes into the pages: no thread makes an object per method.
 */
export interface PackedClasses {
  kind: 'packed-classes';
  chunks: Uint8Array[];
}

/**
 * ClassMethods[] from a code partition that sorts or groups (PackedClasses from a code group's), EncodedItems[]
 * (chunks, in order) from one that gives final items.
 */
export type PartialResult = JvmPartial | ComponentPartial | ClassMethods[] | PackedClasses | EncodedItems[];

export interface FinalizeTask {
  kind: 'finalize';
  reportId: string;
  request: ReportRequest;
  /** Results of the partitions that succeeded, in partition order. */
  partials: PartialResult[];
  pageBytes: number;
  /** JSON bytes the envelope around a page's data may take. */
  reserve: number;
  faults: TestFault[];
  cancel: Int32Array;
}

export interface FinalizeResult {
  totalCount: number;
  totalPages: number;
  summary: { vmCount: number; componentCount: number } | null;
}

/** Re-matches every component against the stored vulnerabilities (after an import). */
export interface RematchTask {
  kind: 'rematch';
  now: number;
}

export type WorkerTask = PingTask | PartitionTask | FinalizeTask | RematchTask;
