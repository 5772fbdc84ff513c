// Agent ingestion into a real service: code items per second, POSTed as NDJSON batches of 10,000 items over several connections.
import { fleetSize, fleetSpec, temporaryDir } from '../fleet.ts';
import type { FleetSize } from '../fleet.ts';
import { wanted } from '../harness.ts';
import type { BenchRow, Suite } from '../harness.ts';
import { buildIngestPayloads, stampTime } from '../ingest-payloads.ts';
import { runPostLoad } from '../post-load.ts';
import type { PostLoadResult } from '../post-load.ts';
import { processCpuSeconds, processRssMb, SERVICE_WORKERS, startJvmlens } from '../service.ts';
import { round1, summarize } from '../stats.ts';

const NAME = 'http-ingest';
const FIRST = 'POST /agent/v1/events NDJSON, code first seen';
const SUSTAINED = 'POST /agent/v1/events NDJSON, sustained';
/** Issue 2: "at least 300,000 code items per second sustained, sent as NDJSON batches of 10,000 items". */
const ITEMS_PER_BATCH = 10_000;
const CONNECTIONS = 4;

/**
 * ~130 code items per VM (20 framework methods shared per AppEnv, used libraries, 100 methods of its own),
 * so that batches hold many VMs and mostly distinct code, as a fleet's agents send it.
 */
const INGEST_FLEET: Record<'quick' | 'full', FleetSize> = {
  quick: { vms: 1_000, componentsPerVm: 20, methods: 100_000 },
  full: { vms: 10_000, componentsPerVm: 20, methods: 1_000_000 },
};
const PLAN = {
  quick: { bodies: 12, seconds: 3 },
  full: { bodies: 100, seconds: 15 },
};

/** Server CPU (all threads) per code item, in µs: what holds whatever share of the cores the client takes. */
function cpuFigures(cpuSeconds: number | null, result: PostLoadResult): Record<string, number> {
  if (cpuSeconds === null) return {};
  return {
    serverCpuUsPerItem: Math.round((cpuSeconds / result.items) * 1e7) / 10,
    serverCpuPercent: Math.round((cpuSeconds / result.seconds) * 100),
  };
}

/** Runs a load and measures the server CPU it cost. */
async function measured(pid: number, load: () => Promise<PostLoadResult>): Promise<{ result: PostLoadResult; cpu: Record<string, number> }> {
  const before = processCpuSeconds(pid);
  const result = await load();
  const after = processCpuSeconds(pid);
  return { result, cpu: cpuFigures(before === null || after === null ? null : after - before, result) };
}

function row(name: string, size: string, result: PostLoadResult, rssMb: number, extra: Record<string, number | string>): BenchRow {
  const latency = summarize(result.latencies.values());
  return {
    suite: NAME, name, size,
    rate: result.items / result.seconds,
    unit: 'items/s',
    meanMs: latency.mean,
    p50Ms: latency.p50,
    p99Ms: latency.p99,
    rssMb,
    extra: { batches: result.requests, batchesPerSecond: round1(result.requests / result.seconds), refusedWith503: result.refused, ...extra },
  };
}

export const suite: Suite = {
  name: NAME,
  rows: [FIRST, SUSTAINED],
  async run(options) {
    const size = fleetSize(options, INGEST_FLEET);
    const plan = options.quick ? PLAN.quick : PLAN.full;
    const payloads = buildIngestPayloads(fleetSpec(size), ITEMS_PER_BATCH, plan.bodies);
    const megabytes = payloads.bodies.reduce((sum, body) => sum + body.bytes.byteLength, 0) / 1048576;
    const sizeText = `${plan.bodies} batches x 10k items (${(megabytes / plan.bodies).toFixed(2)} MB each), ${payloads.vms} VMs`;
    const service = await startJvmlens({ dataDir: temporaryDir('ingest-'), workers: SERVICE_WORKERS });
    try {
      const url = `${service.gatewayUrl}/agent/v1/events`;
      const auth = { 'x-api-key': service.apiKey };
      for (const setup of payloads.setup) {
        const response = await fetch(url, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: setup });
        if (response.status !== 200) throw new Error(`set-up batch answered ${response.status}: ${await response.text()}`);
      }
      // Events carry the wall-clock time, as agents stamp them, and each send a later one than the last:
      // a replay with the same time would be a no-op to merge.
      let clock = 0;
      const load = { url, headers: { ...auth, 'content-type': 'application/x-ndjson' }, connections: CONNECTIONS };
      const send = (index: number) => {
        const body = payloads.bodies[index % payloads.bodies.length];
        clock = Math.max(Date.now(), clock + 1);
        return { bytes: stampTime(body, clock), items: body.items };
      };
      const extra = { load: `node:http client in the bench process (shares the CPUs), ${CONNECTIONS} connections`, rss: 'server process' };
      const rows: BenchRow[] = [];
      // Every batch once: code records are created (the fleet's shared framework methods only by the first batches).
      const first = await measured(service.pid, () => runPostLoad({ ...load, requests: plan.bodies, next: send }));
      if (wanted(options, NAME, FIRST)) rows.push(row(FIRST, sizeText, first.result, processRssMb(service.pid), { ...extra, ...first.cpu }));
      if (wanted(options, NAME, SUSTAINED)) {
        const sustained = await measured(service.pid, () => runPostLoad({ ...load, seconds: plan.seconds, next: send }));
        rows.push(row(SUSTAINED, `${sizeText}, resent with later times for ${plan.seconds} s`, sustained.result, processRssMb(service.pid), { ...extra, ...sustained.cpu, target: '>= 300,000 items/s (issue 2)' }));
      }
      return rows;
    } finally {
      await service.stop();
    }
  },
};
