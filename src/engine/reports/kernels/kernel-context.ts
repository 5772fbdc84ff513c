// What a kernel reads: the worker's store handle and dictionary, and the task's view of the fleet columns.
import type { Dictionary } from '../../../storage/dictionary.ts';
import type { FleetColumnsView } from '../../../storage/fleet-columns.ts';
import type { Store } from '../../../storage/store.ts';

export interface KernelContext {
  store: Store;
  dict: Dictionary;
  /** The VM columns as the service held them when it sent the task. */
  fleet: FleetColumnsView;
}
