// Cancelling a report's worker tasks without terminating a thread. Piscina's abort signal terminates a
// worker that is running the task; a thread terminated inside LMDB's native code aborts the whole process
// (napi_throw FATAL ERROR) or leaves LMDB's write lock held. So a job shares one flag with its tasks, and
// a task checks it at each step: a queued task ends at once, a running one at its next check.

/** Thrown in a worker thread by a task whose job was cancelled. */
export class TaskCancelled extends Error {
  constructor() {
    super('report cancelled');
    this.name = 'TaskCancelled';
  }
}

/** One Int32 in shared memory: 0 while the job runs, 1 once it is cancelled. */
export function newCancelFlag(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(4));
}

export function cancel(flag: Int32Array): void {
  Atomics.store(flag, 0, 1);
}

export function isCancelled(flag: Int32Array): boolean {
  return Atomics.load(flag, 0) !== 0;
}

export function throwIfCancelled(flag: Int32Array): void {
  if (isCancelled(flag)) throw new TaskCancelled();
}
