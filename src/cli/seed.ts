// `jvmlens seed`: fills a data directory (or a running gateway) with a synthetic fleet through the ingestion path.
import type { Config } from '../config.ts';
import { validateEvents } from '../ingest/events.ts';
import { DEFAULT_FLEET, fleetBatches, METHOD_NAMES } from '../seed/fleet.ts';
import type { FleetSpec } from '../seed/fleet.ts';
import { Dictionary } from '../storage/dictionary.ts';
import { Ingestor } from '../storage/ingest.ts';
import { ServiceError, UnreachableError } from './client.ts';
import { exitOnFailedWrite, openLocalStore } from './local-store.ts';
import { choiceOption, integerOption, parseArgs, UsageError } from './args.ts';
import { formatUsages } from './help.ts';
import type { Usage } from './help.ts';
import { writeProgress } from './output.ts';

export const SEED_USAGE: readonly Usage[] = [
  {
    call: 'jvmlens seed [--vms N] [--components-per-vm N] [--methods N] [--method-names repeated|realistic] [--app-envs N] [--tags N] [--seed N] [--days N] [--gateway URL --key KEY]',
    does: 'generate a deterministic synthetic fleet',
  },
];

const OPTIONS = ['vms', 'components-per-vm', 'methods', 'method-names', 'app-envs', 'tags', 'seed', 'days', 'gateway', 'key'];

export function fleetSpecFromArgs(args: readonly string[], now: number): FleetSpec & { gateway?: string; key?: string } {
  const parsed = parseArgs(args, OPTIONS);
  if (parsed.positional.length > 0) throw new UsageError(`unexpected argument '${parsed.positional[0]}'`);
  return {
    vms: integerOption(parsed, 'vms', DEFAULT_FLEET.vms, 1),
    componentsPerVm: integerOption(parsed, 'components-per-vm', DEFAULT_FLEET.componentsPerVm),
    methods: integerOption(parsed, 'methods', DEFAULT_FLEET.methods),
    methodNames: choiceOption(parsed, 'method-names', METHOD_NAMES, DEFAULT_FLEET.methodNames),
    appEnvs: integerOption(parsed, 'app-envs', DEFAULT_FLEET.appEnvs, 1),
    tags: integerOption(parsed, 'tags', DEFAULT_FLEET.tags),
    seed: integerOption(parsed, 'seed', DEFAULT_FLEET.seed),
    days: integerOption(parsed, 'days', DEFAULT_FLEET.days, 1),
    now,
    gateway: parsed.options.get('gateway'),
    key: parsed.options.get('key'),
  };
}

/** Progress on stderr, at most once a second, so long runs show they are alive. */
function progress(spec: FleetSpec): (vmsDone: number, final?: boolean) => void {
  const started = Date.now();
  let last = 0;
  return (vmsDone, final = false) => {
    const now = Date.now();
    if (!final && now - last < 1000) return;
    last = now;
    const seconds = (now - started) / 1000;
    const line = `seed: ${vmsDone}/${spec.vms} VMs (${Math.round(vmsDone / Math.max(seconds, 0.001))} VMs/s)`;
    if (final) process.stderr.write(`${line} in ${seconds.toFixed(1)} s\n`);
    else writeProgress(line);
  };
}

/** Posts one batch of agent events to a gateway as NDJSON, as an agent would. */
export async function postBatch(gateway: string, key: string, events: readonly unknown[]): Promise<void> {
  const url = `${gateway.replace(/\/$/, '')}/agent/v1/events`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson', 'x-api-key': key },
      body: events.map((event) => JSON.stringify(event)).join('\n'),
    });
  } catch (error) {
    throw new UnreachableError(`no jvmlens gateway answered at ${url}: ${((error as Error).cause as Error | undefined)?.message ?? (error as Error).message}`);
  }
  // The command's exit status 3, with the gateway's message: a 503 says why (the cluster's log full, say).
  if (response.status !== 200) throw new ServiceError(`the gateway answered ${response.status}: ${await response.text()}`);
}

export async function seedCommand(config: Config, args: readonly string[]): Promise<void> {
  const spec = fleetSpecFromArgs(args, Date.now());
  const report = progress(spec);
  let vmsDone = 0;
  if (spec.gateway !== undefined) {
    if (spec.key === undefined) throw new UsageError('--gateway needs --key with the ingest scope');
    for (const batch of fleetBatches(spec)) {
      await postBatch(spec.gateway, spec.key, batch);
      vmsDone += batch.filter((event) => event.type === 'vm.start').length;
      report(vmsDone);
    }
  } else {
    const { store, close } = await openLocalStore(config.dataDir, 'seed it through its gateway (--gateway URL --key KEY), or stop it first');
    try {
      const ingestor = new Ingestor(store, new Dictionary(store));
      for (const batch of fleetBatches(spec)) {
        await ingestor.ingest(() => validateEvents(batch)).catch(exitOnFailedWrite(config.dataDir));
        vmsDone += batch.filter((event) => event.type === 'vm.start').length;
        report(vmsDone);
      }
    } finally {
      await close();
    }
  }
  report(vmsDone, true);
}
