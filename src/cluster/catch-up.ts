// When a node behind the cluster's log tells the load balancer to send its requests elsewhere: its reads
// wait until it applied every acknowledged write (read your writes), and give up after 10 s.

/**
 * A node this far behind is DOWN (`catching up`). Half of the reads' 10 s, so that a read sent as the node
 * turns UP still has room when the estimate (pending commands times the recent time per command) is short,
 * as on a loaded machine. (Its own gateway cannot run ahead of it: a write first waits for the node to apply
 * the log, as a read does; writes through other nodes can.)
 */
const HEALTH_BEHIND_MS = 5_000;
/**
 * A node DOWN for catching up is UP again once it needs less than this: the estimate moves with each
 * command's time (applied in flight, several take little more than one), and one hovering at the threshold
 * turned the node UP and DOWN from one request to the next, in and out of the load balancer.
 */
const HEALTH_CAUGHT_UP_MS = 1_000;

export class CatchUpHealth {
  #catchingUp = false;

  /** Health's note for a node that needs about `behindMs` to apply what the log holds; null while it can serve. */
  note(behindMs: number): string | null {
    this.#catchingUp = behindMs > (this.#catchingUp ? HEALTH_CAUGHT_UP_MS : HEALTH_BEHIND_MS);
    return this.#catchingUp ? `catching up: this node needs about ${Math.max(1, Math.round(behindMs / 1000))} s to apply what the cluster log holds` : null;
  }
}
