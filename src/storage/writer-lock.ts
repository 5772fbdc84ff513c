// One process at a time opens a data directory's store for writing. LMDB (lmdb-js 3.5.6) is meant to take
// writers in several processes, but a command opening the store while the service wrote now and then made
// the service lose a committed transaction: acknowledged batches vanished (test/cli/commands-while-serving.test.ts).
// The service holds this lock while it runs; a command (`keys`, `cve import`) takes it to write, or hands its
// write to the running service (inbox.ts). The lock is a symbolic link whose target names its holder: created
// with its content in one step, and kept in the inode, so it takes no disk block (a full disk still says what
// is full, not that a lock cannot be written). The lock of a process that died is taken over (two processes
// taking over the same one at the same microsecond could both get it).
import { mkdirSync, readFileSync, readlinkSync, symlinkSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const LOCK_FILE = 'writer.lock';
/** How often a process waiting for the lock looks again. */
const POLL_MS = 50;

export type WriterRole = 'service' | 'command';

export interface WriterHolder {
  pid: number;
  role: WriterRole;
  /** When the process started (Linux: clock ticks since boot): a pid reused by another process, after a restart of its container say, does not hold the lock. */
  started: string | null;
  /** A service that is a cluster node: its writes come through the cluster's log, not from commands. */
  clusterNode?: boolean;
}

export interface WriterLock {
  /** Gives the lock up (once the store is closed). */
  release(): void;
}

/** The link's target: role, pid, start time, whether a cluster node ('service:1234:2096407:cluster'). */
function encode(holder: WriterHolder): string {
  return [holder.role, holder.pid, holder.started ?? '', holder.clusterNode === true ? 'cluster' : ''].join(':');
}

function decode(target: string): WriterHolder {
  const [role, pid, started, cluster] = target.split(':');
  return { role: role === 'service' ? 'service' : 'command', pid: Number(pid), started: started === '' ? null : started, ...(cluster === 'cluster' ? { clusterNode: true } : {}) };
}

/** The lock files this process holds. */
const held = new Set<string>();

/** A process's start time from /proc (null where there is none): with its pid, it names one process. */
function startTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function isAlive(holder: WriterHolder): boolean {
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    // EPERM: it exists, under another user.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return holder.started === null || startTime(holder.pid) === holder.started;
}

/** The live process holding the lock, or null; a lock left by a process that died is removed. */
export function writerHolder(dataDir: string): WriterHolder | null {
  const path = join(dataDir, LOCK_FILE);
  let holder: WriterHolder;
  try {
    holder = decode(readlinkSync(path));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  if (holder.pid === process.pid ? held.has(path) : isAlive(holder)) return holder;
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  return null;
}

/**
 * Takes the lock for `role`, waiting up to `waitMs` while another command holds it. Resolves with the
 * lock, or with the running service that holds it (a command then writes through the service's inbox).
 * Throws when a command still holds it after `waitMs`, or when `role` is 'service' and a service holds it.
 */
export function takeWriterLock(dataDir: string, role: 'service', waitMs: number, clusterNode: boolean): Promise<WriterLock>;
export function takeWriterLock(dataDir: string, role: 'command', waitMs: number): Promise<WriterLock | { service: WriterHolder }>;
export async function takeWriterLock(dataDir: string, role: WriterRole, waitMs: number, clusterNode = false): Promise<WriterLock | { service: WriterHolder }> {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, LOCK_FILE);
  const own: WriterHolder = { pid: process.pid, role, started: startTime(process.pid), ...(clusterNode ? { clusterNode } : {}) };
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      symlinkSync(encode(own), path);
      held.add(path);
      return {
        release: () => {
          if (!held.delete(path)) return;
          try {
            unlinkSync(path);
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
          }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = writerHolder(dataDir);
    if (holder === null) continue;
    if (holder.role === 'service') {
      if (role === 'command') return { service: holder };
      throw new Error(`another jvmlens service (pid ${holder.pid}) has ${dataDir} open: one service per data directory`);
    }
    if (Date.now() >= deadline) throw new Error(`another jvmlens command (pid ${holder.pid}) is still writing ${dataDir}`);
    await sleep(POLL_MS);
  }
}
