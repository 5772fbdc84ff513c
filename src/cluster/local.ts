// `npm run cluster:local`: three nats-server processes and three jvmlens nodes on loopback, to try a cluster
// on one machine (README "Running a cluster"). Ctrl-C stops them all; the data stays in the directory.
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startNatsServers } from './nats-servers.ts';

const MAIN = fileURLToPath(new URL('../main.js', import.meta.url));
const NODES = 3;
const dir = resolve(process.argv[2] ?? 'cluster-local');
mkdirSync(dir, { recursive: true });

const servers = await startNatsServers(3, dir);
const urls = servers.map((server) => server.url).join(',');
process.stdout.write(`nats-server: ${urls} (data in ${dir})\n`);

const nodes: ChildProcess[] = [];
for (let k = 1; k <= NODES; k++) {
  const args = [MAIN, 'serve', '--cluster', urls, '--node-id', `n${k}`, '--data-dir', resolve(dir, `n${k}`), '--gateway-port', String(8080 + 100 * (k - 1)), '--api-port', String(8090 + 100 * (k - 1))];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  child.stdout!.on('data', (chunk: Buffer) => process.stdout.write(chunk.toString().replace(/^(?=.)/gm, `[n${k}] `)));
  nodes.push(child);
}

// A key every node accepts, through the cluster's log (nodes of a cluster create none themselves).
const created = spawnSync(process.execPath, [MAIN, 'keys', 'create', '--cluster', urls, '--user', 'admin', '--scopes', 'read,write,ingest'], { encoding: 'utf8' });
process.stdout.write(created.stdout + created.stderr);
process.stdout.write('nodes: gateways on :8080, :8180, :8280; APIs on :8090, :8190, :8290. Ctrl-C stops everything.\n');

let stopping = false;
const stop = async (): Promise<void> => {
  if (stopping) return;
  stopping = true;
  await Promise.all(nodes.map((child) => new Promise((done) => {
    child.once('exit', done);
    child.kill('SIGTERM');
  })));
  await Promise.all(servers.map((server) => server.stop()));
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
