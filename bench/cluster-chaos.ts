// The cluster's kill loop: three nats-server and three nodes on loopback (storing every class, or in three
// code groups, one node each); two writers ingest new VMs with code, one edits tags and one asks for JVM
// reports, each through a random live node, while every 10-20 s a random node or nats-server is SIGKILLed and
// started again a few seconds later, or paused (SIGSTOP, as a machine that stops without closing its
// connections) for up to 25 s, and the log is truncated meanwhile. Then every node must hold every
// acknowledged batch and the last acknowledged tags of every VM, the nodes must count the same VMs, a code
// report through each must hold every method the batches sent, and every report asked for during the run
// must have finished alike on every node, and the nodes' hashes of the log (src/cluster/log-checks.ts) agree.
import { randomUUID } from 'node:crypto';
import { appendFileSync, cpSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { APPENDING_AGAIN } from '../src/cluster/acknowledged-writes.ts';
import { HANDING_OVER, HANDING_OVER_UNTOLD } from '../src/cluster/hand-over-writes.ts';
import { READING_BACK_JOURNALED } from '../src/cluster/write-journal.ts';
import { FINDING_NO_COPY, FOUND_ODD, FOUND_ODD_BY_LOG, FOUND_ODD_FULLEST, FOUND_ODD_NO_TWO_ALIKE, NO_COPY_CAN_COME, recordedWindows } from '../src/cluster/log-checks.ts';
import { PARTING } from '../src/cluster/log-partings.ts';
import type { Parting } from '../src/cluster/log-partings.ts';
import { untilAnswered } from '../src/cluster/log.ts';
import { liveNodes } from '../src/cluster/membership.ts';
import { APPLIED_AFTER_START, KEPT_UNTIL_START } from '../src/cluster/awaiting-start.ts';
import { COPY_SKIPPED, READ_ONE_BY_ONE } from '../src/cluster/replica.ts';
import { startNatsServers } from '../src/cluster/nats-servers.ts';
import { TAIL_QUIET_MS } from '../src/cluster/node.ts';
import { temporaryDir } from './fleet.ts';
import { startJvmlens } from './service.ts';
import type { JvmlensService } from './service.ts';

export interface ClusterChaosResult {
  /** Where each node's log lines are (n1.log …, across its restarts), until the bench process ends. */
  nodeLogs: string;
  /** Nodes and nats-servers SIGKILLed. */
  kills: number;
  /** Nodes and nats-servers paused with SIGSTOP, then resumed. */
  pauses: number;
  /** Batches answered 200. */
  acknowledged: number;
  /** Batches answered otherwise, or not at all (stored or not). */
  unanswered: number;
  /** Those by what answered them: a status and the error's code (`503 NOT_READY`), or `no answer` (the node died with the request, or its port was closed). */
  unansweredBy: Record<string, number>;
  tagEdits: number;
  /** Acknowledged batches a node does not have (its instance read answers 404) once every node is UP again. */
  lost: number;
  /** Acknowledged batches a node answered for with neither 200 nor 404 then (not serving for REPORT_WAIT_MS). */
  unreadable: number;
  /** VMs whose tags on a node are not the last acknowledged edit's. */
  wrongTags: number;
  /** The VMs each node counts (a JVM report): equal on every node. */
  vmsPerNode: number[];
  /** The methods a code report through each node holds: CODE_CLASSES x METHODS_PER_CLASS, from every code group. */
  methodsPerNode: number[];
  /** JVM reports created during the run. */
  reports: number;
  /** Of those, reports whose state or count is not the same on every node at the end (or still PROCESSING). */
  reportsDiffering: number;
  /** Windows of the log two or more nodes hashed (src/cluster/log-checks.ts), and of those, windows whose hashes differ. */
  logWindowsCompared: number;
  logWindowsDiffering: number;
  /** Writes a node did not find in the log as it read it, and appended again (src/cluster/acknowledged-writes.ts). */
  writesAppendedAgain: number;
  /** Writes a node that read the odd history appended again before it rebuilt itself, the others not having read them (src/cluster/hand-over-writes.ts). */
  writesHandedOver: number;
  /** Writes a killed node had journaled and not read back, read back at its next start (src/cluster/write-journal.ts). */
  journaledWritesReadBack: number;
  /**
   * Times a node found it read another history than the one taken as right, and of those, where no two nodes
   * read the window alike and the first by id was taken, where as many read it one way as another and the
   * reading holding commands the others lack was taken, and where too few nodes had read it and the log read
   * again told (log-checks.ts).
   */
  oddFindings: number;
  oddFindingsNoTwoAlike: number;
  oddFindingsFullest: number;
  oddFindingsByLog: number;
  /**
   * Writes a node read before their VM's start, which its gateway had held (its history differs from the one of
   * the node that took the write), kept until the start, and those applied then (src/cluster/awaiting-start.ts).
   */
  writesKeptUntilStart: number;
  writesAppliedAfterStart: number;
  /** Writes appended again that a node skipped, having applied another copy of them (src/cluster/applied-ids.ts), summed over the nodes. */
  copiesSkipped: number;
  /**
   * Stretches of commands a node read one by one, outside any consumer (any server's replica answers those
   * reads: src/cluster/replica.ts), and the odd findings whose window the node had read partly so (a node's
   * reads before a copy of another's data count too): whether odd histories come that way.
   */
  stretchesReadOneByOne: number;
  oddFindingsReadOneByOne: number;
  /**
   * Where a node told its reading of a differing window parts from another's (log-checks.ts), the first
   * PARTINGS_KEPT: the first command each read otherwise, and where the other read this node's command there.
   */
  partings: ({ node: string; other: string } & Parting)[];
  /** Times a node odd with no node to copy served its own reading of the log (log-checks.ts). */
  ownReadingsServed: number;
}

/** The partings a run's result lists. */
const PARTINGS_KEPT = 10;

const KEY = 'bench_cluster_chaos_key_0123456789';
/**
 * The log is truncated as it goes (every half second, what every node applied 2 s ago): a restarted node
 * replays what it missed while the lowest live node truncates behind it.
 */
const LOG_RETENTION_MS = 2_000;
const WRITERS = 2;
/** The longest `Retry-After` a writer honours: a fault lasts seconds. */
const MAX_RETRY_AFTER_S = 5;
const TAG_EDIT_MS = 200;
/** A gap in which the writers keep going between two kills, and how long a victim stays down. */
const KILL_EVERY_MS = [10_000, 20_000];
const DOWN_MS = [2_000, 8_000];
/** How long a paused victim stays paused: a node past 15 s has its heartbeat expire and its reports taken over. */
const PAUSE_MS = [5_000, 25_000];
const REPORT_EVERY_MS = 3_000;
/** Acknowledged writes a node does not serve as acknowledged: how many are named in the progress lines. */
const NAMED = 50;
/** A report once every node is up again takes seconds; one still PROCESSING after this is stuck. */
const REPORT_WAIT_MS = 120_000;
/** After the last write, before the check: long enough for the nodes to compare the quiet log's tail (ClusterNode, every TAIL_QUIET_MS). */
const SETTLE_MS = 3 * TAIL_QUIET_MS;
/**
 * Each batch's code: CLASSES_PER_BATCH classes of METHODS_PER_CLASS methods, the next ones of CODE_CLASSES in
 * turn, so that every method is in many acknowledged batches and a code report must hold them all.
 */
const CODE_CLASSES = 2_000;
const CLASSES_PER_BATCH = 20;
const METHODS_PER_CLASS = 10;
export const CHAOS_METHODS = CODE_CLASSES * METHODS_PER_CLASS;

function between([low, high]: number[]): number {
  return low + Math.random() * (high - low);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A new VM, its component and some code (batch number `index`'s classes): one batch. */
function batch(vmId: string, time: number, index: number): unknown[] {
  const items = Array.from({ length: CLASSES_PER_BATCH * METHODS_PER_CLASS }, (_, k) => {
    const cls = (index * CLASSES_PER_BATCH + Math.floor(k / METHODS_PER_CLASS)) % CODE_CLASSES;
    return { sourceName: 'app.jar', className: `com/acme/pkg${cls % 50}/C${cls}`, methodName: `m${k % METHODS_PER_CLASS}()` };
  });
  return [
    { type: 'vm.start', vmId, time, agentVersion: '1', agentRevision: 'r', inventory: { hostName: `host-${vmId.slice(0, 8)}` }, tags: { env: 'chaos' } },
    { type: 'components', vmId, time: time + 1, items: [{ componentName: 'chaos-lib', componentVersion: '1.0' }] },
    { type: 'code', vmId, time: time + 2, items },
  ];
}

/** `retryAfterS`: the seconds a `Retry-After` header asks a client to wait (a node not ready sends one), else 0. */
async function call(url: string, init: RequestInit = {}): Promise<{ status: number; body: unknown; retryAfterS: number }> {
  const response = await fetch(url, { ...init, headers: { 'x-api-key': KEY, 'content-type': 'application/json', ...init.headers } });
  const text = await response.text();
  return { status: response.status, body: text === '' ? null : (JSON.parse(text) as unknown), retryAfterS: Number(response.headers.get('retry-after') ?? 0) || 0 };
}

/**
 * `call`, again while the node answers 503 or not at all (not serving for now: the last fault may have just
 * ended, and JetStream elect a leader; a node that read the odd history restarts to rebuild itself), for up
 * to REPORT_WAIT_MS: the checks are of what the nodes hold, not of their reads during an election.
 * Unanswered to the end: status 0.
 */
async function callServing(url: string, init: RequestInit = {}): Promise<{ status: number; body: unknown }> {
  const deadline = performance.now() + REPORT_WAIT_MS;
  for (;;) {
    const answer = await call(url, init).catch((error: Error) => ({ status: 0, body: error.message, retryAfterS: 0 }));
    if ((answer.status !== 503 && answer.status !== 0) || performance.now() > deadline) return answer;
    await sleep(250);
  }
}

/**
 * What a report of `family` created through a node counts: the VMs (jvmInventory), the methods
 * (codeInventory). A code report that ended PARTIALLY_FAILED is asked for again, until REPORT_WAIT_MS: right
 * after the last fault a code group's node may not be live again yet (its heartbeat expired while its
 * nats-server was paused), and such a report then lacks that group's classes, as it should.
 */
async function reportTotal(node: JvmlensService, family: 'jvmInventory' | 'codeInventory', request: Record<string, unknown>): Promise<number> {
  const deadline = performance.now() + REPORT_WAIT_MS;
  for (;;) {
    const created = await callServing(`${node.apiUrl}/public/report/${family}`, { method: 'POST', body: JSON.stringify(request) });
    if (created.status !== 202) throw new Error(`a ${family} report answered ${created.status}: ${JSON.stringify(created.body)}`);
    const { reportId } = created.body as { reportId: string };
    let report = await callServing(`${node.apiUrl}/public/report/${family}/${reportId}`);
    while ((report.body as { state: string }).state === 'PROCESSING') {
      if (performance.now() > deadline) throw new Error(`a ${family} report was still PROCESSING after ${REPORT_WAIT_MS / 1000} s`);
      await sleep(100);
      report = await callServing(`${node.apiUrl}/public/report/${family}/${reportId}`);
    }
    const { state, totalCount, errors } = report.body as { state: string; totalCount: number; errors?: unknown };
    if (state === 'SUCCEEDED') return totalCount;
    if (state !== 'PARTIALLY_FAILED' || family !== 'codeInventory' || performance.now() > deadline) throw new Error(`a ${family} report ended ${state}: ${JSON.stringify(errors)}`);
    await sleep(1_000);
  }
}

/** A report's state and count on a node once it left PROCESSING, or PROCESSING after REPORT_WAIT_MS; what the node said if it did not answer 200. */
async function finalOutcome(node: JvmlensService, reportId: string): Promise<string> {
  const deadline = performance.now() + REPORT_WAIT_MS;
  for (;;) {
    const { status, body } = await callServing(`${node.apiUrl}/public/report/jvmInventory/${reportId}`);
    if (status !== 200) return `${status} ${JSON.stringify(body).slice(0, 300)}`;
    const { state, totalCount } = body as { state: string; totalCount: number };
    if (state !== 'PROCESSING' || performance.now() > deadline) return `${state} ${totalCount}`;
    await sleep(100);
  }
}

/**
 * How many jvmlens nodes, and in how many code groups. Started one after another without --code-group, each
 * takes the least held group (src/cluster/code-group-choice.ts): node n<i> stores group (i - 1) mod
 * `codeGroups`, so with 4 nodes in 2 groups each group has the two nodes it needs to rebuild one of them
 * (README), and a node restarted after a kill keeps the group its data directory records.
 */
export interface ChaosLayout {
  nodes: number;
  codeGroups: number;
}

/** The group each node took, as `n1:0 n2:1 …`; throws unless they are n<i>: (i - 1) mod codeGroups. */
async function checkedGroups(urls: string, layout: ChaosLayout): Promise<string> {
  const nc = await connect({ servers: urls.split(',') });
  try {
    const held = (await liveNodes(nc)).map((node) => `${node.nodeId}:${node.codeGroup}`).join(' ');
    const wanted = Array.from({ length: layout.nodes }, (_, index) => `n${index + 1}:${index % layout.codeGroups}`).join(' ');
    if (held !== wanted) throw new Error(`the nodes took the code groups ${held}, not ${wanted}`);
    return held;
  } finally {
    await nc.close();
  }
}

/** Three nats-servers, and the nodes of `layout`. */
export async function runClusterChaos(seconds: number, layout: ChaosLayout, log: (line: string) => void = () => undefined): Promise<ClusterChaosResult> {
  const { codeGroups } = layout;
  const dir = temporaryDir('cluster-chaos-');
  /** Processes that ended without the bench ending them: a crash, which fails the row with what they said. */
  const died: string[] = [];
  const nats = await startNatsServers(3, dir, { onExit: (server, how) => died.push(`nats-server ${server.name} ended by itself (${how})`) });
  const urls = nats.map((server) => server.url).join(',');
  const groups = codeGroups === 1 ? [] : ['--code-groups', String(codeGroups)];
  const nodeLogs = join(dir, 'logs');
  mkdirSync(nodeLogs);
  /** The stretches each node read one by one, by node. */
  const readOneByOne = new Map<string, { from: number; to: number }[]>();
  const countFromLog = (line: string) => {
    if (line.includes(READ_ONE_BY_ONE)) {
      const { node, from, to } = JSON.parse(line) as { node: string; from: number; to: number };
      readOneByOne.set(node, [...(readOneByOne.get(node) ?? []), { from, to }]);
      result.stretchesReadOneByOne++;
    }
    const found = [FOUND_ODD, FOUND_ODD_NO_TWO_ALIKE, FOUND_ODD_FULLEST, FOUND_ODD_BY_LOG].find((finding) => line.includes(finding));
    if (found !== undefined) {
      result.oddFindings++;
      if (found === FOUND_ODD_NO_TWO_ALIKE) result.oddFindingsNoTwoAlike++;
      if (found === FOUND_ODD_FULLEST) result.oddFindingsFullest++;
      if (found === FOUND_ODD_BY_LOG) result.oddFindingsByLog++;
      const odd = JSON.parse(line) as { node: string; from: number; to: number };
      if ((readOneByOne.get(odd.node) ?? []).some(({ from, to }) => from <= odd.to && to >= odd.from)) result.oddFindingsReadOneByOne++;
    }
    if (line.includes(APPENDING_AGAIN)) result.writesAppendedAgain++;
    if (line.includes(HANDING_OVER) || line.includes(HANDING_OVER_UNTOLD)) result.writesHandedOver += Number(/"writes":(\d+)/.exec(line)?.[1] ?? 0);
    if (line.includes(READING_BACK_JOURNALED)) result.journaledWritesReadBack += Number(/"writes":(\d+)/.exec(line)?.[1] ?? 0);
    if (line.includes(KEPT_UNTIL_START)) result.writesKeptUntilStart++;
    if (line.includes(APPLIED_AFTER_START)) result.writesAppliedAfterStart++;
    if (line.includes(COPY_SKIPPED)) result.copiesSkipped++;
    if (line.includes(PARTING)) {
      const { node, partings } = JSON.parse(line) as { node: string; partings: ({ node: string } & Parting)[] };
      for (const { node: other, ...parting } of partings) if (result.partings.length < PARTINGS_KEPT) result.partings.push({ node, other, ...parting });
    }
    if (line.includes(NO_COPY_CAN_COME) || line.includes(FINDING_NO_COPY)) result.ownReadingsServed++;
  };
  const start = (index: number) => startJvmlens({ dataDir: `${dir}/n${index + 1}`, workers: 1, apiKey: KEY, args: ['--cluster', urls, '--node-id', `n${index + 1}`, '--log-retention-ms', String(LOG_RETENTION_MS), ...groups], onLog: (line) => {
    countFromLog(line);
    appendFileSync(join(nodeLogs, `n${index + 1}.log`), `${line}\n`);
  } });
  const nodes: (JvmlensService | null)[] = [];
  const result: ClusterChaosResult = { nodeLogs, kills: 0, pauses: 0, acknowledged: 0, unanswered: 0, unansweredBy: {}, tagEdits: 0, lost: 0, unreadable: 0, wrongTags: 0, vmsPerNode: [], methodsPerNode: [], reports: 0, reportsDiffering: 0, logWindowsCompared: 0, logWindowsDiffering: 0, writesAppendedAgain: 0, writesHandedOver: 0, journaledWritesReadBack: 0, oddFindings: 0, oddFindingsNoTwoAlike: 0, oddFindingsFullest: 0, oddFindingsByLog: 0, writesKeptUntilStart: 0, writesAppliedAfterStart: 0, copiesSkipped: 0, stretchesReadOneByOne: 0, oddFindingsReadOneByOne: 0, partings: [], ownReadingsServed: 0 };
  const reportIds: string[] = [];
  let batches = 0;
  // Each acknowledged VM's tags as last acknowledged; null once an edit's outcome is unknown (no answer).
  const expected = new Map<string, Record<string, string> | null>();
  /** Which node acknowledged a VM's start batch, and its last tag edit, and when: to find them in the nodes' logs. */
  const startedBy = new Map<string, string>();
  const editedBy = new Map<string, string>();
  try {
    for (let index = 0; index < layout.nodes; index++) nodes.push(await start(index));
    if (codeGroups > 1) log(`code groups the nodes took: ${await checkedGroups(urls, layout)}`);
    let running = true;
    // A paused node is left out, as a load balancer whose probe it no longer answers leaves it out.
    const live = () => nodes.filter((node): node is JvmlensService => node !== null);
    const anyNode = () => live()[Math.floor(Math.random() * live().length)];
    // Each failure's first sighting at each node goes to the progress lines, with the time the node logs use
    // and the answer's message (which says why a node is not ready: its logs are gone once a row passes).
    const seenFailures = new Set<string>();
    const failed = (why: string, nodeName: string, message?: string) => {
      result.unanswered++;
      result.unansweredBy[why] = (result.unansweredBy[why] ?? 0) + 1;
      if (!seenFailures.has(`${why} ${nodeName}`)) log(`first batch answered ${why} by ${nodeName} at ${new Date().toISOString()}${message === undefined ? '' : `: ${message}`}`);
      seenFailures.add(`${why} ${nodeName}`);
    };
    const writer = async () => {
      while (running) {
        const vmId = randomUUID();
        const node = anyNode();
        const nodeName = `n${nodes.indexOf(node) + 1}`;
        try {
          const answer = await call(`${node.gatewayUrl}/agent/v1/events`, { method: 'POST', body: JSON.stringify(batch(vmId, Date.now() - 1_000, batches++)) });
          if (answer.status === 200) {
            expected.set(vmId, { env: 'chaos' });
            startedBy.set(vmId, `${nodeName} at ${new Date().toISOString()}`);
            result.acknowledged++;
            continue;
          }
          const { error: code, message } = (answer.body as { error?: unknown; message?: unknown } | null) ?? {};
          failed(`${answer.status} ${typeof code === 'string' ? code : ''}`.trim(), nodeName, typeof message === 'string' ? message : undefined);
          // As an agent does: its next try waits as long as the node asked (a node not ready asks 1 s).
          await sleep(Math.min(answer.retryAfterS, MAX_RETRY_AFTER_S) * 1000);
        } catch {
          // The node died with the request: stored or not.
          failed('no answer', nodeName);
        }
      }
    };
    const tagger = async () => {
      for (let round = 0; running; round++) {
        await sleep(TAG_EDIT_MS);
        const vms = [...expected.keys()];
        if (vms.length === 0) continue;
        const vmId = vms[Math.floor(Math.random() * vms.length)];
        const tags = { env: 'chaos', round: `r${round}` };
        const node = anyNode();
        const answer = await call(`${node.apiUrl}/public/instance/${vmId}/tags`, { method: 'PUT', body: JSON.stringify(tags) }).catch(() => null);
        expected.set(vmId, answer?.status === 200 ? tags : null);
        if (answer?.status === 200) {
          result.tagEdits++;
          editedBy.set(vmId, `n${nodes.indexOf(node) + 1} at ${new Date().toISOString()}`);
        }
      }
    };
    const reporter = async () => {
      while (running) {
        await sleep(REPORT_EVERY_MS);
        const created = await call(`${anyNode().apiUrl}/public/report/jvmInventory`, { method: 'POST', body: '{}' }).catch(() => null);
        if (created?.status === 202) reportIds.push((created.body as { reportId: string }).reportId);
      }
    };
    const load = [...Array.from({ length: WRITERS }, writer), tagger(), reporter()];
    const noneDied = () => {
      for (const [index, node] of nodes.entries()) {
        const status = node?.exitStatus() ?? null;
        if (status !== null) died.push(`node n${index + 1} ended by itself (${status}); its last output:\n${node!.output().slice(-4_000)}`);
      }
      if (died.length === 0) return;
      running = false;
      throw new Error(died.join('\n'));
    };
    const end = performance.now() + seconds * 1000;
    while (performance.now() + KILL_EVERY_MS[0] < end) {
      await sleep(between(KILL_EVERY_MS));
      noneDied();
      const index = Math.floor(Math.random() * layout.nodes);
      const server = Math.floor(Math.random() * nats.length);
      const fault = Math.floor(Math.random() * 4);
      if (fault === 0) {
        const victim = nodes[index]!;
        nodes[index] = null;
        await victim.kill();
        log(`SIGKILL node n${index + 1}`);
        await sleep(between(DOWN_MS));
        nodes[index] = await start(index);
      } else if (fault === 1) {
        await nats[server].stop('SIGKILL');
        log(`SIGKILL nats-server ${nats[server].name}`);
        await sleep(between(DOWN_MS));
        await nats[server].start();
      } else {
        const victim = fault === 2 ? nodes[index]! : null;
        const pid = victim?.pid ?? nats[server].pid!;
        if (victim !== null) nodes[index] = null;
        process.kill(pid, 'SIGSTOP');
        const ms = between(PAUSE_MS);
        log(`SIGSTOP ${victim !== null ? `node n${index + 1}` : `nats-server ${nats[server].name}`} for ${Math.round(ms / 1000)} s`);
        await sleep(ms);
        process.kill(pid, 'SIGCONT');
        if (victim !== null) nodes[index] = victim;
      }
      if (fault < 2) result.kills++;
      else result.pauses++;
    }
    running = false;
    await Promise.all(load);
    noneDied();
    log(`${result.kills} kills, ${result.pauses} pauses, ${result.acknowledged} batches, ${result.tagEdits} tag edits and ${reportIds.length} reports acknowledged; checking every node once settled`);
    // The nodes compare the log's tail once it is quiet, and one that read an odd history rebuilds itself
    // (log-checks.ts): a write is lost when it is missing once they had the time to. A CI run's quick row read
    // a node 15 s after its last fault, before any compare, and found it without a VM two others held.
    await sleep(SETTLE_MS);
    for (const node of live()) await callServing(`${node.gatewayUrl}/opthub-health`);
    const notServing = new Set<JvmlensService>();
    for (const [index, node] of nodes.entries()) {
      if (node === null) continue;
      // A node still DOWN once the others serve (one that read the odd history of the log and found no node
      // to copy) is checked once, not once per VM: each read of it would wait REPORT_WAIT_MS.
      const health = await callServing(`${node.gatewayUrl}/opthub-health`);
      if (health.status !== 200) {
        notServing.add(node);
        result.unreadable += expected.size;
        log(`n${index + 1} is not serving: ${health.status} ${JSON.stringify(health.body).slice(0, 300)}`);
        continue;
      }
      for (const [vmId, tags] of expected) {
        const instance = await callServing(`${node.apiUrl}/public/instance/${vmId}`);
        const found = instance.status === 200 ? (instance.body as { tags: unknown }).tags : null;
        if (instance.status === 404) result.lost++;
        else if (instance.status !== 200) result.unreadable++;
        else if (tags !== null && JSON.stringify(found) !== JSON.stringify(tags)) result.wrongTags++;
        else continue;
        // The first ones named, with what the node said: enough to find their batches in the nodes' logs.
        if (result.lost + result.unreadable + result.wrongTags <= NAMED) log(`VM ${vmId} on n${index + 1}: ${instance.status} ${JSON.stringify(instance.status === 200 ? found : instance.body).slice(0, 300)}; acknowledged by ${startedBy.get(vmId)}, tags ${JSON.stringify(tags)}${editedBy.has(vmId) ? ` (the last edit by ${editedBy.get(vmId)})` : ''}`);
      }
      result.vmsPerNode.push(await reportTotal(node, 'jvmInventory', {}));
      result.methodsPerNode.push(await reportTotal(node, 'codeInventory', { from: '30d' }));
    }
    result.reports = reportIds.length;
    for (const reportId of reportIds) {
      const outcomes = await Promise.all(live().map((node) => (notServing.has(node) ? Promise.resolve('not serving') : finalOutcome(node, reportId))));
      if (outcomes.some((outcome) => outcome.startsWith('PROCESSING') || outcome !== outcomes[0])) {
        result.reportsDiffering++;
        log(`report ${reportId} differs between the nodes: ${outcomes.join(' | ')}`);
      }
    }
    // Whether the nodes read one log: their hashes of each window they applied whole.
    const nc = await connect({ servers: nats.map((server) => server.url) });
    try {
      const byWindow = new Map<number, { nodeId: string; crc: number }[]>();
      // Read once JetStream answers: the last fault may have ended a moment ago (CI once failed here with
      // "JetStream system temporarily unavailable").
      for (const window of await untilAnswered(() => recordedWindows(nc), REPORT_WAIT_MS)) byWindow.set(window.to, [...(byWindow.get(window.to) ?? []), window]);
      for (const [to, hashes] of byWindow) {
        if (hashes.length < 2) continue;
        result.logWindowsCompared++;
        if (new Set(hashes.map((hash) => hash.crc)).size === 1) continue;
        result.logWindowsDiffering++;
        log(`the nodes read the log's window ending at ${to} otherwise: ${hashes.map((hash) => `${hash.nodeId} ${hash.crc}`).join(', ')}`);
      }
    } finally {
      await nc.close();
    }
  } catch (error) {
    // A node that never came UP again, say: the run's folder goes when the bench ends, and the logs say why.
    throw new Error(`${(error as Error).message}\n(the nodes' logs: ${keepNodeLogs(nodeLogs)})`, { cause: error });
  } finally {
    await Promise.all(nodes.map((node) => node?.stop()));
    await Promise.all(nats.map((server) => server.stop()));
  }
  return result;
}

/** Copies a run's node logs where they outlive the bench (its folders go when it ends); gives where. */
export function keepNodeLogs(nodeLogs: string): string {
  const kept = join(tmpdir(), `jvmlens-chaos-logs-${new Date().toISOString().replaceAll(':', '-')}`);
  cpSync(nodeLogs, kept, { recursive: true });
  return kept;
}
