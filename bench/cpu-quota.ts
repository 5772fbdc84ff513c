// A machine of a given number of cores, emulated on this one: a CPU quota (Linux cgroups) over the processes
// put in it. The cluster bench runs each node of a cluster, with a nats-server, as on a machine of its own.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where the kernel enforces a quota: cgroup v2's unified tree, or v1's cpu controller. */
interface Hierarchy {
  root: string;
  /** Writes the quota, `cores` per period, into the group's directory. */
  limit(dir: string, cores: number): void;
}

/**
 * The quota's period: throttled processes wait out the rest of a period, so a short one spreads the CPU a
 * machine gives over time as its cores would (the kernel's 100 ms made a node stall up to half of it).
 */
const PERIOD_US = 20_000;
const quotaUs = (cores: number) => Math.max(1_000, Math.round(cores * PERIOD_US));

const V2: Hierarchy = {
  root: '/sys/fs/cgroup',
  limit: (dir, cores) => writeFileSync(join(dir, 'cpu.max'), `${quotaUs(cores)} ${PERIOD_US}`),
};
const V1: Hierarchy = {
  root: '/sys/fs/cgroup/cpu',
  limit(dir, cores) {
    writeFileSync(join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
    writeFileSync(join(dir, 'cpu.cfs_quota_us'), String(quotaUs(cores)));
  },
};

/** The hierarchy whose cpu controller this process may use, if any. */
function hierarchy(): Hierarchy | null {
  const v2Controllers = join(V2.root, 'cgroup.subtree_control');
  if (existsSync(v2Controllers) && readFileSync(v2Controllers, 'utf8').split(/\s+/).includes('cpu')) return V2;
  if (existsSync(join(V1.root, 'cpu.cfs_quota_us'))) return V1;
  return null;
}

/** The quotas the bench and its tests make are named after their process: `jvmlens-bench-<pid>-…`, `jvmlens-test-<pid>…`. */
const NAMED_AFTER_PID = /^jvmlens-(?:bench|test)-(\d+)/;

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Moves what still runs under the quota in `dir` back out, and removes it. */
function removeGroup(tree: Hierarchy, dir: string): void {
  if (!existsSync(dir)) return;
  for (const pid of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) {
    writeFileSync(join(tree.root, 'cgroup.procs'), pid);
  }
  rmdirSync(dir);
}

/**
 * Removes the quotas of runs whose process is gone: a bench stopped by Ctrl-C or a kill removes none of its
 * own, and the kernel keeps them, with any process of the run still in them, until someone does.
 */
function removeLeftOvers(tree: Hierarchy): void {
  for (const entry of readdirSync(tree.root)) {
    const owner = NAMED_AFTER_PID.exec(entry);
    if (owner === null || running(Number(owner[1]))) continue;
    try {
      removeGroup(tree, join(tree.root, entry));
    } catch {
      // Another run's sweep removed it first, or this process may not: the quota to make does not depend on it.
    }
  }
}

export interface CpuQuota {
  /** Moves a running process, every thread of it, under the quota. */
  add(pid: number): void;
  /** Moves what still runs under it back out, and removes it. */
  remove(): void;
}

/**
 * A quota of `cores` named `name`, or why there cannot be one here (no cgroup cpu controller, or not
 * allowed to write it: root, or a delegated cgroup, is needed).
 */
export function cpuQuota(name: string, cores: number): CpuQuota | Error {
  const tree = hierarchy();
  if (tree === null) return new Error('no cgroup cpu controller is mounted (/sys/fs/cgroup)');
  removeLeftOvers(tree);
  const dir = join(tree.root, name);
  try {
    mkdirSync(dir);
    tree.limit(dir, cores);
  } catch (error) {
    if (existsSync(dir)) rmdirSync(dir);
    return new Error(`cannot set a CPU quota in ${tree.root}: ${(error as Error).message}`);
  }
  return {
    add: (pid) => writeFileSync(join(dir, 'cgroup.procs'), String(pid)),
    remove: () => removeGroup(tree, dir),
  };
}
