// Bounded waits of the requests between nodes: a node that is slow or gone costs a bounded delay, and a
// report that stops does not wait for its requests.

/** A node still catching up on the log declines rather than keep the coordinator waiting. */
const CATCH_UP_MS = 2_000;
/** The longest a coordinator waits to read the membership (JetStream may be electing a leader). */
const MEMBERSHIP_WAIT_MS = 2_000;

/** `members`, or an error once the membership took MEMBERSHIP_WAIT_MS to answer. */
export function membershipWithin<T>(members: Promise<T>): Promise<T> {
  return within(members, MEMBERSHIP_WAIT_MS, 'the membership did not answer');
}

/** `applied`, or an error once it took CATCH_UP_MS. */
export function caughtUp(applied: Promise<void>): Promise<void> {
  return within(applied, CATCH_UP_MS, `not caught up on the log within ${CATCH_UP_MS} ms`);
}

/** What `within` rejects with once the work took too long (the work's own failure is not one). */
export class TookTooLongError extends Error {}

/** `work`, or a TookTooLongError with `message` once it took `ms`. */
export function within<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new TookTooLongError(message)), ms);
    work.then(resolve, reject).finally(() => clearTimeout(timer)).catch(() => undefined);
  });
}

/** `work`, or an error as soon as `stopped` aborts; `work` settling after that is ignored, not left unhandled. */
export function unlessStopped<T>(work: Promise<T>, stopped: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(new Error('the report stopped'));
    if (stopped.aborted) onAbort();
    else stopped.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => stopped.removeEventListener('abort', onAbort)).catch(() => undefined);
  });
}
