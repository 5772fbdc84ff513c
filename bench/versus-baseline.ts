// A GET endpoint of jvmlens measured beside a node:http server answering the same bytes, in alternating rounds of one run.
import { mirrorResponses, startBaseline } from './baseline.ts';
import type { BenchRow } from './harness.ts';
import { loadNote, runLoad } from './load.ts';
import type { LoadPlan, LoadResult } from './load.ts';
import { processRssMb } from './service.ts';
import { Samples, summarize } from './stats.ts';

export interface LoadTarget {
  origin: string;
  /** The server's process, whose memory the row reports. */
  pid: number;
}

interface TargetResult {
  load: LoadResult;
  rssMb: number;
}

/**
 * Loads every target in alternating rounds (A B, B A, ...) after a warm-up of each, so drift on a shared
 * machine (other jobs, CPU frequency) falls on all of them alike.
 */
async function runSideBySide(targets: readonly LoadTarget[], paths: readonly string[], headers: Record<string, string>, plan: LoadPlan): Promise<TargetResult[]> {
  const spec = { paths, headers, connections: plan.connections, seconds: plan.seconds };
  for (const target of targets) await runLoad(target.origin, { ...spec, seconds: plan.warmupSeconds });
  const totals = targets.map(() => ({ requests: 0, seconds: 0, latencies: new Samples() }));
  for (let round = 0; round < plan.rounds; round++) {
    const order = targets.map((_, index) => index);
    if (round % 2 === 1) order.reverse();
    for (const index of order) {
      const load = await runLoad(targets[index].origin, spec);
      totals[index].requests += load.requests;
      totals[index].seconds += load.seconds;
      totals[index].latencies.addAll(load.latencies);
    }
  }
  return targets.map((target, index) => ({ load: totals[index], rssMb: processRssMb(target.pid) }));
}

/** req/s over the whole measured time, latency over every response, the server's RSS. */
function loadRow(suite: string, name: string, size: string, result: TargetResult, extra: Record<string, number | string>): BenchRow {
  const latency = summarize(result.load.latencies.values());
  return {
    suite,
    name,
    size,
    rate: result.load.requests / result.load.seconds,
    unit: 'req/s',
    meanMs: latency.mean,
    p50Ms: latency.p50,
    p99Ms: latency.p99,
    rssMb: result.rssMb,
    extra,
  };
}

export interface VersusBaseline {
  suite: string;
  /** The jvmlens row's name; the baseline row is named "<name> node:http baseline". */
  name: string;
  size: string;
  /** jvmlens (the API or gateway origin) and its process. */
  jvmlens: LoadTarget;
  /** Paths every connection requests in turn; the baseline answers each with jvmlens's bytes for it. */
  paths: readonly string[];
  headers: Record<string, string>;
  plan: LoadPlan;
}

export function baselineRowName(name: string): string {
  return `${name} node:http baseline`;
}

/** Two rows: jvmlens, with its ratio to the baseline in `extra`, then the baseline. */
export async function measureVersusBaseline(spec: VersusBaseline): Promise<BenchRow[]> {
  const baseline = await startBaseline(await mirrorResponses(spec.jvmlens.origin, spec.paths, spec.headers));
  try {
    const [ours, theirs] = await runSideBySide([spec.jvmlens, { origin: baseline.url, pid: baseline.pid }], spec.paths, spec.headers, spec.plan);
    const common = { load: `${loadNote(spec.plan)}, rounds alternating`, rss: 'server process' };
    const ratio = ours.load.requests / ours.load.seconds / (theirs.load.requests / theirs.load.seconds);
    return [
      loadRow(spec.suite, spec.name, spec.size, ours, { vsNodeHttp: Math.round(ratio * 100) / 100, ...common }),
      loadRow(spec.suite, baselineRowName(spec.name), spec.size, theirs, common),
    ];
  } finally {
    await baseline.stop();
  }
}
