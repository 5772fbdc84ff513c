// The report model shared by the HTTP layer, the job queue and the workers (interface §2.3, decisions §6).
import type { PlannedCondition, SortKey } from '../../parser/index.ts';
import type { VmShards } from './vm-shards.ts';

export type ReportFamily = 'jvmInventory' | 'codeInventory' | 'component';
export type ReportState = 'PROCESSING' | 'SUCCEEDED' | 'FAILED' | 'PARTIALLY_FAILED' | 'TIMED_OUT';
export const FINAL_STATES: readonly ReportState[] = ['SUCCEEDED', 'FAILED', 'PARTIALLY_FAILED', 'TIMED_OUT'];

/**
 * A report request parsed and resolved once, at the edge: the plan. Plain JSON, so it is stored with the
 * report and sent to workers (or other nodes) as is; they bind it to their storage and never parse again.
 */
export interface ReportRequest {
  family: ReportFamily;
  /** The filter entries, ANDed, as planned conditions. */
  conditions: PlannedCondition[];
  /** The groupBy field names, validated. */
  groupBy: string[];
  sortBy: SortKey[];
  /** Resolved window in epoch ms: from/to (JVM, code) or startTime/endTime (component; `to` null = open). */
  from: number;
  to: number | null;
  detail: boolean;
  /** The request time: relative times and VM states are resolved against it, once. */
  now: number;
  offlineAfterMs: number;
}

export interface ReportError {
  code: string;
  message: string;
}

export interface ReportMeta {
  reportId: string;
  family: ReportFamily;
  state: ReportState;
  stateMessages: string[];
  errors: ReportError[];
  userId: string;
  reportName: string | null;
  /** The request body as sent, plus the resolved times (decisions §6). */
  params: Record<string, unknown>;
  request: ReportRequest;
  requestTime: number;
  startTime: number | null;
  finishTime: number | null;
  totalCount: number;
  totalPages: number;
  /** Component reports: distinct VMs and components of the filtered population (decisions §9). */
  summary: { vmCount: number; componentCount: number } | null;
  /** Cluster mode: the node that generates it (src/cluster/reports.ts); absent on a single node. */
  coordinator?: string;
  /** Cluster mode: how many times another node took it over (absent: none); names each claim in the log. */
  claims?: number;
}

/**
 * A slice of the work: a range of VM rows (in a cluster, only the VMs of some shards), or a range of code
 * keys; `classes`: the partition gives its classes (ClassMethods[]), never encoded items, as a cluster's
 * code groups do, whose classes interleave in key order (src/cluster/code-reports.ts).
 */
export type Partition =
  | { kind: 'rows'; start: number; end: number; shards?: VmShards }
  | { kind: 'keys'; start: string[] | null; end: string[] | null; classes?: true };

/** A value of a group field as it appears in report items. */
export type GroupValue = string | number | null;
