// Entry point of a Piscina worker thread: dispatches tasks by kind.
import { workerData } from 'node:worker_threads';
import { openStore } from '../storage/store.ts';
import type { Store } from '../storage/store.ts';
import type { WorkerData, WorkerTask } from './tasks.ts';

let store: Store | undefined;

/** Each worker opens the same LMDB environment: reads are zero-copy snapshots, no data crosses threads. */
function workerStore(): Store {
  store ??= openStore((workerData as WorkerData).dataDir);
  return store;
}

export default async function run(task: WorkerTask): Promise<unknown> {
  switch (task.kind) {
    case 'ping':
      workerStore();
      return 'pong';
  }
}
