// What health reports (decisions §3): DOWN until every start-up step is done, and while shutting down or unwritable.

export class Readiness {
  readonly #pending = new Set<string>();
  readonly #started = performance.now();
  /** Milliseconds from construction to each step's completion: the start-up profile operators see in the log. */
  readonly timings: Record<string, number> = {};
  /** Why health is DOWN for good (the service is shutting down), or null. */
  #shuttingDown: string | null = null;
  #storageProblem: string | null = null;
  readonly #checks: (() => string | null)[] = [];
  #degradation: () => string | null = () => null;

  constructor(steps: readonly string[]) {
    for (const step of steps) this.#pending.add(step);
  }

  done(step: string): void {
    if (this.#pending.delete(step)) this.timings[step] = Math.round(performance.now() - this.#started);
  }

  /** DOWN from now on, for `why` (a cluster node restarting to rebuild itself says so). */
  shutDown(why = 'shutting down'): void {
    this.#shuttingDown = why;
  }

  storageWritable(problem: string | null): void {
    this.#storageProblem = problem;
  }

  /** Whether the last write tried failed to commit (a full disk). */
  get storageFailing(): boolean {
    return this.#storageProblem !== null;
  }

  /** A condition asked at every probe (cluster mode: joining, the NATS connection). */
  addCheck(check: () => string | null): void {
    this.#checks.push(check);
  }

  /** What works but at reduced strength while UP (cluster mode: a log replica offline), for health's note. */
  setDegradation(describe: () => string | null): void {
    this.#degradation = describe;
  }

  degradation(): string | null {
    return this.#degradation();
  }

  /** null when UP, else the reason for DOWN. */
  reason(): string | null {
    if (this.#shuttingDown !== null) return this.#shuttingDown;
    for (const check of this.#checks) {
      const problem = check();
      if (problem !== null) return problem;
    }
    if (this.#pending.size > 0) return `starting: waiting for ${[...this.#pending].join(', ')}`;
    if (this.#storageProblem !== null) return `storage cannot be written: ${this.#storageProblem}`;
    return null;
  }
}
