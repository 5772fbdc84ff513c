// Child processes of HTTP suites: the real jvmlens service on free ports, and a guarantee that no child outlives the bench.
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { defaultConfig } from '../src/config.ts';
import { SERVE_NODE_FLAGS } from '../src/node-flags.ts';

/** The CLI of the build: the bench runs from dist/bench, next to dist/src. */
export const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));

const children = new Set<ChildProcess>();
// The last resort when a suite throws past its own clean-up or the run is interrupted.
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

/** Collects what a stream writes, keeping at most its last `limit` characters. */
function collect(stream: NodeJS.ReadableStream | null, limit: number): () => string {
  let text = '';
  stream?.on('data', (chunk: Buffer) => {
    text += chunk.toString();
    if (text.length > limit) text = text.slice(-limit);
  });
  return () => text;
}

export interface Child {
  process: ChildProcess;
  /** stdout so far (its last MiB): servers print their addresses there. */
  stdout(): string;
  /** stdout and stderr so far (their last 16 KiB each), for error messages. */
  output(): string;
  /** Resolves with the exit code (or signal) once the child has exited. */
  exited: Promise<number | string | null>;
  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/** Spawns a process that is killed when the bench exits, whatever happens to the suite that started it. */
export function spawnChild(command: string, args: readonly string[], options: SpawnOptions = {}): Child {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
  children.add(child);
  const stdout = collect(child.stdout, 1 << 20);
  const stderrTail = collect(child.stderr, 16_384);
  const exited = new Promise<number | string | null>((resolve) => {
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve(code ?? signal);
    });
  });
  return {
    process: child,
    stdout,
    output: () => `${stdout().slice(-16_384)}${stderrTail()}`,
    exited,
    async stop(graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Resolves with the first match of `pattern` in the child's stdout; rejects if the child exits first or time runs out. */
export function waitForLine(child: Child, pattern: RegExp, timeoutMs = 120_000): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const match = pattern.exec(child.stdout());
      if (match !== null) finish(() => resolve(match));
    };
    const timer = setTimeout(() => finish(() => reject(new Error(`no ${pattern} within ${timeoutMs} ms:\n${child.output()}`))), timeoutMs);
    const finish = (settle: () => void) => {
      clearTimeout(timer);
      child.process.stdout?.off('data', check);
      settle();
    };
    // Listeners run in order: collect() saw this chunk before check() reads stdout().
    child.process.stdout?.on('data', check);
    child.exited.then((code) => finish(() => reject(new Error(`child exited (${code}) before printing ${pattern}:\n${child.output()}`))));
    check();
  });
}

/** Resident memory of another process in MB: /proc on Linux, ps elsewhere. */
export function processRssMb(pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    if (kb !== null) return Math.round(Number(kb[1]) / 1024);
  } catch {
    // not Linux: ask ps
  }
  return Math.round(Number(execFileSync('ps', ['-o', 'rss=', '-p', String(pid)], { encoding: 'utf8' }).trim()) / 1024);
}

/**
 * A process's memory on Linux, in MB: its peak resident size over its life (VmHWM) and the resident size
 * now split into anonymous memory (heaps, shared columns) and file-backed pages (LMDB's map: page cache the
 * kernel can reclaim). null elsewhere.
 */
export function processMemoryMb(pid: number): { peakRss: number; anon: number; file: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => Math.round(Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN) / 1024);
    return { peakRss: field('VmHWM'), anon: field('RssAnon'), file: field('RssFile') };
  } catch {
    return null;
  }
}

/** The service's own default, passed explicitly so a row can state it. */
export const SERVICE_WORKERS = defaultConfig().workers;

/** Clock ticks per second of /proc/<pid>/stat times: 100 on every Linux build in use (USER_HZ). */
const USER_HZ = 100;

/** CPU time (user + system, all threads) a process has used, in seconds; null where /proc is missing. */
export function processCpuSeconds(pid: number): number | null {
  try {
    // The command name may contain spaces and parentheses: fields are counted after its closing ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / USER_HZ;
  } catch {
    return null;
  }
}

export interface JvmlensService {
  gatewayUrl: string;
  apiUrl: string;
  /** The static --api-key: every scope. */
  apiKey: string;
  pid: number;
  /** Milliseconds from spawn to the first 200 of /opthub-health. */
  readyMs: number;
  stop(): Promise<void>;
  /** SIGKILL: a crash, as the cluster suite simulates one. */
  kill(): Promise<void>;
  /** How the process ended (exit code or signal), null while it runs. */
  exitStatus(): number | string | null;
  /** The end of what it printed. */
  output(): string;
}

export interface JvmlensOptions {
  dataDir: string;
  /** Report worker threads. */
  workers: number;
  /** The static key (default: a random one). */
  apiKey?: string;
  /** More flags, e.g. a cluster node's --cluster and --node-id. */
  args?: readonly string[];
  /** Called with each line the service logs (stderr). */
  onLog?: (line: string) => void;
}

async function healthStatus(gatewayUrl: string): Promise<number | null> {
  try {
    const response = await fetch(`${gatewayUrl}/opthub-health`);
    await response.arrayBuffer();
    return response.status;
  } catch {
    return null;
  }
}

/** Starts `jvmlens serve` on free ports and resolves once health answers 200, timing it from the spawn. */
export async function startJvmlens(options: JvmlensOptions, timeoutMs = 120_000): Promise<JvmlensService> {
  const apiKey = options.apiKey ?? `bench_${randomBytes(12).toString('hex')}`;
  const spawnedAt = performance.now();
  const child = spawnChild(process.execPath, [
    ...SERVE_NODE_FLAGS, MAIN, 'serve', '--gateway-port', '0', '--api-port', '0', '--data-dir', options.dataDir,
    '--api-key', apiKey, '--workers', String(options.workers), '--shutdown-grace-ms', '0', ...(options.args ?? []),
  ]);
  if (options.onLog !== undefined) createInterface({ input: child.process.stderr! }).on('line', options.onLog);
  try {
    const gateway = await waitForLine(child, /jvmlens: gateway (http:\/\/\S+)/, timeoutMs);
    const api = await waitForLine(child, /jvmlens: api (http:\/\/\S+)\/public/, timeoutMs);
    // Poll rather than wait for the "ready" line: the figure is what a health probe sees.
    while ((await healthStatus(gateway[1])) !== 200) {
      if (performance.now() - spawnedAt > timeoutMs) throw new Error(`health not UP within ${timeoutMs} ms:\n${child.output()}`);
      if (child.process.exitCode !== null) throw new Error(`jvmlens exited before UP:\n${child.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const readyMs = performance.now() - spawnedAt;
    const kill = async () => {
      child.process.kill('SIGKILL');
      await child.exited;
    };
    const exitStatus = () => child.process.exitCode ?? child.process.signalCode;
    return { gatewayUrl: gateway[1], apiUrl: api[1], apiKey, pid: child.process.pid!, readyMs, stop: () => child.stop(), kill, exitStatus, output: child.output };
  } catch (error) {
    await child.stop();
    throw error;
  }
}
