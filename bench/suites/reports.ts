// Report generation end to end on a real service: POST to SUCCEEDED for each family, and GET of a full page.
import { request as httpRequest } from 'node:http';
import { describeFleet, fleetSize, seededDataDir } from '../fleet.ts';
import type { FleetSize } from '../fleet.ts';
import type { BenchOptions, BenchRow, Suite } from '../harness.ts';
import { wanted } from '../harness.ts';
import { processRssMb, SERVICE_WORKERS, startJvmlens } from '../service.ts';
import type { JvmlensService } from '../service.ts';
import { summarize } from '../stats.ts';

const NAME = 'reports';
const COMPONENT = 'component report, 1 filter, groupBy tags.env: POST to SUCCEEDED';
const JVM = 'JVM report, groupBy day over 30 days: POST to SUCCEEDED';
const CODE = 'code report, every method: POST to all pages written';
const PAGE = 'GET of a full report page (JSON)';
const PAGE_MSGPACK = 'GET of a full report page (msgpack)';

/** issue 4: the code report is measured on 1,000,000 methods. */
const CODE_FLEET = {
  quick: { vms: 500, componentsPerVm: 5, methods: 50_000 },
  full: { vms: 2_000, componentsPerVm: 10, methods: 1_000_000 },
} as const satisfies Record<'quick' | 'full', FleetSize>;

interface Timed {
  ms: number[];
  rssMb: number;
  reportId: string;
  body: Record<string, unknown>;
}

/** POSTs a report `runs` times and times each to its final state, sampling the server's RSS meanwhile. */
async function timeReport(service: JvmlensService, create: string, get: string, request: unknown, runs: number): Promise<Timed> {
  const headers = { 'x-api-key': service.apiKey, 'content-type': 'application/json' };
  const ms: number[] = [];
  let rssMb = processRssMb(service.pid);
  let reportId = '';
  let body: Record<string, unknown> = {};
  for (let run = 0; run < runs; run++) {
    const started = performance.now();
    const created = await fetch(`${service.apiUrl}${create}`, { method: 'POST', headers, body: JSON.stringify(request) });
    if (created.status !== 202) throw new Error(`POST ${create} answered ${created.status}: ${await created.text()}`);
    reportId = ((await created.json()) as { reportId: string }).reportId;
    for (;;) {
      const response = await fetch(`${service.apiUrl}${get}/${reportId}`, { headers });
      body = (await response.json()) as Record<string, unknown>;
      rssMb = Math.max(rssMb, processRssMb(service.pid));
      if (body.state !== 'PROCESSING') break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    if (body.state !== 'SUCCEEDED') throw new Error(`report ${reportId} ended ${String(body.state)}: ${JSON.stringify(body.errors)}`);
    ms.push(performance.now() - started);
  }
  return { ms, rssMb, reportId, body };
}

function row(name: string, size: string, ms: readonly number[], rssMb: number, extra: Record<string, number | string>): BenchRow {
  const summary = summarize(ms);
  return {
    suite: NAME, name, size, rate: 1000 / summary.mean, unit: 'ops/s',
    meanMs: summary.mean, p50Ms: summary.p50, p99Ms: summary.max, rssMb,
    extra: { runs: ms.length, minMs: Math.round(summary.min), maxMs: Math.round(summary.max), workers: SERVICE_WORKERS, rss: 'server process, peak while generating', ...extra },
  };
}

async function fleetReports(options: BenchOptions, runs: number): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  if (!wanted(options, NAME, COMPONENT) && !wanted(options, NAME, JVM)) return rows;
  const size = fleetSize(options);
  const service = await startJvmlens({ dataDir: await seededDataDir(size), workers: SERVICE_WORKERS });
  try {
    if (wanted(options, NAME, COMPONENT)) {
      const timed = await timeReport(service, '/public/component/report/schedule', '/public/component/report', { groupBy: ['tags.env'], filter: ["state != 'TERMINATED'"] }, runs);
      rows.push(row(COMPONENT, describeFleet(size), timed.ms, timed.rssMb, { items: Number(timed.body.totalCount), target: '<= 1,000 ms on 100k VMs x 100 components (issue 4)' }));
    }
    if (wanted(options, NAME, JVM)) {
      const timed = await timeReport(service, '/public/report/jvmInventory', '/public/report/jvmInventory', { groupBy: ['day'], from: '30d' }, runs);
      rows.push(row(JVM, describeFleet(size), timed.ms, timed.rssMb, { items: Number(timed.body.totalCount), target: '<= 1,000 ms on 100k VMs (issue 4)' }));
    }
  } finally {
    await service.stop();
  }
  return rows;
}

/** One GET over node:http, whose client reads a large body with less overhead than fetch's. */
function getBytes(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    httpRequest(url, { headers }, (response) => {
      let bytes = 0;
      response.on('data', (chunk: Buffer) => (bytes += chunk.length));
      response.on('end', () => (response.statusCode === 200 ? resolve(bytes) : reject(new Error(`GET ${url} answered ${response.statusCode}`))));
      response.on('error', reject);
    }).on('error', reject).end();
  });
}

/** GETs page 0 of a finished report again and again: latency per request (to the last byte), and the body size. */
async function timePage(service: JvmlensService, get: string, reportId: string, accept: string, count: number): Promise<{ ms: number[]; bytes: number }> {
  const ms: number[] = [];
  let bytes = 0;
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    bytes = await getBytes(`${service.apiUrl}${get}/${reportId}?page=0`, { 'x-api-key': service.apiKey, accept });
    ms.push(performance.now() - started);
  }
  return { ms, bytes };
}

async function codeReports(options: BenchOptions, runs: number): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  if (![CODE, PAGE, PAGE_MSGPACK].some((name) => wanted(options, NAME, name))) return rows;
  const size = fleetSize(options, CODE_FLEET);
  const service = await startJvmlens({ dataDir: await seededDataDir(size), workers: SERVICE_WORKERS });
  try {
    const timed = await timeReport(service, '/public/report/codeInventory', '/public/report/codeInventory', { from: '60d' }, runs);
    const pages = Number(timed.body.totalPages);
    rows.push(row(CODE, describeFleet(size), timed.ms, timed.rssMb, { methods: Number(timed.body.totalCount), pages, target: '<= 5,000 ms on 1,000,000 methods (issue 4)' }));
    for (const [name, accept] of [[PAGE, 'application/json'], [PAGE_MSGPACK, 'application/msgpack']] as const) {
      if (!wanted(options, NAME, name)) continue;
      const page = await timePage(service, '/public/report/codeInventory', timed.reportId, accept, options.quick ? 10 : 30);
      const summary = summarize(page.ms);
      rows.push({
        suite: NAME, name, size: `${(page.bytes / 1e6).toFixed(2)} MB page of ${pages}`, rate: 1000 / summary.mean, unit: 'req/s',
        meanMs: summary.mean, p50Ms: summary.p50, p99Ms: summary.p99, rssMb: processRssMb(service.pid),
        // The first GET of a page in msgpack also makes its msgpack from its JSON (then kept): shown apart.
        extra: { requests: page.ms.length, bytes: page.bytes, firstMs: Math.round(page.ms[0] * 10) / 10, client: 'node:http in the bench process, to the last byte', target: '<= 50 ms for a full 5.5 MB page (issue 4)' },
      });
    }
  } finally {
    await service.stop();
  }
  return rows;
}

export const suite: Suite = {
  name: NAME,
  rows: [COMPONENT, JVM, CODE, PAGE, PAGE_MSGPACK],
  async run(options) {
    const runs = options.quick ? 2 : 5;
    return [...(await fleetReports(options, runs)), ...(await codeReports(options, runs))];
  },
};
