// What a kernel reads: the worker's store handle and dictionary, the task's view of the fleet columns, and
// what the worker keeps between tasks.
import type { Dictionary } from '../../../storage/dictionary.ts';
import type { FleetColumnsView } from '../../../storage/fleet-columns.ts';
import type { Store } from '../../../storage/store.ts';
import type { RowOrder } from './row-order.ts';
import type { ShardFilter } from '../vm-shards.ts';

export interface KernelContext {
  store: Store;
  dict: Dictionary;
  /** The VM columns as the service held them when it sent the task. */
  fleet: FleetColumnsView;
  /** The thread's kept order of the fleet's rows for the ungrouped JVM report. */
  rowOrder: RowOrder;
  /** In a cluster's fanned-out report: only the VMs of some shards count (the others are absent rows). */
  shards?: ShardFilter;
}
