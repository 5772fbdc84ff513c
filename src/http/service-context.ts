// What route handlers are given: the store, configuration, clock and shared service state.
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import type { Dictionary } from '../storage/dictionary.ts';
import type { Liveness } from '../storage/liveness.ts';
import type { Store } from '../storage/store.ts';
import type { Writes } from '../writes.ts';
import type { InstanceCache } from './routes/instance-body.ts';
import type { Metrics } from './metrics.ts';
import type { Readiness } from './readiness.ts';

export interface ServiceContext {
  config: Config;
  store: Store;
  dict: Dictionary;
  instances: InstanceCache;
  clock: () => number;
  logger: Logger;
  metrics: Metrics;
  readiness: Readiness;
  liveness: Liveness;
  /** Agent batches and tag edits: into this node's store, or through the cluster's log. */
  writes: Writes;
}
