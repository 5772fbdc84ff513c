// Cluster mode (issue 15) beside a single node in the same run: three nats-server processes (JetStream, R3)
// and three jvmlens nodes on this one machine, storing every class or in code groups. Ingestion acknowledged
// and applied (and a read meanwhile), a code report over what it sent, component reports (fanned
// out over the nodes by VM shard from --report-fan-out-vms), CVE event pages, a killed node back UP, a new
// node copying a live node's data once the log was truncated, and the write pause when a NATS server dies.
// Ingestion, component reports and CVE pages also run with each node under a CPU quota: machines of equal CPU.
import { ClusterLog } from '../../src/cluster/log.ts';
import { STREAM } from '../../src/cluster/commands.ts';
import { startNatsServers } from '../../src/cluster/nats-servers.ts';
import type { NatsServer } from '../../src/cluster/nats-servers.ts';
import { lstatSync, readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { cpuQuota } from '../cpu-quota.ts';
import type { CpuQuota } from '../cpu-quota.ts';
import { describeFleet, fleetSize, fleetSpec, seedFlags, temporaryDir } from '../fleet.ts';
import type { FleetSize } from '../fleet.ts';
import { progress, wanted } from '../harness.ts';
import type { BenchOptions, BenchRow, Suite } from '../harness.ts';
import { buildIngestPayloads, stampTime } from '../ingest-payloads.ts';
import { loadNote, loadPlan, runLoad } from '../load.ts';
import { runPostLoad } from '../post-load.ts';
import type { PostBody, PostLoadResult } from '../post-load.ts';
import { MAIN, processCpuSeconds, processRssMb, spawnChild, startJvmlens } from '../service.ts';
import type { JvmlensService } from '../service.ts';
import { round1, Samples, summarize } from '../stats.ts';

/** The resident size of the deployment's largest node. */
function largestRssMb(deployment: Deployment): number {
  return Math.max(...deployment.nodes.map((node) => processRssMb(node.pid)));
}

const NAME = 'cluster';
/**
 * Code first seen costs several times what a known method does (its class records are read and rewritten):
 * one pass over every body, the same items for both deployments. Timed over seconds instead, the faster
 * deployment would spend a smaller share of its run on first sightings, and the two rows would not compare.
 */
const INGEST_FIRST = 'cluster: ingestion, NDJSON batches of 10,000 code items first seen, acknowledged';
/** Then the same bodies again for a fixed time (later event times): what a fleet restarting known applications sends. */
const INGEST = 'cluster: ingestion, NDJSON batches of 10,000 code items already known, acknowledged';
/**
 * A node with the machine to itself: what each node of a cluster on separate machines applies, and so about
 * what such a cluster acknowledges (a gateway takes a batch once its node applied the log so far).
 */
const APPLY_ALONE = 'cluster: known code applied by one node alone from the log, paused while the others took it';
/**
 * The same two ingestion rows with each node, and a nats-server, under a CPU quota of MACHINE_CORES: a
 * single node on a machine against three nodes on three machines like it, which this one machine emulates.
 */
const MACHINES_FIRST = 'cluster: machines of equal CPU: ingestion, NDJSON batches of 10,000 code items first seen, acknowledged';
const MACHINES_KNOWN = 'cluster: machines of equal CPU: ingestion, NDJSON batches of 10,000 code items already known, acknowledged';
/**
 * Reads on such machines: the component reports of REPORT and REPORT_BY_HOST, and CVE pages under load spread
 * over every node, on the report fleet seeded before the quotas (at a quarter of this machine, seeding would
 * take most of the run).
 */
const MACHINES_REPORT = 'cluster: machines of equal CPU: component report, groupBy tags.env: POST to SUCCEEDED';
const MACHINES_REPORT_BY_HOST = 'cluster: machines of equal CPU: component report, log4j-core by hostName: POST to SUCCEEDED';
const MACHINES_CVE_LOAD = 'cluster: machines of equal CPU: CVE events page of 100, tag filter, 10 connections spread over every node';
/** The same reads asking for what each node has applied (`x-jvmlens-consistency: local`): no question to the log. */
const MACHINES_CVE_LOCAL = 'cluster: machines of equal CPU: CVE events page of 100, tag filter, local reads, 10 connections spread over every node';
const MACHINES_READ_ROWS = [MACHINES_REPORT, MACHINES_REPORT_BY_HOST, MACHINES_CVE_LOAD, MACHINES_CVE_LOCAL];
/** Cores of each emulated machine: three machines and the load generator share this one's. */
const MACHINE_CORES = availableParallelism() / 4;
/** Read your writes has a price while writes stream in: a read waits until its node applied every acknowledged write. */
const READ_DURING_INGEST = 'cluster: an instance read while the known-code ingestion runs';
const REPORT = 'cluster: component report, groupBy tags.env: POST to SUCCEEDED';
/** Where a library runs: 50k hosts, so the nodes' partials are large and every host is in several shards. */
const REPORT_BY_HOST = 'cluster: component report, log4j-core by hostName: POST to SUCCEEDED';
/**
 * Every method the ingestion rows sent: with code groups, the coordinator gathers the other groups' classes
 * from their nodes; without, it reads its own.
 */
const CODE_REPORT = 'cluster: code report, every method seen in 30 days, on the ingestion rows\' fleet: POST to SUCCEEDED';
/** Where each report is created and read, and its body. */
const LOG4J_BY_ENV = { path: '/public/component/report', body: { groupBy: ['tags.env'], filter: ["componentName = 'log4j-core'"] } };
const LOG4J_BY_HOST = { path: '/public/component/report', body: { groupBy: ['hostName'], filter: ["componentName = 'log4j-core'"] } };
const REPORTS: Record<string, { path: string; body: Record<string, unknown> }> = {
  [REPORT]: LOG4J_BY_ENV,
  [REPORT_BY_HOST]: LOG4J_BY_HOST,
  [MACHINES_REPORT]: LOG4J_BY_ENV,
  [MACHINES_REPORT_BY_HOST]: LOG4J_BY_HOST,
  [CODE_REPORT]: { path: '/public/report/codeInventory', body: { from: '30d' } },
};
/** How a report is created: the component family schedules under its own path. */
const createPath = (path: string): string => (path === '/public/component/report' ? `${path}/schedule` : path);
const CVE = 'cluster: CVE events page of 100, tag filter';
const CVE_LOAD = 'cluster: CVE events page of 100, tag filter, 10 connections on one node';
const REJOIN = 'cluster: a killed node restarted to UP, having replayed what it missed';
const NEW_NODE = 'cluster: a new node started once the log was truncated: a live node\'s data copied over NATS, then UP';
const TAKEOVER = 'cluster: a report whose coordinator is SIGKILLed while generating it, until another node serves it SUCCEEDED';
const PAUSE = 'cluster: acknowledged-write pause when the log\'s leader nats-server dies';
/** The same kill, seen by readers on the two other nodes: each read waits until its node applied every acknowledged write. */
const READ_PAUSE = 'cluster: longest read on the other nodes when the log\'s leader nats-server dies';
const KEY = 'bench_cluster_key_0123456789';
const CONNECTIONS = 4;

const INGEST_FLEET: Record<'quick' | 'full', FleetSize> = {
  quick: { vms: 1_000, componentsPerVm: 20, methods: 100_000 },
  full: { vms: 10_000, componentsPerVm: 20, methods: 1_000_000 },
};
/** Issue 15 asks for the component report on 100k VMs x 100 components; quick runs stay small. */
const REPORT_FLEET: Record<'quick' | 'full', FleetSize> = {
  quick: { vms: 1_000, componentsPerVm: 20, methods: 1_000 },
  full: { vms: 100_000, componentsPerVm: 100, methods: 10_000 },
};
const PLAN = {
  quick: { bodies: 6, seconds: 3, reportRuns: 2, pages: 50, missedRounds: 1 },
  full: { bodies: 60, seconds: 15, reportRuns: 5, pages: 500, missedRounds: 5 },
};

interface Deployment {
  label: string;
  /** Where the nodes' data directories are. */
  dir: string;
  nodes: JvmlensService[];
  nats: NatsServer[];
  stop(): Promise<void>;
}

async function singleNode(): Promise<Deployment> {
  const node = await startJvmlens({ dataDir: temporaryDir('single-'), workers: 1, apiKey: KEY });
  return { label: 'single node', dir: '', nodes: [node], nats: [], stop: () => node.stop() };
}

/** Node `index` (from 1) of a cluster with `codeGroups` groups: nodes take the groups in turn. */
function nodeOptions(dir: string, urls: string, index: number, codeGroups = 1) {
  const groups = codeGroups === 1 ? [] : ['--code-groups', String(codeGroups), '--code-group', String((index - 1) % codeGroups)];
  return { dataDir: `${dir}/n${index}`, workers: 1, apiKey: KEY, args: ['--cluster', urls, '--node-id', `n${index}`, ...groups] };
}

/**
 * Three nodes that store every class, or whose classes fall into `codeGroups` groups; `fanOut`: every
 * component report fanned out over them, whatever the fleet's size (`--report-fan-out-vms 0`).
 */
async function threeNodes(codeGroups = 1, fanOut = false): Promise<Deployment> {
  const dir = temporaryDir('cluster-');
  const nats = await startNatsServers(3, dir);
  const urls = nats.map((server) => server.url).join(',');
  const nodes: JvmlensService[] = [];
  try {
    for (const index of [1, 2, 3]) {
      const options = nodeOptions(dir, urls, index, codeGroups);
      nodes.push(await startJvmlens(fanOut ? { ...options, args: [...options.args, '--report-fan-out-vms', '0'] } : options));
    }
  } catch (error) {
    await Promise.all(nodes.map((node) => node.stop()));
    await Promise.all(nats.map((server) => server.stop()));
    throw error;
  }
  const label = codeGroups === 1 ? '3 nodes, 3 nats-server (R3)' : `3 nodes in ${codeGroups} code groups, 3 nats-server (R3)`;
  return {
    label: fanOut ? `${label}, every report fanned out` : label,
    dir,
    nodes,
    nats,
    async stop() {
      await Promise.all(nodes.map((node) => node.stop()));
      await Promise.all(nats.map((server) => server.stop()));
    },
  };
}

/**
 * `start`'s deployment with each node, and the nats-server of the same index, under a CPU quota of `cores`
 * of its own: as on machines of that size, which the quota rows compare. `prepare` runs before the quotas.
 * Null, said why, where this machine allows no quota (cgroups need root or a delegated group).
 */
async function onMachines(cores: number, start: () => Promise<Deployment>, prepare?: (deployment: Deployment) => Promise<void>): Promise<Deployment | null> {
  const probe = cpuQuota(`jvmlens-bench-${process.pid}-probe`, cores);
  if (probe instanceof Error) {
    progress(`${NAME}: the rows on machines of equal CPU are skipped: ${probe.message}`);
    return null;
  }
  probe.remove();
  const deployment = await start();
  const machines: CpuQuota[] = [];
  const stop = async () => {
    await deployment.stop();
    for (const machine of machines) machine.remove();
  };
  try {
    await prepare?.(deployment);
  } catch (error) {
    await stop();
    throw error;
  }
  try {
    for (const [index, node] of deployment.nodes.entries()) {
      const machine = cpuQuota(`jvmlens-bench-${process.pid}-${index}`, cores);
      if (machine instanceof Error) throw machine;
      machines.push(machine);
      machine.add(node.pid);
      const server = deployment.nats[index];
      if (server !== undefined) machine.add(server.pid!);
    }
  } catch (error) {
    await stop();
    progress(`${NAME}: the rows on machines of equal CPU are skipped: ${(error as Error).message}`);
    return null;
  }
  const what = deployment.nats.length === 0 ? 'the node' : 'each node with a nats-server';
  return {
    ...deployment,
    label: `${deployment.label}, ${what} on a machine of ${cores} cores (CPU quota)`,
    stop,
  };
}

/** A VM no fleet of the bench has. */
const NO_SUCH_VM = '00000000-0000-4000-8000-000000000000';

/**
 * Resolves once the node answers a data request, which first waits until the node applied every write
 * acknowledged before it (read your writes): an unknown VM's 404. (`/public/me` is not a data request: it
 * answers without waiting, which made the rows' "applied on every node" figures the acknowledged ones.)
 */
async function caughtUp(node: JvmlensService): Promise<void> {
  for (;;) {
    const response = await fetch(`${node.apiUrl}/public/instance/${NO_SUCH_VM}`, { headers: { 'x-api-key': KEY } });
    await response.arrayBuffer();
    if (response.status === 404) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * One reader asking for a VM every 50 ms on the last node's API until `done`: the price of read-your-writes
 * while writes stream in (each read waits until its node applied every write acknowledged before it).
 */
async function readWhile(node: JvmlensService, vmId: string, done: () => boolean): Promise<number[]> {
  const latencies: number[] = [];
  while (!done()) {
    const started = performance.now();
    const response = await fetch(`${node.apiUrl}/public/instance/${vmId}`, { headers: { 'x-api-key': KEY } });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`a read during ingestion answered ${response.status}`);
    latencies.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return latencies;
}

/** Each node's and the nats-servers' CPU seconds so far. */
function deploymentCpu(deployment: Deployment): { nodes: number; nats: number } {
  const sum = (pids: number[]) => pids.reduce((total, pid) => total + (processCpuSeconds(pid) ?? 0), 0);
  return { nodes: sum(deployment.nodes.map((node) => node.pid)), nats: sum(deployment.nats.map((server) => server.pid!)) };
}

/** What `load` acknowledged per second, and once every node applied it (every node answers a read). */
async function ingestRow(deployment: Deployment, name: string, size: string, load: () => Promise<PostLoadResult[]>): Promise<{ row: BenchRow; loadSeconds: number }> {
  const cpuBefore = deploymentCpu(deployment);
  const started = performance.now();
  const results = await load();
  const loadSeconds = (performance.now() - started) / 1000;
  await Promise.all(deployment.nodes.map((node) => caughtUp(node)));
  const appliedSeconds = (performance.now() - started) / 1000;
  const cpuAfter = deploymentCpu(deployment);
  const items = results.reduce((sum, result) => sum + result.items, 0);
  const cpuPerItem = (seconds: number) => round1((seconds / items) * 1e6);
  const latencies = summarize(results.flatMap((result) => [...result.latencies.values()]));
  return {
    loadSeconds,
    row: {
      suite: NAME, name: `${name}, ${deployment.label}`, size, rate: items / loadSeconds, unit: 'items/s',
      meanMs: latencies.mean, p50Ms: latencies.p50, p99Ms: latencies.p99, rssMb: largestRssMb(deployment),
      extra: {
        items, appliedOnEveryNodeItemsPerS: Math.round(items / appliedSeconds), applyLagS: round1(appliedSeconds - loadSeconds),
        refusedWith503: results.reduce((sum, result) => sum + result.refused, 0),
        jvmlensCpuUsPerItem: cpuPerItem(cpuAfter.nodes - cpuBefore.nodes), natsCpuUsPerItem: cpuPerItem(cpuAfter.nats - cpuBefore.nats),
        load: `node:http, ${CONNECTIONS} connections over ${deployment.nodes.length} gateway(s)`,
      },
    },
  };
}

/** Part `index` of `total` spread over `parts` as evenly as whole numbers go. */
function shareOf(total: number, parts: number, index: number): number {
  return Math.floor(total / parts) + (index < total % parts ? 1 : 0);
}

/**
 * `next`'s bodies posted through `gateways` with CONNECTIONS connections in all, spread as a load balancer
 * would: for `seconds`, or `requests` in all.
 */
function postThrough(gateways: readonly string[], next: () => PostBody, limit: { seconds: number } | { requests: number }): Promise<PostLoadResult[]> {
  return Promise.all(gateways.map((url, index) => runPostLoad({
    url, headers: { 'x-api-key': KEY, 'content-type': 'application/x-ndjson' }, connections: shareOf(CONNECTIONS, gateways.length, index), next,
    ...('seconds' in limit ? limit : { requests: shareOf(limit.requests, gateways.length, index) }),
  })));
}

/** The rows an ingestion run gives: the two loads', and where named, a read during the second and a node applying alone. */
interface IngestNames {
  first: string;
  known: string;
  read?: string;
  applyAlone?: string;
}

async function ingestRows(deployment: Deployment, size: FleetSize, plan: (typeof PLAN)['quick'], names: IngestNames): Promise<[name: string, row: BenchRow][]> {
  const payloads = buildIngestPayloads(fleetSpec(size), 10_000, plan.bodies);
  const gateways = deployment.nodes.map((node) => `${node.gatewayUrl}/agent/v1/events`);
  for (const setup of payloads.setup) {
    const response = await fetch(gateways[0], { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: setup });
    if (response.status !== 200) throw new Error(`set-up batch answered ${response.status}: ${await response.text()}`);
  }
  // One sequence of bodies over all gateways: each body once in the first pass, then round after round.
  let sent = 0;
  let clock = 0;
  const send = () => {
    const body = payloads.bodies[sent++ % payloads.bodies.length];
    clock = Math.max(Date.now(), clock + 1);
    return { bytes: stampTime(body, clock), items: body.items };
  };
  const bodies = payloads.bodies.length;
  const first = await ingestRow(deployment, names.first, `${describeFleet(size)}, each of ${bodies} bodies once`, () => postThrough(gateways, send, { requests: bodies }));
  let loading = true;
  const reader = names.read === undefined ? null : readWhile(deployment.nodes[deployment.nodes.length - 1], (JSON.parse(payloads.setup[0]) as { vmId: string }[])[0].vmId, () => !loading);
  const known = await ingestRow(deployment, names.known, `${describeFleet(size)}, the same ${bodies} bodies again for ${plan.seconds} s`, async () => {
    try {
      return await postThrough(gateways, send, { seconds: plan.seconds });
    } finally {
      loading = false;
    }
  });
  const rows: [string, BenchRow][] = [[names.first, first.row], [names.known, known.row]];
  if (reader !== null && names.read !== undefined) {
    const reads = summarize(await reader);
    rows.push([names.read, {
      suite: NAME, name: `${names.read}, ${deployment.label}`, size: `${reads.count} reads during the ingestion above`,
      rate: reads.count / known.loadSeconds, unit: 'ops/s', meanMs: reads.mean, p50Ms: reads.p50, p99Ms: reads.p99, rssMb: 0,
      extra: { maxMs: round1(reads.max), note: 'one reader on the last node, a read every 50 ms' },
    }]);
  }
  if (names.applyAlone !== undefined && deployment.nats.length > 0) {
    rows.push([names.applyAlone, await applyAloneRow(deployment, size, send, bodies * plan.missedRounds, names.applyAlone)]);
  }
  return rows;
}

/** The rows of the ingestion deployments (a single node has no APPLY_ALONE). */
const INGEST_NAMES: IngestNames = { first: INGEST_FIRST, known: INGEST, read: READ_DURING_INGEST, applyAlone: APPLY_ALONE };
const INGEST_ROWS = Object.values(INGEST_NAMES);
const MACHINES_NAMES: IngestNames = { first: MACHINES_FIRST, known: MACHINES_KNOWN };
const MACHINES_ROWS = Object.values(MACHINES_NAMES);

/** The deployments the ingestion rows compare: code groups are the cluster's way to apply a share of the code each. */
const INGEST_DEPLOYMENTS = [singleNode, () => threeNodes(1), () => threeNodes(3), () => threeNodes(2)];
/** A single node against the cluster's fastest ingestion, each node on a machine of MACHINE_CORES. */
const MACHINES_DEPLOYMENTS = [() => onMachines(MACHINE_CORES, singleNode), () => onMachines(MACHINE_CORES, () => threeNodes(3))];
/** A report fans out over the nodes only from `--report-fan-out-vms` VMs: the cluster's reads on such machines, with and without. */
const MACHINES_READ_DEPLOYMENTS = [singleNode, () => threeNodes(), () => threeNodes(1, true)];

/**
 * The last node is paused (SIGSTOP) while the others take `batches` of `send`'s bodies, then resumed to
 * apply them alone: paused rather than restarted, it keeps the caches a running node has (a restarted one
 * first reads every method it meets back from LMDB).
 */
async function applyAloneRow(deployment: Deployment, size: FleetSize, send: () => PostBody, batches: number, name: string): Promise<BenchRow> {
  const last = deployment.nodes[deployment.nodes.length - 1];
  await caughtUp(last);
  process.kill(last.pid, 'SIGSTOP');
  const others = deployment.nodes.slice(0, -1).map((node) => `${node.gatewayUrl}/agent/v1/events`);
  let items = 0;
  try {
    items = (await postThrough(others, send, { requests: batches })).reduce((sum, result) => sum + result.items, 0);
  } finally {
    process.kill(last.pid, 'SIGCONT');
  }
  const cpuBefore = processCpuSeconds(last.pid) ?? Number.NaN;
  const resumed = performance.now();
  await caughtUp(last);
  const applyMs = performance.now() - resumed;
  return {
    suite: NAME, name: `${name}, ${deployment.label}`, size: `${items.toLocaleString('en-US')} code items in ${batches} batches (${describeFleet(size)})`,
    rate: items / (applyMs / 1000), unit: 'items/s', meanMs: applyMs, p50Ms: applyMs, p99Ms: applyMs, rssMb: processRssMb(last.pid),
    extra: { jvmlensCpuUsPerItem: round1((((processCpuSeconds(last.pid) ?? Number.NaN) - cpuBefore) / items) * 1e6), note: 'resumed (SIGCONT) until it answers a read: applied every acknowledged batch' },
  };
}

async function seedFleet(deployment: Deployment, size: FleetSize): Promise<void> {
  progress(`${NAME}: seeding ${describeFleet(size)} into the ${deployment.label} through its gateway`);
  const started = performance.now();
  const child = spawnChild(process.execPath, [MAIN, 'seed', '--gateway', deployment.nodes[0].gatewayUrl, '--key', KEY, ...seedFlags(size)]);
  const code = await child.exited;
  if (code !== 0) throw new Error(`jvmlens seed exited with ${code}:\n${child.output()}`);
  await Promise.all(deployment.nodes.map((node) => caughtUp(node)));
  progress(`${NAME}: seeded and applied on every node in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

/**
 * A load balancer's probe of a node's health every 20 ms until `done`: a node whose event loop is busy
 * answers it late, and a probe that times out takes the node out of rotation.
 */
async function probeHealthWhile(node: JvmlensService, done: () => boolean): Promise<number[]> {
  const latencies: number[] = [];
  while (!done()) {
    const started = performance.now();
    const response = await fetch(`${node.gatewayUrl}/opthub-health`);
    await response.arrayBuffer();
    latencies.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return latencies;
}

/** POST → SUCCEEDED through the second node (the first on a single node), then until every node serves it. */
async function reportRow(deployment: Deployment, size: FleetSize, runs: number, name: string): Promise<BenchRow> {
  const coordinator = deployment.nodes[1 % deployment.nodes.length];
  const headers = { 'x-api-key': KEY, 'content-type': 'application/json' };
  const { path, body: request } = REPORTS[name];
  const ms: number[] = [];
  const everywhere: number[] = [];
  let totalCount = 0;
  const cpuBefore = deploymentCpu(deployment);
  let reporting = true;
  const others = deployment.nodes.filter((node) => node !== coordinator);
  const probes = Promise.all([coordinator, ...others].map((node) => probeHealthWhile(node, () => !reporting)));
  // Awaited below; a row that throws first must not leave it unhandled.
  probes.catch(() => undefined);
  try {
    for (let run = 0; run < runs; run++) {
      const started = performance.now();
      const created = await fetch(`${coordinator.apiUrl}${createPath(path)}`, { method: 'POST', headers, body: JSON.stringify(request) });
      if (created.status !== 202) throw new Error(`POST answered ${created.status}: ${await created.text()}`);
      const { reportId } = (await created.json()) as { reportId: string };
      for (const [index, node] of [coordinator, ...others].entries()) {
        for (;;) {
          const body = (await (await fetch(`${node.apiUrl}${path}/${reportId}`, { headers })).json()) as { state: string; totalCount: number };
          totalCount = body.totalCount;
          if (body.state === 'SUCCEEDED') break;
          if (body.state !== 'PROCESSING') throw new Error(`report ${reportId} ended ${body.state}`);
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        if (index === 0) ms.push(performance.now() - started);
      }
      everywhere.push(performance.now() - started);
    }
  } finally {
    reporting = false;
  }
  const cpuAfter = deploymentCpu(deployment);
  const [coordinatorProbes, ...otherProbes] = await probes;
  const health = summarize(coordinatorProbes);
  // The other nodes give a code report's groups, or a grouped report's partitions, and apply its pages.
  const othersHealth = others.length === 0 ? null : summarize(otherProbes.flat());
  const summary = summarize(ms);
  return {
    suite: NAME, name: `${name}, ${deployment.label}`, size: describeFleet(size),
    rate: 1000 / summary.mean, unit: 'ops/s', meanMs: summary.mean, p50Ms: summary.p50, p99Ms: summary.max,
    rssMb: largestRssMb(deployment),
    extra: {
      servedByEveryNodeMeanMs: round1(summarize(everywhere).mean), runs, totalCount,
      // On a machine shared by every process, time shows the work of all of them: CPU says where it went (the polling above included).
      jvmlensCpuMsPerReport: round1(((cpuAfter.nodes - cpuBefore.nodes) / runs) * 1000), natsCpuMsPerReport: round1(((cpuAfter.nats - cpuBefore.nats) / runs) * 1000),
      coordinatorHealthP99Ms: round1(health.p99), coordinatorHealthMaxMs: round1(health.max),
      ...(othersHealth === null ? {} : { otherNodesHealthP99Ms: round1(othersHealth.p99), otherNodesHealthMaxMs: round1(othersHealth.max) }),
    },
  };
}

async function cveRow(deployment: Deployment, size: FleetSize, pages: number): Promise<BenchRow> {
  const times: number[] = [];
  for (let index = 0; index < pages; index++) {
    const node = deployment.nodes[index % deployment.nodes.length];
    const started = performance.now();
    const response = await fetch(`${node.apiUrl}/public/cve/events?limit=100&tags.env=prod`, { headers: { 'x-api-key': KEY } });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`CVE events answered ${response.status}`);
    times.push(performance.now() - started);
  }
  const summary = summarize(times);
  return {
    suite: NAME, name: `${CVE}, ${deployment.label}`, size: describeFleet(size),
    rate: 1000 / summary.mean, unit: 'req/s', meanMs: summary.mean, p50Ms: summary.p50, p99Ms: summary.p99,
    rssMb: largestRssMb(deployment),
    extra: { requests: pages, client: 'one fetch at a time, nodes in turn' },
  };
}

/**
 * The same page under concurrent load through `through` (its connections spread over them, as a load
 * balancer spreads them): the read barrier's round trips are shared. `consistency`: the reads' header.
 */
async function cveLoadRow(deployment: Deployment, size: FleetSize, options: BenchOptions, name: string, through: readonly JvmlensService[], consistency = 'read-your-writes'): Promise<BenchRow> {
  const plan = loadPlan(options);
  const cpuBefore = deploymentCpu(deployment);
  const results = await Promise.all(through.map((node, index) => runLoad(node.apiUrl, {
    paths: ['/public/cve/events?limit=100&tags.env=prod'], headers: { 'x-api-key': KEY, 'x-jvmlens-consistency': consistency }, connections: shareOf(plan.connections, through.length, index), seconds: plan.seconds * plan.rounds,
  })));
  const cpuAfter = deploymentCpu(deployment);
  const latencies = new Samples();
  for (const result of results) latencies.addAll(result.latencies);
  const latency = summarize(latencies.values());
  const requests = results.reduce((sum, result) => sum + result.requests, 0);
  const seconds = Math.max(...results.map((result) => result.seconds));
  // What a read costs the nodes and the servers: the read barrier's questions are the servers' part.
  const cpuUsPerRequest = (cpuSeconds: number) => round1((cpuSeconds / requests) * 1e6);
  return {
    suite: NAME, name: `${name}, ${deployment.label}`, size: describeFleet(size),
    rate: requests / seconds, unit: 'req/s', meanMs: latency.mean, p50Ms: latency.p50, p99Ms: latency.p99,
    rssMb: Math.max(...through.map((node) => processRssMb(node.pid))),
    extra: {
      load: `${loadNote(plan)}${through.length > 1 ? `, spread over ${through.length} nodes (a generator each)` : ''}`,
      stealPercent: results[0].stealPercent ?? 'unknown',
      jvmlensCpuUsPerRequest: cpuUsPerRequest(cpuAfter.nodes - cpuBefore.nodes), natsCpuUsPerRequest: cpuUsPerRequest(cpuAfter.nats - cpuBefore.nats),
    },
  };
}

/**
 * The third node, restarted so that its reports take 300 ms a partition (a test fault), coordinates a report
 * and is SIGKILLed 100 ms after the POST: until the first node serves the report SUCCEEDED (taken over and
 * generated again). The third node is started again as it was.
 */
async function takeoverRow(deployment: Deployment, size: FleetSize): Promise<BenchRow> {
  const urls = deployment.nats.map((server) => server.url).join(',');
  const options = nodeOptions(deployment.dir, urls, 3);
  await deployment.nodes[2].stop();
  const slow = await startJvmlens({ ...options, args: [...options.args, '--test-faults', 'slow-partition'] });
  const headers = { 'x-api-key': KEY, 'content-type': 'application/json' };
  const created = await fetch(`${slow.apiUrl}${createPath(REPORTS[REPORT].path)}`, { method: 'POST', headers, body: JSON.stringify(REPORTS[REPORT].body) });
  if (created.status !== 202) throw new Error(`POST answered ${created.status}: ${await created.text()}`);
  const { reportId } = (await created.json()) as { reportId: string };
  await new Promise((resolve) => setTimeout(resolve, 100));
  const killedAt = performance.now();
  await slow.kill();
  for (;;) {
    const body = (await (await fetch(`${deployment.nodes[0].apiUrl}/public/component/report/${reportId}`, { headers })).json()) as { state: string };
    if (body.state === 'SUCCEEDED') break;
    if (body.state !== 'PROCESSING') throw new Error(`report ${reportId} ended ${body.state}`);
    if (performance.now() - killedAt > 120_000) throw new Error(`report ${reportId} still PROCESSING 2 minutes after its coordinator died`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const ms = performance.now() - killedAt;
  deployment.nodes[2] = await startJvmlens(options);
  return {
    suite: NAME, name: TAKEOVER, size: `component report by tags.env, ${describeFleet(size)}`,
    rate: 1000 / ms, unit: 'ops/s', meanMs: ms, p50Ms: ms, p99Ms: ms, rssMb: 0,
    extra: { note: 'taken over by the lowest live node once no process answers for the coordinator\'s id' },
  };
}

/** SIGKILL the third node, ingest while it is down, restart it: spawn to UP, the missed commands replayed. */
async function rejoinRow(deployment: Deployment, size: FleetSize, bodies: number): Promise<BenchRow> {
  await deployment.nodes[2].kill();
  const urls = deployment.nats.map((server) => server.url).join(',');
  const payloads = buildIngestPayloads(fleetSpec(size), 10_000, bodies);
  const post = async (body: Uint8Array<ArrayBuffer> | string, contentType: string) => {
    const response = await fetch(`${deployment.nodes[0].gatewayUrl}/agent/v1/events`, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': contentType }, body });
    if (response.status !== 200) throw new Error(`batch answered ${response.status}: ${await response.text()}`);
  };
  for (const setup of payloads.setup) await post(setup, 'application/json');
  for (const body of payloads.bodies) await post(new Uint8Array(stampTime(body, Date.now())), 'application/x-ndjson');
  const restarted = await startJvmlens(nodeOptions(deployment.dir, urls, 3));
  deployment.nodes[2] = restarted;
  return {
    suite: NAME, name: REJOIN, size: `${payloads.bodies.length} batches of 10,000 code items missed (${describeFleet(size)})`,
    rate: 1000 / restarted.readyMs, unit: 'ops/s', meanMs: restarted.readyMs, p50Ms: restarted.readyMs, p99Ms: restarted.readyMs,
    rssMb: processRssMb(restarted.pid),
    extra: { note: 'the other two nodes served every request meanwhile (each holds all the data)' },
  };
}

/** lstat: the writer lock is a symbolic link to no file. */
function directoryBytes(dir: string): number {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((path) => lstatSync(join(dir, path))).filter((stats) => stats.isFile()).reduce((sum, stats) => sum + stats.size, 0);
}

/**
 * A fourth node with an empty data directory once the log dropped everything the nodes applied (what
 * truncation does once the retention passed, done at once here): spawn to UP, its data copied from a live node.
 */
async function newNodeRow(deployment: Deployment, size: FleetSize): Promise<BenchRow> {
  const urls = deployment.nats.map((server) => server.url).join(',');
  for (const node of deployment.nodes) await caughtUp(node);
  const log = await ClusterLog.open(deployment.nats.map((server) => server.url), 'jvmlens-bench');
  try {
    await log.purgeBelow((await log.lastSeq()) + 1);
  } finally {
    await log.close();
  }
  const options = nodeOptions(deployment.dir, urls, 4);
  const added = await startJvmlens(options);
  try {
    await caughtUp(added);
    const bytes = directoryBytes(options.dataDir);
    return {
      suite: NAME, name: NEW_NODE, size: `${describeFleet(size)}, ${(bytes / 1e6).toFixed(0)} MB copied`,
      rate: 1000 / added.readyMs, unit: 'ops/s', meanMs: added.readyMs, p50Ms: added.readyMs, p99Ms: added.readyMs,
      rssMb: processRssMb(added.pid),
      extra: { note: 'spawn to UP: asks a live node for a copy (made by its own process from its open store), reads it in chunks, opens it, applies what came after' },
    };
  } finally {
    await added.stop();
  }
}

/**
 * One writer posts small batches back to back through the first node while readers on the two others read the
 * VM written; the stream's leader server is killed. The longest gap between acknowledgements, and the longest
 * read after the kill (a read answers once its node applied every write acknowledged before it).
 */
async function pauseRows(deployment: Deployment): Promise<BenchRow[]> {
  const log = await ClusterLog.open(deployment.nats.map((server) => server.url), 'jvmlens-bench');
  const leader = (await log.jsm.streams.info(STREAM)).cluster?.leader;
  await log.close();
  const victim = deployment.nats.find((server) => server.name === leader);
  if (victim === undefined) throw new Error(`no nats-server named '${String(leader)}' leads ${STREAM}`);
  const url = `${deployment.nodes[0].gatewayUrl}/agent/v1/events`;
  const vmId = '0b5e55ed-0000-4000-8000-000000000001';
  const event = (time: number) => ({ type: 'vm.start', vmId, time, agentVersion: '1', agentRevision: 'x', mailbox: 'm', inventory: { hostName: 'pause', mainMethod: 'Main', systemProperties: {} } });
  let killedAt = 0;
  let firstAfterKill = 0;
  let longest = 0;
  let refused = 0;
  let acknowledged = 0;
  let last = performance.now();
  // Writes go on until one is acknowledged after the kill and 5 s have passed (at most a minute).
  const writer = (async () => {
    const giveUp = performance.now() + 60_000;
    while (performance.now() < giveUp && (firstAfterKill === 0 || performance.now() < killedAt + 5_000)) {
      const response = await fetch(url, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: JSON.stringify([event(Date.now())]) }).catch(() => null);
      await response?.arrayBuffer();
      const now = performance.now();
      if (response?.status !== 200) {
        refused++;
        continue;
      }
      acknowledged++;
      if (killedAt > 0) {
        longest = Math.max(longest, now - last);
        if (firstAfterKill === 0) firstAfterKill = now;
      }
      last = now;
    }
  })();
  const readTimes: number[] = [];
  let readsRefused = 0;
  let writing = true;
  const reader = async (node: JvmlensService) => {
    while (writing) {
      const started = performance.now();
      const response = await fetch(`${node.apiUrl}/public/instance/${vmId}`, { headers: { 'x-api-key': KEY } }).catch(() => null);
      await response?.arrayBuffer();
      if (killedAt === 0) continue;
      if (response?.status === 200) readTimes.push(performance.now() - started);
      else readsRefused++;
    }
  };
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const readers = deployment.nodes.slice(1).map(reader);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  killedAt = performance.now();
  await victim.stop('SIGKILL');
  await writer;
  writing = false;
  await Promise.all(readers);
  await victim.start();
  const pause = firstAfterKill === 0 ? Number.NaN : firstAfterKill - killedAt;
  const reads = summarize(readTimes);
  return [{
    suite: NAME, name: PAUSE, size: 'one connection, one-event batches',
    // The pause is the longest gap: the first acknowledgement after the kill may be a write already in flight.
    rate: acknowledged / ((performance.now() - killedAt + 2_000) / 1000), unit: 'req/s', meanMs: longest, p50Ms: longest, p99Ms: longest, rssMb: 0,
    extra: { killToFirstAcknowledgedMs: Math.round(pause), longestGapBetweenAcknowledgementsMs: Math.round(longest), refusedWith503: refused, killed: victim.name },
  }, {
    suite: NAME, name: READ_PAUSE, size: 'one reader on each of the two other nodes, from the kill until 5 s after the first write acknowledged after it',
    rate: readTimes.length / ((performance.now() - killedAt) / 1000), unit: 'req/s', meanMs: reads.mean, p50Ms: reads.p50, p99Ms: reads.p99, rssMb: 0,
    extra: { longestReadMs: Math.round(reads.max), readsRefused, killed: victim.name },
  }];
}

export const suite: Suite = {
  name: NAME,
  rows: [...INGEST_ROWS, ...MACHINES_ROWS, ...MACHINES_READ_ROWS, CODE_REPORT, REPORT, REPORT_BY_HOST, CVE, CVE_LOAD, TAKEOVER, REJOIN, NEW_NODE, PAUSE, READ_PAUSE],
  async run(options: BenchOptions) {
    const plan = options.quick ? PLAN.quick : PLAN.full;
    const rows: BenchRow[] = [];
    const want = (row: string) => wanted(options, NAME, row);
    if (INGEST_ROWS.some(want) || want(CODE_REPORT)) {
      const size = fleetSize(options, INGEST_FLEET);
      for (const start of INGEST_DEPLOYMENTS) {
        const deployment = await start();
        try {
          rows.push(...(await ingestRows(deployment, size, plan, INGEST_NAMES)).filter(([name]) => want(name)).map(([, row]) => row));
          if (want(CODE_REPORT)) rows.push(await reportRow(deployment, size, plan.reportRuns, CODE_REPORT));
        } finally {
          await deployment.stop();
        }
      }
    }
    if (MACHINES_ROWS.some(want)) {
      const size = fleetSize(options, INGEST_FLEET);
      for (const start of MACHINES_DEPLOYMENTS) {
        const deployment = await start();
        if (deployment === null) break;
        try {
          rows.push(...(await ingestRows(deployment, size, plan, MACHINES_NAMES)).filter(([name]) => want(name)).map(([, row]) => row));
        } finally {
          await deployment.stop();
        }
      }
    }
    if (MACHINES_READ_ROWS.some(want)) {
      const size = fleetSize(options, REPORT_FLEET);
      for (const start of MACHINES_READ_DEPLOYMENTS) {
        const deployment = await onMachines(MACHINE_CORES, start, (seeded) => seedFleet(seeded, size));
        if (deployment === null) break;
        try {
          for (const report of [MACHINES_REPORT, MACHINES_REPORT_BY_HOST]) if (want(report)) rows.push(await reportRow(deployment, size, plan.reportRuns, report));
          if (want(MACHINES_CVE_LOAD)) rows.push(await cveLoadRow(deployment, size, options, MACHINES_CVE_LOAD, deployment.nodes));
          // A single node never asks: its row above is its local reads' too.
          if (want(MACHINES_CVE_LOCAL) && deployment.nats.length > 0) rows.push(await cveLoadRow(deployment, size, options, MACHINES_CVE_LOCAL, deployment.nodes, 'local'));
        } finally {
          await deployment.stop();
        }
      }
    }
    if (want(REPORT) || want(REPORT_BY_HOST) || want(CVE) || want(CVE_LOAD) || want(TAKEOVER) || want(REJOIN) || want(NEW_NODE) || want(PAUSE) || want(READ_PAUSE)) {
      const size = fleetSize(options, REPORT_FLEET);
      for (const start of [singleNode, () => threeNodes()]) {
        const deployment = await start();
        try {
          await seedFleet(deployment, size);
          for (const report of [REPORT, REPORT_BY_HOST]) if (want(report)) rows.push(await reportRow(deployment, size, plan.reportRuns, report));
          if (want(CVE)) rows.push(await cveRow(deployment, size, plan.pages));
          if (want(CVE_LOAD)) rows.push(await cveLoadRow(deployment, size, options, CVE_LOAD, deployment.nodes.slice(0, 1)));
          if (deployment.nats.length > 0) {
            if (want(TAKEOVER)) rows.push(await takeoverRow(deployment, size));
            if (want(REJOIN)) rows.push(await rejoinRow(deployment, fleetSize(options, INGEST_FLEET), plan.bodies));
            if (want(NEW_NODE)) rows.push(await newNodeRow(deployment, size));
            if (want(PAUSE) || want(READ_PAUSE)) rows.push(...(await pauseRows(deployment)).filter((row) => want(row.name)));
          }
        } finally {
          await deployment.stop();
        }
      }
    }
    return rows;
  },
};
