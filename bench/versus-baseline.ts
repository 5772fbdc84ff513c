// A GET endpoint of jvmlens measured beside a node:http server answering the same bytes, in alternating rounds of one run.
import { mirrorResponses, startBaseline } from './baseline.ts';
import type { BenchRow } from './harness.ts';
import { loadNote, runLoad } from './load.ts';
import type { LoadResult } from './load-spec.ts';
import type { LoadPlan } from './load.ts';
import { processCpuSeconds, processRssMb } from './service.ts';
import { Samples, summarize } from './stats.ts';

export interface LoadTarget {
  origin: string;
  /** The server's process, whose memory the row reports. */
  pid: number;
}

interface TargetResult {
  load: Omit<LoadResult, 'stealPercent'>;
  /** The machine's CPU steal in each round, in %. */
  stealPercent: string;
  /** CPU the server used during the measured rounds (null without /proc). */
  cpuSeconds: number | null;
  rssMb: number;
}

/**
 * The server's CPU per request holds when req/s does not: on a small or busy machine the load generator,
 * not the server, may set the pace, and then only CPU per request tells the servers apart.
 */
function cpuFigures(result: TargetResult): { serverCpuUsPerReq: number; serverCpuPercent: number } | null {
  if (result.cpuSeconds === null) return null;
  return {
    serverCpuUsPerReq: Math.round((result.cpuSeconds / result.load.requests) * 1e7) / 10,
    serverCpuPercent: Math.round((result.cpuSeconds / result.load.seconds) * 100),
  };
}

/**
 * Loads every target in alternating rounds (A B, B A, ...) after a warm-up of each, so drift on a shared
 * machine (other jobs, CPU frequency) falls on all of them alike.
 */
async function runSideBySide(targets: readonly LoadTarget[], paths: readonly string[], headers: Record<string, string>, plan: LoadPlan): Promise<TargetResult[]> {
  const spec = { paths, headers, connections: plan.connections, seconds: plan.seconds };
  for (const target of targets) await runLoad(target.origin, { ...spec, seconds: plan.warmupSeconds });
  const totals = targets.map(() => ({ requests: 0, seconds: 0, latencies: new Samples(), steal: [] as (number | null)[] }));
  const cpu: (number | null)[] = targets.map(() => 0);
  for (let round = 0; round < plan.rounds; round++) {
    const order = targets.map((_, index) => index);
    if (round % 2 === 1) order.reverse();
    for (const index of order) {
      const cpuBefore = processCpuSeconds(targets[index].pid);
      const load = await runLoad(targets[index].origin, spec);
      const cpuAfter = processCpuSeconds(targets[index].pid);
      const used = cpu[index];
      cpu[index] = used === null || cpuBefore === null || cpuAfter === null ? null : used + cpuAfter - cpuBefore;
      totals[index].requests += load.requests;
      totals[index].seconds += load.seconds;
      totals[index].latencies.addAll(load.latencies);
      totals[index].steal.push(load.stealPercent);
    }
  }
  return targets.map((target, index) => {
    const { steal, ...load } = totals[index];
    return { load, stealPercent: steal.map((value) => value ?? '-').join(' '), cpuSeconds: cpu[index], rssMb: processRssMb(target.pid) };
  });
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
    const ourCpu = cpuFigures(ours);
    const theirCpu = cpuFigures(theirs);
    const ourExtra: Record<string, number | string> = { vsNodeHttp: Math.round(ratio * 100) / 100 };
    if (ourCpu !== null && theirCpu !== null) {
      ourExtra.cpuPerReqVsNodeHttp = Math.round((theirCpu.serverCpuUsPerReq / ourCpu.serverCpuUsPerReq) * 100) / 100;
    }
    return [
      loadRow(spec.suite, spec.name, spec.size, ours, { ...ourExtra, ...ourCpu, ...common, cpuStealPercent: ours.stealPercent }),
      loadRow(spec.suite, baselineRowName(spec.name), spec.size, theirs, { ...theirCpu, ...common, cpuStealPercent: theirs.stealPercent }),
    ];
  } finally {
    await baseline.stop();
  }
}
