// `npm run cluster:local`, as someone trying a cluster uses it: it starts three nats-servers and three nodes
// and prints a key; a write through one node is read through another; every node's log records name the
// node; a second one on the directory in use is refused; a node or a server killed is named with the command
// that starts it again, which works; Ctrl-C stops everything it started and keeps the data; started again on
// it, the cluster keeps its keys and says how many it has. With code groups, each node takes one, and the
// cluster keeps them.
import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { promisify } from 'node:util';
import { ingest, vmStart } from '../helpers/events.ts';
import { request, ROOT, tempDir } from '../helpers/service.ts';

const missing = spawnSync('nats-server', ['--version']).error !== undefined;
if (missing && process.env.CI === 'true') throw new Error('nats-server is not installed (apt-get install nats-server)');

/** A process's stdout as it comes, and a wait for a line matching a pattern. */
class Output {
  text = '';
  constructor(child: ChildProcess) {
    child.stdout!.on('data', (chunk: Buffer) => (this.text += chunk.toString()));
  }

  async line(pattern: RegExp, timeoutMs = 60_000): Promise<RegExpMatchArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = this.text.split('\n').map((line) => pattern.exec(line)).find((found) => found !== null);
      if (match) return match;
      if (Date.now() > deadline) throw new Error(`no line matching ${pattern} within ${timeoutMs} ms:\n${this.text}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

function accepts(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const started: ChildProcess[] = [];
after(async () => {
  // Ctrl-C first: cluster:local killed outright would leave its servers and nodes running after a failed test.
  const running = started.filter((child) => child.exitCode === null && child.signalCode === null);
  await Promise.all(running.map((child) => new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.once('exit', () => resolve(clearTimeout(kill)));
    child.kill('SIGINT');
  })));
});

test('npm run cluster:local starts a cluster to try, names what dies and how to restart it, and stops on Ctrl-C', { skip: missing && 'nats-server is not installed', timeout: 180_000 }, async () => {
  const dir = tempDir('jvmlens-local-');
  const local = spawn(process.execPath, [join(ROOT, 'dist/src/cluster/local.js'), dir, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  started.push(local);
  const output = new Output(local);
  await output.line(/^Ctrl-C stops everything\.$/);
  const key = (await output.line(/^key:\s+(\S+)$/))[1];
  const nodes = await Promise.all([1, 2, 3].map(async (k) => {
    const [, pid, gateway, api] = await output.line(new RegExp(`^node n${k} \\(pid (\\d+)\\): gateway (\\S+), API (\\S+)/public$`));
    return { pid: Number(pid), gateway, api };
  }));
  const servers = await Promise.all([1, 2, 3].map(async (k) => {
    const [, pid, url] = await output.line(new RegExp(`^nats-server s${k} \\(pid (\\d+)\\): (\\S+)$`));
    return { pid: Number(pid), url };
  }));

  // A second cluster:local on the directory in use (a restart command meant for another terminal, run as
  // this tool) is refused before it rewrites the servers' configurations or starts a server on their stores.
  const configs = [1, 2, 3].map((k) => readFileSync(join(dir, `s${k}.conf`), 'utf8'));
  const second = spawnSync(process.execPath, [join(ROOT, 'dist/src/cluster/local.js'), dir, '--port', '0'], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(second.status, 2, `${second.stdout}\n${second.stderr}`);
  assert.match(second.stderr, new RegExp(`^cluster:local: ${dir} is in use by process ${local.pid}, another cluster:local on it: stop that one \\(Ctrl-C\\) or give another DIR; nothing was started$`, 'm'));
  assert.doesNotMatch(second.stdout, /^nats-server /m);
  assert.deepEqual([1, 2, 3].map((k) => readFileSync(join(dir, `s${k}.conf`), 'utf8')), configs);

  const vmId = 'local-try-vm';
  const written = await ingest(nodes[0].gateway, key, [vmStart(vmId, Date.now() - 1000)]);
  assert.equal(written.status, 200, JSON.stringify(written.body));
  const read = await request(`${nodes[2].api}/public/instance/${vmId}`, { key });
  assert.equal(read.status, 200, read.text);

  process.kill(nodes[1].pid, 'SIGKILL');
  process.kill(servers[1].pid, 'SIGKILL');
  const restartNode = (await output.line(/^\[n2\] exited \(SIGKILL\); to start it again \(in another terminal\): (.+)$/))[1];
  const restartServer = (await output.line(/^\[s2\] nats-server exited \(SIGKILL\); to start it again \(in another terminal\): (.+)$/))[1];
  assert.deepEqual(restartServer.split(' '), ['nats-server', '-c', join(dir, 's2.conf')]);

  // The commands as printed (no word of them needs quoting here), started as a user would.
  const server = spawn(restartServer.split(' ')[0], restartServer.split(' ').slice(1), { stdio: 'ignore' });
  started.push(server);
  const [command, ...args] = restartNode.split(' ');
  assert.equal(command, process.execPath);
  const node = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(node);
  const nodeOutput = new Output(node);
  const api = (await nodeOutput.line(/^jvmlens: api (\S+)\/public$/))[1];
  await nodeOutput.line(/^jvmlens: ready$/);
  const again = await request(`${api}/public/instance/${vmId}`, { key });
  assert.equal(again.status, 200, again.text);

  // The key printed at the first start revoked, another made: started again, the tool must not claim the first still works.
  const keysCli = (...args: string[]) => promisify(execFile)(process.execPath, [join(ROOT, 'dist/src/main.js'), 'keys', ...args, '--cluster', servers.map(({ url }) => url).join(',')]);
  const otherKey = (/^key:\s+(\S+)$/m.exec((await keysCli('create', '--user', 'carol', '--scopes', 'read')).stdout) ?? [])[1];
  assert.ok(otherKey !== undefined);
  await keysCli('revoke', (await output.line(/^key id: (\S+)$/))[1]);
  node.kill('SIGTERM');

  // Every log record a node wrote names that node.
  const records = output.text.split('\n').flatMap((line) => {
    const match = /^\[(n\d)\] (\{.*)$/.exec(line);
    return match === null ? [] : [{ prefix: match[1], record: JSON.parse(match[2]) as { node?: string; message: string } }];
  });
  for (const k of [1, 2, 3]) assert.ok(records.some(({ prefix, record }) => prefix === `n${k}` && record.message === 'ready'), `n${k} logged ready`);
  for (const { prefix, record } of records) assert.equal(record.node, prefix, JSON.stringify(record));

  local.kill('SIGINT');
  const [code] = await new Promise<[number | null]>((resolve) => local.once('exit', (exitCode) => resolve([exitCode])));
  assert.equal(code, 0);
  for (const { pid } of [nodes[0], nodes[2], servers[0], servers[2]]) assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, `process ${pid} is gone`);
  for (const { url } of [servers[0], servers[2]]) assert.equal(await accepts(url), false, `${url} no longer accepts connections`);
  for (const name of ['n1', 'n2', 'n3', 's1', 's2', 's3']) assert.ok(existsSync(join(dir, name)), `${name}'s data stays`);

  // Not while the server restarted by hand still runs on its store: a second one there would wreck it.
  const whileServer = spawnSync(process.execPath, [join(ROOT, 'dist/src/cluster/local.js'), dir, '--port', '0'], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(whileServer.status, 2, `${whileServer.stdout}\n${whileServer.stderr}`);
  assert.match(whileServer.stderr, new RegExp(`^cluster:local: nats-server \\(pid ${server.pid}\\) runs on ${join(dir, 's2.conf')}: stop it before starting the cluster in ${dir} again; nothing was started$`, 'm'));
  await new Promise((resolve) => {
    server.once('exit', resolve);
    server.kill('SIGTERM');
  });

  // Started again on its data, the cluster keeps its keys: none is created, and the one made since works.
  const restarted = spawn(process.execPath, [join(ROOT, 'dist/src/cluster/local.js'), dir, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  started.push(restarted);
  const againOutput = new Output(restarted);
  await againOutput.line(/^Ctrl-C stops everything\.$/);
  assert.match(againOutput.text, /^API keys: this cluster has 1 not revoked and 1 revoked; list them: jvmlens keys list --cluster nats:/m);
  assert.doesNotMatch(againOutput.text, /^key:/m);
  const [, againApi] = await againOutput.line(/^node n1 \(pid \d+\): gateway \S+, API (\S+)\/public$/);
  const readAgain = await request(`${againApi}/public/instance/${vmId}`, { key: otherKey });
  assert.equal(readAgain.status, 200, readAgain.text);
  restarted.kill('SIGINT');
  assert.equal(await new Promise((resolve) => restarted.once('exit', resolve)), 0);
});

test('npm run cluster:local --code-groups 3 gives each node a group, keeps them when started again, and refuses another count', { skip: missing && 'nats-server is not installed', timeout: 300_000 }, async () => {
  const local = (args: readonly string[]): { child: ChildProcess; output: Output } => {
    const child = spawn(process.execPath, [join(ROOT, 'dist/src/cluster/local.js'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    started.push(child);
    return { child, output: new Output(child) };
  };
  /** Its exit code and what it wrote to stderr; a run that does not end within 120 s fails with what it printed. */
  const ended = ({ child, output }: { child: ChildProcess; output: Output }): Promise<{ code: number | null; stderr: string }> => new Promise((resolve, reject) => {
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const late = setTimeout(() => reject(new Error(`cluster:local did not end within 120 s; it printed:\n${output.text}\n${stderr}`)), 120_000);
    child.once('exit', (code) => {
      clearTimeout(late);
      resolve({ code, stderr });
    });
  });

  const tooMany = local([tempDir('jvmlens-local-'), '--code-groups', '4']);
  const refused = await ended(tooMany);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /^cluster:local: --code-groups 4 is not 1 to 3: each of the 3 nodes stores one group's code$/m);

  const dir = tempDir('jvmlens-local-');
  const first = local([dir, '--port', '0', '--code-groups', '3']);
  const firstEnded = ended(first);
  await first.output.line(/^Ctrl-C stops everything\.$/);
  const groupsLine = (await first.output.line(/^code groups .*$/))[0];
  const holders = /^code groups {2}0: (n\d); 1: (n\d); 2: (n\d)$/.exec(groupsLine);
  assert.ok(holders !== null, groupsLine);
  assert.deepEqual(holders.slice(1).sort(), ['n1', 'n2', 'n3'], groupsLine);
  // Its terminal closed (SIGHUP) stops everything it started, as Ctrl-C does: no nats-server runs on alone.
  const serverPids = await Promise.all([1, 2, 3].map(async (k) => Number((await first.output.line(new RegExp(`^nats-server s${k} \\(pid (\\d+)\\)`)))[1])));
  first.child.kill('SIGHUP');
  assert.equal((await firstEnded).code, 0);
  for (const pid of serverPids) assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, `nats-server ${pid} is gone`);

  // Without the flag, the count the cluster was created with; each node keeps the group its directory records.
  const again = local([dir, '--port', '0']);
  const againEnded = ended(again);
  await again.output.line(/^Ctrl-C stops everything\.$/);
  assert.equal((await again.output.line(/^code groups .*$/))[0], groupsLine);
  again.child.kill('SIGINT');
  assert.equal((await againEnded).code, 0);

  const other = local([dir, '--port', '0', '--code-groups', '2']);
  const otherEnded = await ended(other);
  assert.equal(otherEnded.code, 2, `${other.output.text}\n${otherEnded.stderr}`);
  assert.match(otherEnded.stderr, new RegExp(`^cluster:local: the cluster in ${dir} was created with --code-groups 3, which cannot change: start it with --code-groups 3 \\(or without the flag\\), or give another DIR$`, 'm'));
  assert.doesNotMatch(other.output.text, /^node n\d/m, 'no node started');
});
