// `npm run cluster:local`: three nats-server processes and three jvmlens nodes on loopback, to try a cluster
// on one machine (README "Running a cluster"), in up to three code groups. Ctrl-C stops them all; the data
// stays in the directory. A node or server that dies meanwhile (killed to see what the others do) is named,
// with the command that starts it again.
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { SERVE_NODE_FLAGS } from '../node-flags.ts';
import { takeWriterLock, writerHolder } from '../storage/writer-lock.ts';
import type { WriterLock } from '../storage/writer-lock.ts';
import { clusterKeyRecords } from './keys.ts';
import { ClusterLog } from './log.ts';
import { startNatsServers } from './nats-servers.ts';
import { clusterShape } from './shards.ts';
import type { ClusterShape } from './shards.ts';
import type { NatsServer } from './nats-servers.ts';

const USAGE = 'usage: npm run cluster:local -- [DIR] [--port N] [--code-groups G]   (DIR default ./cluster-local; N: the first node\'s gateway port, default 8080, its API N+10, the next node N+100; 0: any free ports; G: 1 to 3, each node storing one group\'s code, fixed at the cluster\'s first start: default 1, or the count DIR\'s cluster was created with)';
const MAIN = fileURLToPath(new URL('../main.js', import.meta.url));
const NODES = 3;

function options(): { dir: string; port: number; codeGroups: number | null } {
  try {
    const { values, positionals } = parseArgs({ options: { port: { type: 'string' }, 'code-groups': { type: 'string' } }, allowPositionals: true });
    if (positionals.length > 1) throw new Error(`one directory at most, not ${positionals.length}`);
    const port = Number(values.port ?? 8080);
    if (!/^\d+$/.test(values.port ?? '8080') || port > 65535 - 100 * (NODES - 1) - 10) throw new Error(`--port ${values.port} is not a port that leaves room for ${NODES} nodes' ports`);
    // More groups than nodes would leave a group with no node: its code would be stored nowhere.
    const codeGroups = values['code-groups'] === undefined ? null : Number(values['code-groups']);
    if (codeGroups !== null && (!/^[1-9]$/.test(values['code-groups']!) || codeGroups > NODES)) throw new Error(`--code-groups ${values['code-groups']} is not 1 to ${NODES}: each of the ${NODES} nodes stores one group's code`);
    return { dir: resolve(positionals[0] ?? 'cluster-local'), port, codeGroups };
  } catch (error) {
    process.stderr.write(`cluster:local: ${(error as Error).message}\n${USAGE}\n`);
    process.exit(2);
  }
}

/** A command line a shell runs as shown. */
function shellLine(words: readonly string[]): string {
  return words.map((word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`)).join(' ');
}

/** Every line of `stream` on stdout, after `prefix`; `onLine` sees each line as well. */
function relay(stream: NodeJS.ReadableStream, prefix: string, onLine: (line: string) => void = () => undefined): void {
  let partial = '';
  // Decoded as a stream: a character split between two chunks stays whole.
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      process.stdout.write(`${prefix} ${line}\n`);
      onLine(line);
    }
  });
}

/**
 * A key every node accepts, created through the cluster's log (nodes of a cluster create none themselves),
 * as a single node does: at the first start only. Started again on its data, the cluster keeps its keys.
 */
async function firstKey(urls: string): Promise<string> {
  const listed = await withLog(urls, (log) => clusterKeyRecords(log)).catch((error: Error) => error);
  const another = shellLine(['jvmlens', 'keys', 'create', '--cluster', urls, '--user', 'ID']);
  // Not knowing whether there is one, create none: each start would otherwise risk another.
  if (listed instanceof Error) return `API keys: could not list this cluster's keys (${listed.message}); to create one: ${another}\n`;
  if (listed.length > 0) {
    // The key printed at the first start may be among the revoked ones: only the counts are known true.
    const revoked = listed.filter((record) => record.revokedAt !== null).length;
    const held = listed.length === revoked ? `no key that is not revoked (${revoked} revoked)` : `${listed.length - revoked} not revoked${revoked > 0 ? ` and ${revoked} revoked` : ''}`;
    return `API keys: this cluster has ${held}; list them: ${shellLine(['jvmlens', 'keys', 'list', '--cluster', urls])}; another: ${another}\n`;
  }
  const created = await promisify(execFile)(process.execPath, [MAIN, 'keys', 'create', '--cluster', urls, '--user', 'admin', '--scopes', 'read,write,ingest']).catch((error: { stdout?: string; stderr?: string }) => error);
  return `${created.stdout ?? ''}${created.stderr ?? ''}`;
}

/** `use` of the cluster's log, opened for it alone. */
async function withLog<T>(urls: string, use: (log: ClusterLog) => Promise<T>): Promise<T> {
  const log = await ClusterLog.open(urls.split(','), 'cluster-local', 'once');
  try {
    return await use(log);
  } finally {
    await log.close();
  }
}

/** JetStream answers a few seconds after the servers start again on their data, while it elects the buckets' leaders. */
const SHAPE_WAIT_MS = 60_000;

/** The shape the cluster was created with, null before its first node started. */
async function createdShape(urls: string): Promise<ClusterShape | null> {
  const deadline = Date.now() + SHAPE_WAIT_MS;
  for (;;) {
    try {
      return await withLog(urls, (log) => clusterShape(log.nc));
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/** With code groups, which node stores which group, as `jvmlens cluster status` shows it (each node chose its own at its first start). */
async function groupsLine(urls: string): Promise<string> {
  const status = await promisify(execFile)(process.execPath, [MAIN, 'cluster', 'status', '--cluster', urls]).catch((error: Error) => error);
  if (status instanceof Error) return `code groups: could not read the cluster's status (${status.message}); see it with ${shellLine(['jvmlens', 'cluster', 'status', '--cluster', urls])}\n`;
  const line = status.stdout.split('\n').find((text) => text.startsWith('groups '));
  return `code ${line ?? 'groups: none shown by jvmlens cluster status'}\n`;
}

/**
 * DIR for this process alone. Another cluster:local on it would rewrite the servers' configurations and start
 * three more servers on the same JetStream stores, which wrecks the running cluster's log for good.
 */
async function holdDir(dir: string): Promise<WriterLock> {
  try {
    return await takeWriterLock(dir, 'service', 0, false);
  } catch (error) {
    const holder = writerHolder(dir);
    process.stderr.write(`cluster:local: ${dir} is in use by ${holder === null ? `another process (${(error as Error).message})` : `process ${holder.pid}`}, another cluster:local on it: stop that one (Ctrl-C) or give another DIR; nothing was started\n`);
    process.exit(2);
  }
}

/**
 * The nats-servers running on one of DIR's configurations, and so on its stores, by pid: one started by hand
 * with the command printed when it died, or left by a cluster:local killed outright. Read from /proc (none
 * found where there is none).
 */
function serversRunningOn(dir: string): { pid: number; configFile: string }[] {
  const configs = new Set(Array.from({ length: NODES }, (_, index) => join(dir, `s${index + 1}.conf`)));
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  return pids.flatMap((pid) => {
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const flag = args.findIndex((arg) => arg === '-c' || arg === '--config');
      if (basename(args[0]) !== 'nats-server' || flag < 0) return [];
      const configFile = resolve(readlinkSync(`/proc/${pid}/cwd`), args[flag + 1] ?? '');
      return configs.has(configFile) ? [{ pid: Number(pid), configFile }] : [];
    } catch {
      // Ended meanwhile, or another user's.
      return [];
    }
  });
}

const { dir, port, codeGroups } = options();
mkdirSync(dir, { recursive: true });
const dirLock = await holdDir(dir);
// A second server on a store wrecks it as a second cluster:local does.
const running = serversRunningOn(dir);
if (running.length > 0) {
  process.stderr.write(`cluster:local: ${running.map(({ pid, configFile }) => `nats-server (pid ${pid}) runs on ${configFile}`).join(', ')}: stop it before starting the cluster in ${dir} again; nothing was started\n`);
  dirLock.release();
  process.exit(2);
}
let stopping = false;
let servers: NatsServer[] = [];
const nodes: ChildProcess[] = [];

const stop = async (exitCode = 0): Promise<void> => {
  if (stopping) return;
  stopping = true;
  await Promise.all(nodes.map((child) => new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done(undefined);
    child.once('exit', done);
    child.kill('SIGTERM');
  })));
  await Promise.all(servers.map((server) => server.stop()));
  dirLock.release();
  process.exit(exitCode);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
// Its terminal closed: nats-server takes SIGHUP for a reload and would run on without this process and its
// lock, and a cluster:local started again on DIR would start more servers on their stores.
process.on('SIGHUP', () => void stop());

servers = await startNatsServers(3, dir, {
  onExit: (server, how) => {
    if (!stopping) process.stdout.write(`[${server.name}] nats-server exited (${how}); to start it again (in another terminal): ${shellLine(['nats-server', '-c', server.configFile])}\n`);
  },
});
const urls = servers.map((server) => server.url).join(',');
for (const server of servers) process.stdout.write(`nats-server ${server.name} (pid ${server.pid}): ${server.url}\n`);
process.stdout.write(`cluster: ${urls} (data in ${dir})\n`);

// Started again on its directory, the cluster keeps the code groups it was created with. Not knowing the
// count, start no node: one started with another count than the cluster's would only refuse to join.
const created = await createdShape(urls).catch(async (error: Error) => {
  process.stderr.write(`cluster:local: could not read how many code groups the cluster in ${dir} has (${error.message}); nothing was started\n`);
  await stop(1);
  return null;
});
if (created !== null && codeGroups !== null && created.codeGroups !== codeGroups) {
  process.stderr.write(`cluster:local: the cluster in ${dir} was created with --code-groups ${created.codeGroups}, which cannot change: start it with --code-groups ${created.codeGroups} (or without the flag), or give another DIR\n`);
  await stop(2);
}
const groups = codeGroups ?? created?.codeGroups ?? 1;

/** Each node, and its gateway and API once it is ready. */
const started = Array.from({ length: NODES }, (_, index) => {
  const id = `n${index + 1}`;
  const ports = port === 0 ? ['0', '0'] : [String(port + 100 * index), String(port + 10 + 100 * index)];
  const args = [...SERVE_NODE_FLAGS, MAIN, 'serve', '--cluster', urls, '--node-id', id, '--data-dir', resolve(dir, id), '--gateway-port', ports[0], '--api-port', ports[1], '--code-groups', String(groups)];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  nodes.push(child);
  child.once('exit', (code, signal) => {
    if (!stopping) process.stdout.write(`[${id}] exited (${signal ?? `exit code ${code}`}); to start it again (in another terminal): ${shellLine([process.execPath, ...args])}\n`);
  });
  relay(child.stderr!, `[${id}]`);
  // Once it is ready; null when it exits before (its lines above say why).
  const ready = new Promise<{ gateway: string; api: string } | null>((done) => {
    child.once('exit', () => done(null));
    let gateway = '';
    let api = '';
    relay(child.stdout!, `[${id}]`, (line) => {
      gateway ||= /^jvmlens: gateway (\S+)/.exec(line)?.[1] ?? '';
      api ||= /^jvmlens: api (\S+)/.exec(line)?.[1] ?? '';
      if (line === 'jvmlens: ready') done({ gateway, api });
    });
  });
  return { id, child, ready };
});

process.stdout.write(await firstKey(urls));
for (const { id, child, ready } of started) {
  const serving = await ready;
  process.stdout.write(serving === null ? `node ${id} did not start\n` : `node ${id} (pid ${child.pid}): gateway ${serving.gateway}, API ${serving.api}\n`);
}
if (groups > 1) process.stdout.write(await groupsLine(urls));
process.stdout.write('Ctrl-C stops everything.\n');
