// `npm run bench -- --ab REF`: the same rows run by another commit (A: REF, built in a temporary git worktree)
// and by this checkout (B), each run a process of its own, in turn A B B A; per row, B/A of each pair of runs
// next to each other. This 2-core VM's figures move by up to 40 % between processes, so a change of a few
// percent shows only in runs that alternate, compared pair by pair (as the README's A/B figures were run by hand).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunnerArgs } from './args.ts';
import type { BenchRow } from './harness.ts';
import { progress } from './harness.ts';
import { gitState, loadResult, machine, resultFileName, saveResult } from './results.ts';
import type { Machine, ResultDocument } from './results.ts';
import { formatNumber, renderTable } from './table.ts';

export type Side = 'A' | 'B';

/** `rounds` runs of each side: A B, B A, A B, …, so that neither side always runs first, on a cooler machine. */
export function abOrder(rounds: number): Side[] {
  const order: Side[] = [];
  for (let round = 0; round < rounds; round++) order.push(...(round % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const)));
  return order;
}

export interface AbRun {
  side: Side;
  result: ResultDocument;
}

export interface AbRow {
  suite: string;
  name: string;
  unit: BenchRow['unit'];
  /** The median rate of each side's runs (null where its runs lack the row). */
  a: number | null;
  b: number | null;
  /** B's rate over A's, of each pair of runs next to each other (A B, then B A, …) that both have the row. */
  ratios: number[];
}

function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((x, y) => x - y);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function rowKey(row: Pick<BenchRow, 'suite' | 'name'>): string {
  return `${row.suite}\u0000${row.name}`;
}

/** Every row either side ran, in the order of their first run, with each side's median rate and the pairs' B/A. */
export function summarizeAb(runs: readonly AbRun[]): AbRow[] {
  const rows = new Map<string, BenchRow>();
  for (const { result } of runs) for (const row of result.rows) if (!rows.has(rowKey(row))) rows.set(rowKey(row), row);
  const pairs: [AbRun, AbRun][] = [];
  for (let k = 0; k + 1 < runs.length; k += 2) pairs.push(runs[k].side === 'A' ? [runs[k], runs[k + 1]] : [runs[k + 1], runs[k]]);
  return [...rows.entries()].map(([key, row]) => {
    const rate = (run: AbRun) => run.result.rows.find((candidate) => rowKey(candidate) === key)?.rate;
    const of = (side: Side) => runs.filter((run) => run.side === side).map(rate).filter((value) => value !== undefined);
    const ratios = pairs.flatMap(([a, b]) => {
      const [rateA, rateB] = [rate(a), rate(b)];
      return rateA === undefined || rateB === undefined || rateA === 0 ? [] : [rateB / rateA];
    });
    return { suite: row.suite, name: row.name, unit: row.unit, a: median(of('A')), b: median(of('B')), ratios };
  });
}

export function formatAb(rows: readonly AbRow[]): string {
  const body = rows.map((row) => [
    row.suite, row.name, row.unit, formatNumber(row.a), formatNumber(row.b),
    row.ratios.length === 0 ? '-' : median(row.ratios)!.toFixed(2),
    row.ratios.map((ratio) => ratio.toFixed(2)).join(' '),
  ]);
  return renderTable(['suite', 'name', 'unit', 'A (median)', 'B (median)', 'B/A', 'B/A of each pair'], body, new Set([3, 4, 5]));
}

function git(root: string, args: readonly string[]): string {
  return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

export interface Baseline {
  commit: string;
  /** Its bench runner, built in the worktree. */
  runner: string;
  remove(): void;
}

/**
 * REF checked out in a temporary git worktree and built with its own build script: with this checkout's
 * node_modules where REF's lockfile is the same (most changes), else with its own, installed from its lockfile.
 */
export function prepareBaseline(root: string, ref: string): Baseline {
  let commit: string;
  try {
    commit = git(root, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  } catch {
    throw new Error(`--ab: '${ref}' names no commit of the repository at ${root}`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'jvmlens-ab-'));
  const remove = () => {
    try {
      git(root, ['worktree', 'remove', '--force', dir]);
    } catch {
      // Not added, or removed already: the folder goes below all the same.
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    git(root, ['worktree', 'add', '--detach', dir, commit]);
    // git() trims its output, the file's last newline with it.
    const sameLock = readFileSync(join(root, 'package-lock.json'), 'utf8').trim() === git(root, ['show', `${commit}:package-lock.json`]);
    // The build's and runs' output goes to stderr, with the runs' progress: stdout is the A/B table's.
    const build = { cwd: dir, stdio: ['ignore', 2, 2] as ('ignore' | number)[] };
    if (sameLock) symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
    else {
      progress(`A/B: ${ref}'s package-lock.json differs from this checkout's: installing its dependencies`);
      execFileSync('npm', ['ci', '--no-audit', '--no-fund'], build);
    }
    progress(`A/B: building ${ref} (${commit.slice(0, 12)}) in ${dir}`);
    execFileSync('npm', ['run', 'build'], build);
    const runner = join(dir, 'dist', 'bench', 'run.js');
    if (!existsSync(runner)) throw new Error(`--ab: ${ref} built no bench runner at dist/bench/run.js`);
    return { commit, runner, remove };
  } catch (error) {
    remove();
    throw error;
  }
}

/** One run of a side's runner with the options the user gave, its result written to `out`; a suite that failed fails the A/B run. */
export function runSide(runner: string, runArgs: readonly string[], out: string): Promise<ResultDocument> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [runner, ...runArgs, '--out', out], { stdio: ['ignore', 'ignore', 'inherit'] });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (code !== 0) reject(new Error(`${runner} ${runArgs.join(' ')} ended with ${code ?? signal}`));
      else resolve(loadResult(out));
    });
  });
}

/** What an A/B run saves: every run's result, in the order run. */
export interface AbDocument {
  format: 1;
  kind: 'ab';
  startedAt: string;
  finishedAt: string;
  machine: Machine;
  a: { ref: string; commit: string };
  b: { commit: string | null; dirty: boolean | null };
  runs: AbRun[];
}

/** The A/B run of `npm run bench -- --ab REF`: `ownRunner` is this checkout's runner, B. Returns the exit status. */
export async function runAb(args: RunnerArgs & { ab: string }, root: string, ownRunner: string): Promise<number> {
  const startedAt = new Date();
  const host = machine();
  const b = gitState(root);
  const baseline = prepareBaseline(root, args.ab);
  const scratch = mkdtempSync(join(tmpdir(), 'jvmlens-ab-runs-'));
  // Ctrl-C ends the process (run.ts) without the finally below.
  const cleanUp = () => {
    baseline.remove();
    rmSync(scratch, { recursive: true, force: true });
  };
  process.once('exit', cleanUp);
  const runs: AbRun[] = [];
  try {
    const order = abOrder(args.abRounds);
    for (const [index, side] of order.entries()) {
      progress(`A/B: run ${index + 1} of ${order.length}: ${side === 'A' ? `A, ${args.ab}` : 'B, this checkout'}`);
      runs.push({ side, result: await runSide(side === 'A' ? baseline.runner : ownRunner, args.runArgs, join(scratch, `${index}.json`)) });
    }
  } finally {
    process.removeListener('exit', cleanUp);
    cleanUp();
  }
  const mode = args.options.quick ? 'quick' : 'full';
  const document: AbDocument = {
    format: 1, kind: 'ab', startedAt: startedAt.toISOString(), finishedAt: new Date().toISOString(), machine: host,
    a: { ref: args.ab, commit: baseline.commit }, b, runs,
  };
  const file = args.out ?? join(root, 'bench', 'results', resultFileName(startedAt, mode).replace(/\.json$/, '-ab.json'));
  saveResult(document, file);
  const commitB = `${b.commit?.slice(0, 12) ?? 'unknown'}${b.dirty ? ' + changes' : ''}`;
  process.stdout.write(`\njvmlens bench A/B (${mode}) on ${host.cpuModel}, ${host.cores} cores, Node ${host.node}\n`);
  process.stdout.write(`A: ${args.ab} (${baseline.commit.slice(0, 12)}); B: this checkout (${commitB})\n`);
  process.stdout.write(`runs in turn: ${runs.map((run) => run.side).join(' ')}; load average at each start: ${runs.map((run) => run.result.machine.loadAverage).join(', ')}\n\n`);
  process.stdout.write(`${formatAb(summarizeAb(runs))}\n\nsaved ${file}\n`);
  return 0;
}
