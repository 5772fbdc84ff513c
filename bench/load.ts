// HTTP GET load, sized by the run's mode: wrk when installed, else autocannon in the bench process.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import type { BenchOptions } from './harness.ts';
import { round1, Samples } from './stats.ts';
import type { LoadResult, LoadSpec } from './load-spec.ts';
import { runWrk, wrkAvailable } from './wrk.ts';

export interface LoadPlan {
  connections: number;
  /** Length of one measured round. */
  seconds: number;
  /** Measured rounds per server; servers compared side by side alternate round by round. */
  rounds: number;
  /** Unmeasured load first, so each server runs JIT-compiled code when measured. */
  warmupSeconds: number;
}

/** Quick: enough to catch a broken path and give a rough figure; full: long enough for stable figures. */
export function loadPlan(options: BenchOptions): LoadPlan {
  return options.quick
    ? { connections: 10, seconds: 1, rounds: 2, warmupSeconds: 0.5 }
    : { connections: 10, seconds: 5, rounds: 4, warmupSeconds: 2 };
}

/** The load as rows state it: either generator shares the machine's CPUs with the server under test. */
export function loadNote(plan: LoadPlan): string {
  const generator = wrkAvailable() ? 'wrk, 1 thread (shares the CPUs)' : 'autocannon in the bench process (shares the CPUs; install wrk for figures less bound by the client)';
  return `${generator}, ${plan.connections} connections, ${plan.rounds} x ${plan.seconds} s`;
}

/** Loads one origin with every path in turn on each connection. */
export async function runLoad(origin: string, spec: LoadSpec): Promise<LoadResult> {
  const before = cpuTicks();
  const load = await (wrkAvailable() ? runWrk(origin, spec) : runAutocannon(origin, spec));
  const after = cpuTicks();
  const stealPercent = before === null || after === null || after.total === before.total ? null : round1(((after.steal - before.steal) / (after.total - before.total)) * 100);
  return { ...load, stealPercent };
}

/**
 * Steal and total ticks of all CPUs (/proc/stat, Linux). On a virtual machine whose host is busy, a vCPU stops
 * for milliseconds at a time; every request in flight then waits, which sets latency tails no server can hide.
 */
function cpuTicks(): { steal: number; total: number } | null {
  try {
    const fields = /^cpu +(.*)$/m.exec(readFileSync('/proc/stat', 'utf8'))![1].split(' ').map(Number);
    // user nice system idle iowait irq softirq steal (guest times are already inside user and nice)
    return { steal: fields[7] ?? 0, total: fields.slice(0, 8).reduce((sum, value) => sum + value, 0) };
  } catch {
    return null;
  }
}

/** Runs autocannon against one origin; any error or non-2xx answer fails the run, since its figures would mislead. */
function runAutocannon(origin: string, spec: LoadSpec): Promise<Omit<LoadResult, 'stealPercent'>> {
  const latencies = new Samples();
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: origin,
        connections: spec.connections,
        duration: spec.seconds,
        requests: spec.paths.map((path) => ({ method: 'GET', path, headers: spec.headers })),
      },
      (error, result) => {
        if (error !== null) {
          reject(error);
          return;
        }
        if (result.errors > 0 || result.non2xx > 0 || result['2xx'] === 0) {
          reject(new Error(`load on ${origin}: ${result.errors} errors, ${result.timeouts} timeouts, status counts ${JSON.stringify(result.statusCodeStats)}`));
          return;
        }
        resolve({ requests: result['2xx'], seconds: result.duration, latencies });
      },
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode >= 200 && statusCode < 300) latencies.add(responseTime);
    });
  });
}
