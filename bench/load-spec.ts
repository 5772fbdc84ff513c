// What a GET load run is asked for and what it measured, whichever driver runs it (load.ts, wrk.ts).
import type { Samples } from './stats.ts';

export interface LoadSpec {
  /** Paths requested in turn by every connection. */
  paths: readonly string[];
  headers: Record<string, string>;
  connections: number;
  seconds: number;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  /** Latencies in ms: wrk's µs histogram (corrected for coordinated omission), or autocannon's per-response event (its histogram keeps whole ms only). */
  latencies: Samples;
  /** Share of the machine's CPU time the hypervisor gave to other guests during the run (null without /proc/stat). */
  stealPercent: number | null;
}
