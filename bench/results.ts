// The saved result of a bench run: rows plus the machine, commit and options that make figures comparable.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, arch, cpus, loadavg, release, totalmem, type } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchOptions, BenchRow } from './harness.ts';

export interface Machine {
  cpuModel: string;
  cores: number;
  memoryMb: number;
  node: string;
  os: string;
  /** 1-minute load averages when the run started and ended: a busy machine explains a slow run. */
  loadAverage: number;
  loadAverageAtEnd?: number;
}

export function loadAverage(): number {
  return Math.round(loadavg()[0] * 100) / 100;
}

export interface SuiteError {
  suite: string;
  message: string;
}

export interface ResultDocument {
  /** Bumped when the shape changes, so --compare can refuse what it cannot read. */
  format: 1;
  mode: 'quick' | 'full';
  startedAt: string;
  finishedAt: string;
  commit: string | null;
  /** Uncommitted changes in the working tree when the run started (null when git is absent). */
  dirty: boolean | null;
  machine: Machine;
  options: BenchOptions;
  rows: BenchRow[];
  errors: SuiteError[];
}

/** The repository root: the nearest folder above this file with a package.json (the bench runs from dist/bench or bench). */
export function repositoryRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('bench: no package.json above the bench folder');
    dir = parent;
  }
  return dir;
}

export function machine(): Machine {
  return {
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    cores: availableParallelism(),
    memoryMb: Math.round(totalmem() / 1048576),
    node: process.version,
    os: `${type()} ${release()} ${arch()}`,
    loadAverage: loadAverage(),
  };
}

function git(root: string, args: string[]): string | null {
  try {
    return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

export function gitState(root: string): { commit: string | null; dirty: boolean | null } {
  const commit = git(root, ['rev-parse', 'HEAD']);
  const status = commit === null ? null : git(root, ['status', '--porcelain', '--untracked-files=no']);
  return { commit, dirty: status === null ? null : status !== '' };
}

/** bench/results/2026-11-22T01-02-03Z-quick.json: sortable, and free of characters some file systems refuse. */
export function resultFileName(startedAt: Date, mode: ResultDocument['mode']): string {
  return `${startedAt.toISOString().replace(/\.\d+Z$/, 'Z').replace(/:/g, '-')}-${mode}.json`;
}

/** Writes a run's result (or an A/B run's, bench/ab.ts) as indented JSON, making its folder. */
export function saveResult(document: object, file: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(document, null, 2) + '\n');
}

/** Reads a saved run for --compare; throws with the file name when it is not one. */
export function loadResult(file: string): ResultDocument {
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<ResultDocument>;
  if (parsed.format !== 1 || !Array.isArray(parsed.rows)) throw new Error(`${file} is not a bench result file (format 1)`);
  return parsed as ResultDocument;
}
