// CVE benchmarks on a real service: GET /public/cve/events pages under concurrent load (and its handler alone), re-match after an import, OSV import throughput.
import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CveIndex } from '../../src/engine/cve/events-index.ts';
import { cveRoutes } from '../../src/http/routes/cve.ts';
import type { ApiRequest } from '../../src/http/types.ts';
import { SERVE_NODE_FLAGS } from '../../src/node-flags.ts';
import { fleetBatches } from '../../src/seed/fleet.ts';
import { Dictionary } from '../../src/storage/dictionary.ts';
import { zipArchive } from '../../src/seed/zip-archive.ts';
import { openStore } from '../../src/storage/store.ts';
import { describeFleet, fleetSize, fleetSpec, seededDataDir, STANDARD_FLEET, temporaryDir } from '../fleet.ts';
import type { FleetSize } from '../fleet.ts';
import { newBench, progress, runTinybench, wanted } from '../harness.ts';
import type { BenchOptions, BenchRow, Suite } from '../harness.ts';
import { loadNote, loadPlan, runLoad } from '../load.ts';
import type { LoadResult } from '../load-spec.ts';
import { MAIN, processCpuSeconds, processRssMb, SERVICE_WORKERS, spawnChild, startJvmlens, waitForLine } from '../service.ts';
import type { Child, JvmlensService } from '../service.ts';
import { round1, Samples, summarize } from '../stats.ts';

const NAME = 'cve';
const EVENTS = 'GET /public/cve/events tags.K, limit 100, cursors across the fleet';
const EVENTS_HANDLER = 'CVE events handler in process (no HTTP), the same pages';
const VISIBLE = 'cve import -> new CVE in GET /public/cve/events';
const REMATCH = 're-match of the fleet in the worker (service log)';
const IMPORT_FOLDER = 'cve import, folder of OSV JSON files';
const IMPORT_ZIP = 'cve import, zip archive (deflated)';

/** With the curated set, 60 components per VM give about 25 (VM, component, CVE) rows per VM. */
const EVENTS_FLEET: Record<'quick' | 'full', FleetSize> = {
  quick: { vms: 2_000, componentsPerVm: 60, methods: 2_000 },
  full: { vms: 40_000, componentsPerVm: 60, methods: 20_000 },
};
/**
 * The curated set gives only ~3 rows per VM on the seeded fleet; advisories on the synthetic library-0 to
 * library-39 (every version) add ~20 more, so the full fleet holds about a million rows.
 */
const LIBRARY_ADVISORIES = 40;

/** The URL of a page of GET /public/cve/events on `service` with `query`. */
function eventsUrl(service: Pick<JvmlensService, 'apiUrl'>, query: Record<string, string | number>): string {
  return `${service.apiUrl}/public/cve/events?${new URLSearchParams(Object.entries(query).map(([key, value]): [string, string] => [key, String(value)]))}`;
}

/** Issue 5: re-match on 100,000 VMs; 20 components each keeps the seeding to minutes (the catalogue, not the VM count, sets the re-match work). */
const REMATCH_FLEET: Record<'quick' | 'full', FleetSize> = {
  quick: STANDARD_FLEET.quick,
  full: { vms: 100_000, componentsPerVm: 20, methods: 20_000 },
};
const IMPORT_RECORDS = { quick: 5_000, full: 20_000 };
const REPEATS = { quick: 2, full: 3 };
/** Tag filters the load rotates over (the seeded fleet's tag values). */
const TAGS: readonly [string, string][] = [['env', 'prod'], ['env', 'staging'], ['region', 'eu-west-1'], ['team', 'core'], ['AppEnv', 'payments'], ['region', 'ap-south-1']];
const CURSORS_PER_TAG = 8;


function timingRow(name: string, size: string, samplesMs: readonly number[], rssMb: number, extra: Record<string, number | string>): BenchRow {
  const s = summarize(samplesMs);
  return { suite: NAME, name, size, rate: 1000 / s.mean, unit: 'ops/s', meanMs: s.mean, p50Ms: s.p50, p99Ms: s.p99, rssMb, extra: { samplesMs: samplesMs.map((ms) => Math.round(ms)).join(' '), ...extra } };
}

// ---- (1) GET /public/cve/events under load ----

/** Walks every event of the fleet (limit 1000): the exact row count, rows per tag, and cursors spread over the vmId order. */
async function surveyEvents(service: JvmlensService): Promise<{ rows: number; perTag: Map<string, number>; cursors: string[]; seconds: number }> {
  const started = performance.now();
  const perTag = new Map<string, number>();
  const tokens: string[] = [];
  let rows = 0;
  let afterToken: string | undefined;
  for (;;) {
    const response = await fetch(eventsUrl(service, afterToken === undefined ? { limit: 1000 } : { limit: 1000, afterToken }), { headers: { 'x-api-key': service.apiKey } });
    const page = (await response.json()) as { data: { tags: Record<string, string> | null }[]; afterToken?: string; hasNext: boolean };
    if (response.status !== 200) throw new Error(`events survey: ${response.status} ${JSON.stringify(page)}`);
    rows += page.data.length;
    for (const item of page.data) {
      for (const [key, value] of Object.entries(item.tags ?? {})) perTag.set(`${key}=${value}`, (perTag.get(`${key}=${value}`) ?? 0) + 1);
    }
    if (!page.hasNext) break;
    afterToken = page.afterToken!;
    tokens.push(afterToken);
  }
  // Cursors are keyset positions: one taken without a filter starts a filtered page at the same place.
  const cursors = Array.from({ length: CURSORS_PER_TAG }, (_, i) => tokens[Math.floor(((i + 0.5) * tokens.length) / CURSORS_PER_TAG)]).filter((t) => t !== undefined);
  return { rows, perTag, cursors, seconds: (performance.now() - started) / 1000 };
}

/** One advisory per synthetic library of the seeded fleet (`library-K`, groupId `com.example.libK%50`), every version affected. */
function libraryAdvisories(count: number): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, k) => ({
    id: `GHSA-bnch-lib-${k}`, modified: '2026-01-01T00:00:00Z', aliases: [`CVE-2096-${String(1000 + k)}`],
    severity: [{ type: 'CVSS_V3', score: k % 2 === 0 ? 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H' : 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:L/I:N/A:N' }],
    affected: [{ package: { ecosystem: 'Maven', name: `com.example.lib${k % 50}:library-${k}` }, ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '0' }] }] }],
  }));
}

/** A copy of the seeded fleet (which must stay as seeded) with the library advisories imported. */
async function eventsDataDir(size: FleetSize): Promise<string> {
  const dataDir = temporaryDir('cve-events-');
  cpSync(await seededDataDir(size), dataDir, { recursive: true });
  const folder = temporaryDir('cve-events-osv-');
  for (const record of libraryAdvisories(LIBRARY_ADVISORIES)) writeFileSync(join(folder, `${record.id as string}.json`), JSON.stringify(record));
  await runImport(dataDir, [folder]);
  return dataDir;
}

/** The pages both events rows request: a first page and the survey's cursors for each tag. */
async function eventsPaths(service: JvmlensService): Promise<{ paths: string[]; survey: Awaited<ReturnType<typeof surveyEvents>> }> {
  progress(`cve: counting the (VM, component, CVE) rows (service up in ${(service.readyMs / 1000).toFixed(1)} s)`);
  const survey = await surveyEvents(service);
  progress(`cve: ${survey.rows} rows, walked in ${survey.seconds.toFixed(1)} s`);
  const paths: string[] = [];
  for (const [key, value] of TAGS) {
    for (const afterToken of [undefined, ...survey.cursors]) {
      const url = new URL(eventsUrl(service, { [`tags.${key}`]: value, limit: 100, ...(afterToken === undefined ? {} : { afterToken }) }));
      paths.push(`${url.pathname}${url.search}`);
    }
  }
  return { paths, survey };
}

/** GET /public/cve/events over HTTP under load, then (with the service stopped) its handler alone in this process. */
async function eventsRows(options: BenchOptions): Promise<BenchRow[]> {
  const size = fleetSize(options, EVENTS_FLEET);
  const dataDir = await eventsDataDir(size);
  const service = await startJvmlens({ dataDir, workers: SERVICE_WORKERS }, 600_000);
  const rows: BenchRow[] = [];
  let paths: string[];
  let sizeText: string;
  try {
    const pages = await eventsPaths(service);
    paths = pages.paths;
    sizeText = `${describeFleet(size)}, curated + ${LIBRARY_ADVISORIES} library advisories: ${pages.survey.rows.toLocaleString('en-US')} (VM, component, CVE) rows`;
    if (wanted(options, NAME, EVENTS)) rows.push(await eventsUnderLoad(options, service, paths, sizeText, pages.survey));
  } finally {
    await service.stop();
  }
  if (wanted(options, NAME, EVENTS_HANDLER)) rows.push(...(await eventsHandler(options, dataDir, paths, sizeText)));
  return rows;
}

async function eventsUnderLoad(options: BenchOptions, service: JvmlensService, paths: readonly string[], size: string, survey: { rows: number; perTag: Map<string, number> }): Promise<BenchRow> {
  const plan = loadPlan(options);
  const spec = { paths, headers: { 'x-api-key': service.apiKey }, connections: plan.connections, seconds: plan.seconds };
  await runLoad(service.apiUrl, { ...spec, seconds: plan.warmupSeconds });
  const latencies = new Samples();
  let requests = 0;
  let seconds = 0;
  const rounds: LoadResult[] = [];
  const cpuBefore = processCpuSeconds(service.pid);
  for (let round = 0; round < plan.rounds; round++) {
    const load = await runLoad(service.apiUrl, spec);
    requests += load.requests;
    seconds += load.seconds;
    latencies.addAll(load.latencies);
    rounds.push(load);
  }
  const cpuAfter = processCpuSeconds(service.pid);
  const latency = summarize(latencies.values());
  const tagRows = TAGS.map(([key, value]) => `${key}=${value}:${survey.perTag.get(`${key}=${value}`) ?? 0}`).join(' ');
  const extra: Record<string, number | string> = {
    rows: survey.rows,
    itemsPerSecond: Math.round((requests * 100) / seconds),
    paths: `${TAGS.length} tags x ${paths.length / TAGS.length} cursors (first page and keyset positions spread over the fleet)`,
    rowsPerTag: tagRows,
    load: loadNote(plan),
    // The row's p99 is over every round's responses; each round's own shows how steady the machine was.
    roundP99Ms: rounds.map((load) => round1(summarize(load.latencies.values()).p99)).join(' '),
    cpuStealPercent: rounds.map((load) => load.stealPercent ?? '-').join(' '),
    rss: 'server process',
  };
  if (cpuBefore !== null && cpuAfter !== null) extra.serverCpuUsPerReq = round1(((cpuAfter - cpuBefore) / requests) * 1e6);
  return {
    suite: NAME, name: EVENTS, size,
    rate: requests / seconds, unit: 'req/s', meanMs: latency.mean, p50Ms: latency.p50, p99Ms: latency.p99, rssMb: processRssMb(service.pid), extra,
  };
}

/**
 * The route's handler alone on the same pages, in this process: query parsing, the index walk and the page's
 * bytes, without HTTP, the socket or a load generator. The difference to the HTTP row's server CPU per request
 * is what serving costs.
 */
async function eventsHandler(options: BenchOptions, dataDir: string, paths: readonly string[], size: string): Promise<BenchRow[]> {
  const store = openStore(dataDir);
  try {
    const index = new CveIndex(store, new Dictionary(store));
    await index.rebuild();
    const [route] = cveRoutes({ clock: () => Date.now() }, index);
    const requests = paths.map((path) => handlerRequest(new URL(path, 'http://bench')));
    let next = 0;
    const page = (): void => {
      const response = route.handler(requests[next]);
      if (response instanceof Promise || response.status !== 200) throw new Error(`events handler answered ${response instanceof Promise ? 'asynchronously' : response.status}`);
      next = (next + 1) % requests.length;
    };
    // The first page of a VM reads its USED bits once, as in the service before the HTTP row measured it.
    for (let k = 0; k < requests.length; k++) page();
    const bench = newBench(options);
    bench.add(EVENTS_HANDLER, page);
    const rows = await runTinybench(NAME, size, bench);
    for (const row of rows) row.extra = { usPerPage: round1(row.meanMs * 1000), paths: `the ${paths.length} pages of the HTTP row in turn` };
    return rows;
  } finally {
    await store.close();
  }
}

function handlerRequest(url: URL): ApiRequest {
  return { method: 'GET', path: url.pathname, params: {}, query: url.searchParams, headers: {}, body: Buffer.alloc(0), principal: null, requestId: 'bench' };
}

// ---- (2) re-match after an import ----

interface LoggedService {
  apiUrl: string;
  apiKey: string;
  pid: number;
  child: Child;
}

/** `jvmlens serve` like startJvmlens, keeping the child so the suite can read the service's log. */
async function startLogged(dataDir: string): Promise<LoggedService> {
  const apiKey = `bench_${randomBytes(12).toString('hex')}`;
  const child = spawnChild(process.execPath, [...SERVE_NODE_FLAGS, MAIN, 'serve', '--gateway-port', '0', '--api-port', '0', '--data-dir', dataDir, '--api-key', apiKey, '--workers', String(SERVICE_WORKERS), '--shutdown-grace-ms', '0']);
  try {
    const gateway = await waitForLine(child, /jvmlens: gateway (http:\/\/\S+)/, 600_000);
    const api = await waitForLine(child, /jvmlens: api (http:\/\/\S+)\/public/, 600_000);
    for (;;) {
      const status = await fetch(`${gateway[1]}/opthub-health`).then(async (r) => (await r.arrayBuffer(), r.status), () => null);
      if (status === 200) break;
      if (child.process.exitCode !== null) throw new Error(`jvmlens exited before UP:\n${child.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return { apiUrl: api[1], apiKey, pid: child.process.pid!, child };
  } catch (error) {
    await child.stop();
    throw error;
  }
}

/** The service's "re-matched the fleet" log lines so far (stderr keeps its last 16 KiB; the service logs little else). */
function rematchLines(child: Child): { ms: number; componentsChanged: number; records: number }[] {
  return [...child.output().matchAll(/^\{.*"message":"re-matched the fleet against the vulnerability data".*\}$/gm)].map((m) => JSON.parse(m[0]));
}

/** For synthetic library-K of the seeded fleet (com.example.libK%50), one VM that carries it, from the deterministic generator. */
function vmsWithLibraries(size: FleetSize, count: number): { artifactId: string; groupId: string; vmId: string }[] {
  const found = new Map<string, string>();
  for (const batch of fleetBatches(fleetSpec(size), 500)) {
    for (const event of batch) {
      if (event.type !== 'components') continue;
      for (const item of event.items as { componentName: string }[]) {
        if (/^library-\d+$/.test(item.componentName) && !found.has(item.componentName)) found.set(item.componentName, String(event.vmId));
      }
    }
    if (Array.from({ length: count }, (_, k) => `library-${k}`).every((name) => found.has(name))) break;
  }
  return Array.from({ length: count }, (_, k) => ({ artifactId: `library-${k}`, groupId: `com.example.lib${k % 50}`, vmId: found.get(`library-${k}`)! }));
}

async function runImport(dataDir: string, paths: readonly string[]): Promise<{ wallMs: number; stdout: string }> {
  const started = performance.now();
  const child = spawnChild(process.execPath, [MAIN, 'cve', 'import', ...paths, '--data-dir', dataDir]);
  const code = await child.exited;
  if (code !== 0) throw new Error(`cve import exited with ${code}:\n${child.output()}`);
  return { wallMs: performance.now() - started, stdout: child.stdout() };
}

async function rematchAfterImport(options: BenchOptions): Promise<BenchRow[]> {
  const size = fleetSize(options, REMATCH_FLEET);
  const repeats = options.quick ? REPEATS.quick : REPEATS.full;
  // The shared seeded fleet must stay as seeded: the import goes into a copy.
  const dataDir = temporaryDir('cve-rematch-');
  cpSync(await seededDataDir(size), dataDir, { recursive: true });
  const targets = vmsWithLibraries(size, repeats);
  const service = await startLogged(dataDir);
  try {
    const first = rematchLines(service.child);
    const visible: number[] = [];
    const rematch: number[] = [];
    const changed: number[] = [];
    const osvFolder = temporaryDir('cve-rematch-osv-');
    for (const [r, target] of targets.entries()) {
      const cveId = `CVE-2098-${String(1000 + r)}`;
      const file = join(osvFolder, `rematch-${r}.json`);
      writeFileSync(file, JSON.stringify({
        id: `GHSA-bnch-${r}-${Date.now()}`, modified: new Date().toISOString(), aliases: [cveId],
        severity: [{ type: 'CVSS_V3', score: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H' }],
        affected: [{ package: { ecosystem: 'Maven', name: `${target.groupId}:${target.artifactId}` }, versions: ['1.0.0', '1.1.0', '2.0.0', '2.1.3'] }],
      }));
      const linesBefore = rematchLines(service.child).length;
      await runImport(dataDir, [file]);
      const imported = performance.now();
      // Polls one VM that holds the component: what a client waiting for the new CVE sees.
      for (;;) {
        const response = await fetch(eventsUrl(service, { vmId: target.vmId, limit: 1000 }), { headers: { 'x-api-key': service.apiKey } });
        const page = (await response.json()) as { data: { cveId: string }[] };
        if (page.data.some((item) => item.cveId === cveId)) break;
        if (performance.now() - imported > 120_000) throw new Error(`${cveId} not in the events of ${target.vmId} after 120 s`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      visible.push(performance.now() - imported);
      const lines = rematchLines(service.child);
      if (lines.length > linesBefore) {
        rematch.push(lines[lines.length - 1].ms);
        changed.push(lines[lines.length - 1].componentsChanged);
      }
      progress(`cve: import ${r + 1}/${targets.length}: visible after ${Math.round(visible[visible.length - 1])} ms, re-match ${rematch[rematch.length - 1] ?? '?'} ms`);
    }
    const sizeText = describeFleet(size);
    const rss = processRssMb(service.pid);
    const rows: BenchRow[] = [
      timingRow(VISIBLE, sizeText, visible, rss, { note: 'from the CLI exiting to the CVE in a page for a VM with the component; includes the service\'s 2 s check interval', polledEveryMs: 10 }),
    ];
    if (rematch.length > 0) {
      rows.push(timingRow(REMATCH, sizeText, rematch, rss, { componentsChanged: changed.join(' '), firstStartRematchMs: first.map((l) => l.ms).join(' '), workers: SERVICE_WORKERS }));
    }
    return rows;
  } finally {
    await service.child.stop();
  }
}

// ---- (3) OSV import throughput ----

/** Synthetic OSV records shaped like the GitHub Maven export: one to three packages, two ranges each, a CVSS v3 vector. */
function syntheticOsv(count: number): Record<string, unknown>[] {
  let state = 7;
  const int = (n: number) => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state % n;
  };
  const vectors = ['CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H', 'CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:U/C:H/I:H/A:H', 'CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:C/C:L/I:L/A:N'];
  return Array.from({ length: count }, (_, i) => ({
    schema_version: '1.4.0',
    id: `GHSA-syn${String(i).padStart(6, '0')}`,
    modified: '2026-01-01T00:00:00Z',
    published: '2025-06-01T00:00:00Z',
    aliases: [`CVE-2097-${10_000 + i}`],
    summary: `Synthetic advisory ${i}`,
    details: 'A synthetic record for the import benchmark.\nSecond line.',
    severity: [{ type: 'CVSS_V3', score: vectors[int(vectors.length)] }],
    affected: Array.from({ length: 1 + int(3) }, () => {
      const artifact = int(5_000);
      const major = 1 + int(5);
      return {
        package: { ecosystem: 'Maven', name: `org.synthetic${artifact % 40}:lib-${artifact}` },
        ranges: [
          { type: 'ECOSYSTEM', events: [{ introduced: '0' }, { fixed: `${major}.${int(20)}.${int(10)}` }] },
          { type: 'ECOSYSTEM', events: [{ introduced: `${major + 1}.0.0` }, { last_affected: `${major + 1}.${int(20)}.${int(10)}` }] },
        ],
        database_specific: { source: 'synthetic' },
      };
    }),
    references: [{ type: 'ADVISORY', url: `https://example.invalid/advisories/${i}` }],
  }));
}

async function importThroughput(options: BenchOptions): Promise<BenchRow[]> {
  const count = options.quick ? IMPORT_RECORDS.quick : IMPORT_RECORDS.full;
  const repeats = options.quick ? 1 : REPEATS.full;
  const records = syntheticOsv(count);
  const folder = temporaryDir('cve-osv-folder-');
  // 1,000 files per sub-folder, as the OSV export spreads them.
  for (const [i, record] of records.entries()) {
    const sub = join(folder, `part-${Math.floor(i / 1000)}`);
    if (i % 1000 === 0) mkdirSync(sub);
    writeFileSync(join(sub, `${record.id as string}.json`), JSON.stringify(record));
  }
  const zipFile = join(temporaryDir('cve-osv-zip-'), 'maven-osv.zip');
  const zip = zipArchive(records.map((record) => ({ name: `advisories/${record.id as string}.json`, content: JSON.stringify(record), deflate: true })));
  writeFileSync(zipFile, zip);
  const megabytes = records.reduce((sum, record) => sum + JSON.stringify(record).length, 0) / 1048576;
  const rows: BenchRow[] = [];
  for (const [name, path, sizeText] of [
    [IMPORT_FOLDER, folder, `${count.toLocaleString('en-US')} records, one file each (${megabytes.toFixed(1)} MB)`],
    [IMPORT_ZIP, zipFile, `${count.toLocaleString('en-US')} records in one zip (${(zip.length / 1048576).toFixed(1)} MB deflated)`],
  ] as const) {
    if (!wanted(options, NAME, name)) continue;
    const wall: number[] = [];
    const reported: number[] = [];
    for (let r = 0; r < repeats; r++) {
      const result = await runImport(temporaryDir('cve-import-'), [path]);
      const line = /imported (\d+) OSV records .* \((\d+) records\/s\)/.exec(result.stdout);
      if (line === null || Number(line[1]) !== count) throw new Error(`cve import did not import ${count} records: ${result.stdout}`);
      wall.push(result.wallMs);
      reported.push(Number(line[2]));
    }
    const s = summarize(wall);
    rows.push({
      suite: NAME, name, size: sizeText, rate: count / (s.mean / 1000), unit: 'items/s', meanMs: s.mean, p50Ms: s.p50, p99Ms: s.p99, rssMb: 0,
      extra: { runs: repeats, note: 'rate and times over the whole CLI process (start-up, validation, LMDB writes); a fresh data directory each run', cliReportedRecordsPerSecond: reported.join(' ') },
    });
  }
  return rows;
}

export const suite: Suite = {
  name: NAME,
  rows: [EVENTS, EVENTS_HANDLER, VISIBLE, REMATCH, IMPORT_FOLDER, IMPORT_ZIP],
  async run(options) {
    const rows: BenchRow[] = [];
    if (wanted(options, NAME, IMPORT_FOLDER) || wanted(options, NAME, IMPORT_ZIP)) rows.push(...(await importThroughput(options)));
    if (wanted(options, NAME, VISIBLE) || wanted(options, NAME, REMATCH)) rows.push(...(await rematchAfterImport(options)));
    if (wanted(options, NAME, EVENTS) || wanted(options, NAME, EVENTS_HANDLER)) rows.push(...(await eventsRows(options)));
    return rows;
  },
};
