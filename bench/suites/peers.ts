// jvmlens beside DuckDB (issue 14): the same fleet in both, each report timed in both in the same run, the
// answers cross-checked. jvmlens is timed as an API client sees it: POST to SUCCEEDED, pages stored.
import { createHash } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { flattenNested } from '../../src/cli/formats.ts';
import { DEFAULT_FLEET } from '../../src/seed/fleet.ts';
import { describeFleet, fleetSize, FLEET_SEED, temporaryDir } from '../fleet.ts';
import type { FleetSize } from '../fleet.ts';
import type { BenchOptions, BenchRow, Suite } from '../harness.ts';
import { progress, wanted } from '../harness.ts';
import { PeerFleet } from '../peer-fleet.ts';
import { processMemoryMb, processRssMb, SERVICE_WORKERS, startJvmlens } from '../service.ts';
import type { JvmlensService } from '../service.ts';
import { summarize } from '../stats.ts';

const NAME = 'peers';
const COMPONENT = "component report vs DuckDB: tags.env = 'prod', groupBy tags.team";
const LOG4J = "component report vs DuckDB: componentName = 'log4j-core', groupBy hostName";
const JVM_DAY = 'JVM report vs DuckDB: groupBy day over 30 days';
const JVM_VMS = 'JVM report vs DuckDB: one item per VM';
const CODE = 'code report vs DuckDB COPY TO JSON: every method, all pages written';

/** issue 14: 100,000 VMs x 100 components, and 1,000,000 methods for the code report. */
const PEER_FLEET = {
  quick: { vms: 2_000, componentsPerVm: 20, methods: 20_000 },
  full: { vms: 100_000, componentsPerVm: 100, methods: 1_000_000 },
} as const satisfies Record<'quick' | 'full', FleetSize>;

const DAY = 86_400_000;
type Item = Record<string, unknown>;

interface Report {
  ms: number;
  rssMb: number;
  /** The report's finished GET body (page 0). */
  body: Item;
  reportId: string;
}

interface Peer {
  ms: number;
  rows: unknown[][];
}

async function apiJson(service: JvmlensService, path: string, init: RequestInit = {}): Promise<Item> {
  const response = await fetch(`${service.apiUrl}${path}`, {
    ...init,
    headers: { 'x-api-key': service.apiKey, 'content-type': 'application/json' },
  });
  const body = (await response.json()) as Item;
  if (response.status >= 300) throw new Error(`${init.method ?? 'GET'} ${path} answered ${response.status}: ${JSON.stringify(body)}`);
  return body;
}

/** POST to the final state, polling as a client does; peak RSS of the server sampled meanwhile. */
async function runReport(service: JvmlensService, create: string, get: string, request: unknown): Promise<Report> {
  const started = performance.now();
  const { reportId } = (await apiJson(service, create, { method: 'POST', body: JSON.stringify(request) })) as { reportId: string };
  let rssMb = processRssMb(service.pid);
  for (;;) {
    const body = await apiJson(service, `${get}/${reportId}`);
    rssMb = Math.max(rssMb, processRssMb(service.pid));
    if (body.state === 'SUCCEEDED') return { ms: performance.now() - started, rssMb, body, reportId };
    if (body.state !== 'PROCESSING') throw new Error(`report ${reportId} ended ${String(body.state)}: ${JSON.stringify(body.errors)}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** Every page of a finished report, innermost items flattened with their group values. */
async function allItems(service: JvmlensService, get: string, report: Report): Promise<Item[]> {
  const items: Item[] = [];
  const pages = Number(report.body.totalPages);
  for (let page = 0; page < pages; page++) {
    const body = page === 0 ? report.body : await apiJson(service, `${get}/${report.reportId}?page=${page}`);
    flattenNested(body.data as Item[], {}, items);
  }
  return items;
}

async function timePeer(fleet: PeerFleet, sql: string): Promise<Peer> {
  const started = performance.now();
  const reader = await fleet.connection.runAndReadAll(sql);
  const rows = reader.getRowsJS() as unknown[][];
  return { ms: performance.now() - started, rows };
}

/**
 * A first run, timed apart (cold: compiled code and caches of both engines warm up in it), then the best
 * of `runs`: the figure least disturbed by the other core's work, for both engines alike. Every run's
 * time is kept: a fresh service's reports warm up over several.
 */
async function best<T extends { ms: number }>(runs: number, run: () => Promise<T>): Promise<T & { coldMs: number; runsMs: number[] }> {
  const coldMs = (await run()).ms;
  let fastest: T | null = null;
  const runsMs: number[] = [];
  for (let i = 0; i < runs; i++) {
    const result = await run();
    runsMs.push(result.ms);
    if (fastest === null || result.ms < fastest.ms) fastest = result;
  }
  return { ...fastest!, coldMs, runsMs };
}

function canonical(rows: readonly (readonly unknown[])[]): string {
  const lines = rows.map((row) => JSON.stringify(row.map((value) => (typeof value === 'bigint' ? Number(value) : value))));
  lines.sort();
  return createHash('sha256').update(lines.join('\n')).digest('hex');
}

/** Run times as the result file keeps them: "46,45,55". */
const msList = (runsMs: readonly number[]): string => runsMs.map((ms) => Math.round(ms)).join(',');

function peerRow(name: string, size: FleetSize, jvmlens: Report & { coldMs: number; runsMs: number[] }, peer: Peer & { coldMs: number; runsMs: number[] }, agree: boolean, extra: Record<string, number | string>, service: JvmlensService): BenchRow {
  const memory = processMemoryMb(service.pid);
  const summary = summarize([jvmlens.ms]);
  const ratio = jvmlens.ms / peer.ms;
  progress(`peers: ${name}: jvmlens ${jvmlens.ms.toFixed(0)} ms, DuckDB ${peer.ms.toFixed(0)} ms, ratio ${ratio.toFixed(2)} (first runs ${jvmlens.coldMs.toFixed(0)} and ${peer.coldMs.toFixed(0)} ms), answers ${agree ? 'agree' : 'DIFFER'}`);
  return {
    suite: NAME, name, size: describeFleet(size), rate: 1000 / summary.mean, unit: 'ops/s',
    meanMs: summary.mean, p50Ms: summary.p50, p99Ms: summary.max, rssMb: jvmlens.rssMb,
    extra: {
      jvmlensMs: Math.round(jvmlens.ms), duckdbMs: Math.round(peer.ms), ratio: Number(ratio.toFixed(3)),
      jvmlensColdMs: Math.round(jvmlens.coldMs), duckdbColdMs: Math.round(peer.coldMs), jvmlensRunsMs: msList(jvmlens.runsMs), duckdbRunsMs: msList(peer.runsMs),
      agree: agree ? 'yes' : 'NO', target: 'ratio <= 0.5 (issue 14)', timing: 'best of runs after a first run (cold, timed apart), each engine',
      rss: 'jvmlens server process, peak while generating', ...extra,
      ...(memory === null ? {} : { servicePeakRssMb: memory.peakRss, serviceAnonMb: memory.anon, serviceFileMb: memory.file }),
    },
  };
}

/** A component report with one filter and one group field, and the same question in SQL. */
interface ComponentQuestion {
  name: string;
  filter: string;
  groupBy: string;
  /** The SQL condition and group column that say the same. */
  where: string;
  column: string;
}

const COMPONENT_QUESTIONS: readonly ComponentQuestion[] = [
  { name: COMPONENT, filter: "tags.env = 'prod'", groupBy: 'tags.team', where: "v.env = 'prod'", column: 'v.team' },
  // Where a vulnerable library runs (the next Log4Shell): one library, thousands of hosts.
  { name: LOG4J, filter: "componentName = 'log4j-core'", groupBy: 'hostName', where: "c.name = 'log4j-core'", column: 'v.host' },
];

async function componentRow(question: ComponentQuestion, service: JvmlensService, fleet: PeerFleet, size: FleetSize, runs: number): Promise<BenchRow> {
  const get = '/public/component/report';
  const jvmlens = await best(runs, () => runReport(service, `${get}/schedule`, get, { filter: [question.filter], groupBy: [question.groupBy] }));
  const startTime = Number((jvmlens.body.parameters as Item).resolvedStartTime);
  const peer = await best(runs, () => timePeer(fleet, `
    SELECT ${question.column}, c.name, c.version, count(*) AS n
    FROM vm_component p JOIN vm v ON v.id = p.vm JOIN component c ON c.id = p.component
    WHERE ${question.where} AND v.last_heard >= ${startTime}
    GROUP BY ${question.column}, c.name, c.version ORDER BY ${question.column} NULLS LAST, c.name, c.version DESC`));
  const items = await allItems(service, get, jvmlens);
  const ours = items.map((item) => [item[question.groupBy] ?? null, item.componentName, item.componentVersion, item.count]);
  return peerRow(question.name, size, jvmlens, peer, canonical(ours) === canonical(peer.rows), { items: items.length, pages: Number(jvmlens.body.totalPages) }, service);
}

/** The window a JVM or code report resolved (its `params`), for the peer to ask the same question. */
function resolvedWindow(report: Report): { from: number; to: number } {
  const params = report.body.params as Item;
  return { from: Date.parse(String(params.resolvedFrom)), to: Date.parse(String(params.resolvedTo)) };
}

/** A VM's life in SQL (decisions §7): it ends now while RUNNING, else when it was last heard. */
function lifeEndSql(now: number): string {
  return `CASE WHEN stop_time >= start_time OR ${now} - last_heard > 300000 THEN last_heard ELSE greatest(${now}, last_heard) END`;
}

async function jvmDayRow(service: JvmlensService, fleet: PeerFleet, size: FleetSize, runs: number): Promise<BenchRow> {
  const get = '/public/report/jvmInventory';
  const jvmlens = await best(runs, () => runReport(service, get, get, { groupBy: ['day'], from: '30d' }));
  const { from, to } = resolvedWindow(jvmlens);
  const peer = await best(runs, () => timePeer(fleet, `
    WITH alive AS (
      SELECT id, greatest(start_time, ${from}) AS first, least(${lifeEndSql(to)}, ${to}) AS last FROM vm
      WHERE start_time <= ${to} AND ${lifeEndSql(to)} >= ${from})
    SELECT day(make_timestamp(d * ${DAY * 1000}::BIGINT)) AS day, count(DISTINCT id) AS n
    FROM alive, range(first // ${DAY}, last // ${DAY} + 1) AS days(d)
    GROUP BY day ORDER BY day`));
  const items = await allItems(service, get, jvmlens);
  const ours = items.map((item) => [item.day, item.count]);
  return peerRow(JVM_DAY, size, jvmlens, peer, canonical(ours) === canonical(peer.rows), { items: items.length }, service);
}

async function jvmVmsRow(service: JvmlensService, fleet: PeerFleet, size: FleetSize, runs: number): Promise<BenchRow> {
  const get = '/public/report/jvmInventory';
  const jvmlens = await best(runs, () => runReport(service, get, get, { from: '30d' }));
  const { from, to } = resolvedWindow(jvmlens);
  const peer = await best(runs, () => timePeer(fleet, `
    SELECT vm_id, host, CASE WHEN stop_time >= start_time THEN 'TERMINATED' WHEN ${to} - last_heard > 300000 THEN 'OFFLINE' ELSE 'RUNNING' END,
      agent_version, java_version, java_vendor, start_time, last_heard, app_env, env, region, team
    FROM vm WHERE start_time <= ${to} AND ${lifeEndSql(to)} >= ${from} ORDER BY host, vm_id`));
  const items = await allItems(service, get, jvmlens);
  const ours = items.map((item) => {
    const tags = (item.tags ?? {}) as Record<string, string>;
    return [item.vmId, item.hostName, item.state, item.agentVersion, item.javaVersion, item.javaVendor,
      Date.parse(String(item.startTime)), Date.parse(String(item.lastHeardTime)), tags.AppEnv ?? null, tags.env ?? null, tags.region ?? null, tags.team ?? null];
  });
  // Same rows in the same order: compared as they come, not as sets.
  const same = JSON.stringify(ours) === JSON.stringify(peer.rows.map((row) => row.map((value) => (typeof value === 'bigint' ? Number(value) : value))));
  return peerRow(JVM_VMS, size, jvmlens, peer, same, { items: items.length }, service);
}

async function codeRow(service: JvmlensService, fleet: PeerFleet, size: FleetSize, runs: number): Promise<BenchRow> {
  const get = '/public/report/codeInventory';
  const jvmlens = await best(runs, () => runReport(service, get, get, { from: '60d' }));
  const { from, to } = resolvedWindow(jvmlens);
  const dir = temporaryDir('duckdb-');
  let written = '';
  const copyTo = (file: string) => async (): Promise<Peer> => {
    const started = performance.now();
    await fleet.connection.run(`
      COPY (SELECT source AS sourceName, class AS className, method AS methodName,
          strftime(make_timestamp(min(first_seen) * 1000), '%Y-%m-%dT%H:%M:%S.%g') AS firstSeen,
          strftime(make_timestamp(max(last_seen) * 1000), '%Y-%m-%dT%H:%M:%S.%g') AS lastSeen
        FROM code GROUP BY source, class, method
        HAVING max(last_seen) >= ${from} AND min(first_seen) <= ${to}
        ORDER BY sourceName, className, methodName) TO '${file}' (FORMAT JSON)`);
    written = file;
    return { ms: performance.now() - started, rows: [] };
  };
  // Each run writes a new file, as each report writes new pages. Overwriting one file frees its page cache
  // and refills it at once; new output takes pages the kernel has not used lately, which on this VM costs
  // ~2 ms of system time per MB (200 MB here). Both are timed; the row's ratio is the like-for-like one.
  let run = 0;
  const peer = await best(runs, () => copyTo(join(dir, `code-${run++}.json`))());
  const sameFile = await best(runs, copyTo(join(dir, 'code-same.json')));
  const items = await allItems(service, get, jvmlens);
  const ours = items.map((item) => JSON.stringify([item.sourceName, item.className, item.methodName, item.firstSeen, item.lastSeen])).join('\n');
  const theirs = readFileSync(written, 'utf8').trim().split('\n').map((line) => {
    const row = JSON.parse(line) as Item;
    return JSON.stringify([row.sourceName, row.className, row.methodName, row.firstSeen, row.lastSeen]);
  }).join('\n');
  rmSync(dir, { recursive: true, force: true });
  const extra = { methods: items.length, pages: Number(jvmlens.body.totalPages), duckdbSameFileMs: Math.round(sameFile.ms), duckdbSameFileColdMs: Math.round(sameFile.coldMs) };
  progress(`peers: ${CODE}: DuckDB overwriting one file ${sameFile.ms.toFixed(0)} ms (first run ${sameFile.coldMs.toFixed(0)} ms)`);
  return peerRow(CODE, size, jvmlens, peer, ours === theirs, extra, service);
}

export const suite: Suite = {
  name: NAME,
  rows: [COMPONENT, LOG4J, JVM_DAY, JVM_VMS, CODE],
  async run(options: BenchOptions): Promise<BenchRow[]> {
    const size = fleetSize(options, PEER_FLEET);
    const runs = options.runs ?? (options.quick ? 1 : 3);
    const service = await startJvmlens({ dataDir: temporaryDir('peers-'), workers: SERVICE_WORKERS });
    const rows: BenchRow[] = [];
    try {
      const fleet = await PeerFleet.create();
      progress(`peers: ingesting ${describeFleet(size)} into jvmlens (gateway) and DuckDB (appender)`);
      const loaded = await fleet.ingest({ ...DEFAULT_FLEET, ...size, seed: FLEET_SEED, now: Date.now() }, service.gatewayUrl, service.apiKey);
      progress(`peers: ingested: jvmlens ${loaded.jvmlensS.toFixed(1)} s through the gateway, DuckDB ${loaded.duckdbS.toFixed(1)} s appending`);
      for (const question of COMPONENT_QUESTIONS) if (wanted(options, NAME, question.name)) rows.push(await componentRow(question, service, fleet, size, runs));
      if (wanted(options, NAME, JVM_DAY)) rows.push(await jvmDayRow(service, fleet, size, runs));
      if (wanted(options, NAME, JVM_VMS)) rows.push(await jvmVmsRow(service, fleet, size, runs));
      if (wanted(options, NAME, CODE)) rows.push(await codeRow(service, fleet, size, runs));
    } finally {
      await service.stop();
    }
    return rows;
  },
};
