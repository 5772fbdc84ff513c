// The contract between bench suites and the runner: a suite returns result rows, the runner prints and saves them.
import { Bench } from 'tinybench';
import type { MethodNames } from '../src/seed/fleet.ts';

export interface BenchOptions {
  /** Small data, short runs: every suite in about a minute (CI runs this). */
  quick: boolean;
  /** Overrides of the fleet size a suite seeds (decisions: each row states the size it ran on). */
  vms?: number;
  componentsPerVm?: number;
  methods?: number;
  /** How the seeded fleet's methods are named (src/seed/fleet.ts METHOD_NAMES). */
  methodNames?: MethodNames;
  /** Timed runs per engine after the first where a suite compares engines (peers: the best counts). */
  runs?: number;
  /**
   * `--filter` terms: a row runs when a term is a substring of its suite's name or of its own name
   * (case-insensitive). A term that names a suite exactly the runner moves into `filterSuites`.
   */
  filter?: string[];
  /** Suites `--filter` named exactly: every row of theirs runs, and the name selects nothing else (`reports` no chaos row that mentions reports). */
  filterSuites?: string[];
}

export interface BenchRow {
  suite: string;
  name: string;
  /** The data the figure was measured on, e.g. "10M rows" or "100k VMs x 100 components". */
  size: string;
  /** Throughput: operations, requests or items per second. */
  rate: number;
  unit: 'ops/s' | 'req/s' | 'items/s' | 'rows/s';
  meanMs: number;
  p50Ms: number;
  p99Ms: number;
  rssMb: number;
  /** Extra figures worth keeping (e.g. a baseline ratio). */
  extra?: Record<string, number | string>;
}

export interface Suite {
  name: string;
  /** The row names the suite can produce, when known up front: `--filter` then skips the suite without running it. */
  rows?: readonly string[];
  run(options: BenchOptions): Promise<BenchRow[]>;
}

/** Whether `--filter` selects a row; suites with costly set-up ask before doing it. */
export function wanted(options: BenchOptions, suite: string, row: string): boolean {
  const terms = options.filter ?? [];
  const suites = options.filterSuites ?? [];
  if (terms.length === 0 && suites.length === 0) return true;
  const names = [suite.toLowerCase(), row.toLowerCase()];
  return suites.includes(names[0]) || terms.some((term) => names.some((name) => name.includes(term.toLowerCase())));
}

/** The options with each `--filter` term that names one of `suites` exactly moved into `filterSuites`. */
export function withFilterSuites(options: BenchOptions, suites: readonly string[]): BenchOptions {
  const names = new Set(suites.map((suite) => suite.toLowerCase()));
  const terms = options.filter ?? [];
  const named = terms.filter((term) => names.has(term.toLowerCase()));
  if (named.length === 0) return options;
  const others = terms.filter((term) => !names.has(term.toLowerCase()));
  const result: BenchOptions = { ...options, filterSuites: named.map((term) => term.toLowerCase()) };
  if (others.length > 0) result.filter = others;
  else delete result.filter;
  return result;
}

/** A progress line on stderr, so a long run shows what it is doing without disturbing the table on stdout. */
export function progress(message: string): void {
  process.stderr.write(`bench: ${message}\n`);
}

export function rssMb(): number {
  return Math.round(process.memoryUsage.rss() / 1048576);
}

/** The options each Bench was made for, so runTinybench applies --filter to its tasks without suites passing them again. */
const benchOptions = new WeakMap<Bench, BenchOptions>();

/**
 * A tinybench instance sized for the mode: quick runs are short but still measure. tinybench runs a task at
 * least `iterations` times (64 by default) whatever `time` says: quick lowers that floor, or a task of a
 * second would take a minute.
 */
export function newBench(options: BenchOptions): Bench {
  const bench = options.quick
    ? new Bench({ time: 200, warmupTime: 50, iterations: 10, warmupIterations: 2 })
    : new Bench({ time: 2000, warmupTime: 300 });
  benchOptions.set(bench, options);
  return bench;
}

/** Runs a tinybench instance and turns its tasks into rows. `itemsPerOp` converts ops/s into items/s. */
export async function runTinybench(suite: string, size: string, bench: Bench, itemsPerOp = 1, unit: BenchRow['unit'] = 'ops/s'): Promise<BenchRow[]> {
  const options = benchOptions.get(bench);
  if (options !== undefined) {
    for (const task of [...bench.tasks]) if (!wanted(options, suite, task.name)) bench.remove(task.name);
  }
  await bench.run();
  return bench.tasks.map((task) => {
    const result = task.result;
    if (result === undefined || result.state !== 'completed') {
      throw new Error(`bench task ${task.name} did not complete: ${result?.state ?? 'no result'}`);
    }
    const latency = result.latency;
    return {
      suite,
      name: task.name,
      size,
      // Operations over the time they took (1000 / mean latency); throughput.mean is a mean of per-sample
      // rates, which the fastest samples inflate far above what a sustained loop achieves.
      rate: (1000 / result.period) * itemsPerOp,
      unit,
      meanMs: latency.mean,
      p50Ms: latency.p50 ?? latency.mean,
      p99Ms: latency.p99 ?? latency.max,
      rssMb: rssMb(),
    };
  });
}
