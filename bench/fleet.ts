// Fleet data for HTTP suites: sizes from the options, data directories seeded with `jvmlens seed`, removed when the bench exits.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_FLEET, fleetBatches } from '../src/seed/fleet.ts';
import type { FleetSpec, MethodNames } from '../src/seed/fleet.ts';
import type { BenchOptions } from './harness.ts';
import { progress } from './harness.ts';
import { MAIN, spawnChild } from './service.ts';

export interface FleetSize {
  vms: number;
  componentsPerVm: number;
  methods: number;
  /** DEFAULT_FLEET's naming when absent. */
  methodNames?: MethodNames;
}

/**
 * The fleet most HTTP suites read: issue 2 states start-up and report figures on 100,000 VMs x 100 components.
 * Suites that share it share one seeding per run.
 */
export const STANDARD_FLEET = {
  quick: { vms: 5_000, componentsPerVm: 20, methods: 20_000 },
  full: { vms: 100_000, componentsPerVm: 100, methods: 20_000 },
} as const satisfies Record<'quick' | 'full', FleetSize>;

/** The seed the fleet is generated from: the same data on every run and machine. */
export const FLEET_SEED = 1;

/** A suite's default size for the mode, with the --vms, --components-per-vm, --methods and --method-names overrides applied. */
export function fleetSize(options: BenchOptions, defaults: Record<'quick' | 'full', FleetSize> = STANDARD_FLEET): FleetSize {
  const base = options.quick ? defaults.quick : defaults.full;
  return {
    vms: options.vms ?? base.vms,
    componentsPerVm: options.componentsPerVm ?? base.componentsPerVm,
    methods: options.methods ?? base.methods,
    ...(options.methodNames === undefined ? {} : { methodNames: options.methodNames }),
  };
}

function count(n: number): string {
  if (n >= 1_000_000 && n % 100_000 === 0) return `${n / 1_000_000}M`;
  if (n >= 1_000 && n % 100 === 0) return `${n / 1_000}k`;
  return String(n);
}

/** "100k VMs x 100 components, 20k methods": the `size` of a row. */
export function describeFleet(size: FleetSize): string {
  const names = size.methodNames === undefined || size.methodNames === DEFAULT_FLEET.methodNames ? '' : ` (${size.methodNames} names)`;
  return `${count(size.vms)} VMs x ${count(size.componentsPerVm)} components, ${count(size.methods)} methods${names}`;
}

/** The generator spec `jvmlens seed` uses for this size (its defaults for everything the bench does not set). */
export function fleetSpec(size: FleetSize, now = Date.now()): FleetSpec {
  return { ...DEFAULT_FLEET, ...size, seed: FLEET_SEED, now };
}

/** The ids of the first `count` VMs of the seeded fleet: the generator is deterministic and lazy, so only they are made. */
export function sampleVmIds(size: FleetSize, count: number): string[] {
  const first = fleetBatches(fleetSpec(size), Math.min(count, size.vms)).next();
  if (first.done === true) return [];
  return first.value.filter((event) => event.type === 'vm.start').map((event) => String(event.vmId));
}

/** `jvmlens seed`'s flags for the fleet of this size. */
export function seedFlags(size: FleetSize): string[] {
  return [
    '--vms', String(size.vms), '--components-per-vm', String(size.componentsPerVm), '--methods', String(size.methods),
    '--method-names', size.methodNames ?? DEFAULT_FLEET.methodNames, '--seed', String(FLEET_SEED),
  ];
}

let root: string | null = null;

/** A fresh directory under one temporary root that is removed when the bench exits. */
export function temporaryDir(prefix: string): string {
  if (root === null) {
    const created = mkdtempSync(join(tmpdir(), 'jvmlens-bench-'));
    root = created;
    process.on('exit', () => rmSync(created, { recursive: true, force: true }));
  }
  return mkdtempSync(join(root, prefix));
}

const seeded = new Map<string, Promise<string>>();

async function seed(size: FleetSize): Promise<string> {
  const dataDir = temporaryDir('fleet-');
  progress(`seeding ${describeFleet(size)} with jvmlens seed`);
  const started = performance.now();
  const child = spawnChild(process.execPath, [MAIN, 'seed', '--data-dir', dataDir, ...seedFlags(size)]);
  const code = await child.exited;
  if (code !== 0) throw new Error(`jvmlens seed exited with ${code}:\n${child.output()}`);
  progress(`seeded in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return dataDir;
}

/**
 * A data directory holding the fleet, seeded once per size and run. Suites may start services on it
 * but must not ingest into it: the next suite expects the fleet as seeded.
 */
export function seededDataDir(size: FleetSize): Promise<string> {
  const key = `${size.vms}/${size.componentsPerVm}/${size.methods}/${size.methodNames ?? DEFAULT_FLEET.methodNames}`;
  let dataDir = seeded.get(key);
  if (dataDir === undefined) {
    dataDir = seed(size);
    seeded.set(key, dataDir);
    // A failed seeding is not cached: the next suite tries again and reports its own error.
    dataDir.catch(() => seeded.delete(key));
  }
  return dataDir;
}
