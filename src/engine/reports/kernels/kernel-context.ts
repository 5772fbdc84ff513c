// What a kernel reads: the worker's store handle and dictionary.
import type { Dictionary } from '../../../storage/dictionary.ts';
import type { Store } from '../../../storage/store.ts';

export interface KernelContext {
  store: Store;
  dict: Dictionary;
}
