// NATS servers that anyone on the network could write to would let anyone change a cluster's data, so an
// operator gives them a password and TLS. What a user relies on: a node and the CLI reach such servers with
// the credentials in the URLs (nats://user:password@host, as NATS clients take them) and a private CA,
// and a wrong password or an untrusted certificate leaves the node DOWN saying why, its password never shown.
// Real processes: one nats-server with JetStream, user/password authorization and TLS (certificates made by
// openssl for the test), and jvmlens nodes.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { natsAccess, shownUrls } from '../../src/cluster/nats-access.ts';
import { startNatsServer } from '../helpers/cluster.ts';
import { ingest, vmStart } from '../helpers/events.ts';
import { freePort, request, runCli, startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

const missing = ['nats-server', 'openssl'].filter((command) => spawnSync(command, ['--version']).error !== undefined);
if (missing.length > 0 && process.env.CI === 'true') throw new Error(`${missing.join(', ')} not installed (apt-get install nats-server openssl)`);
const skip = missing.length > 0 && `${missing.join(', ')} not installed`;

const PASSWORD = 'p@ss/word:1';
const KEY = 'nats_access_test_key_0123456789';
let dir = '';
let caFile = '';
let port = 0;
let natsServer: ChildProcess | null = null;
const nodes: RunningService[] = [];

/** The server's URL with `password` in it, percent-encoded as a URL requires. */
function urlWith(password: string): string {
  return `tls://jv:${encodeURIComponent(password)}@127.0.0.1:${port}`;
}

before(async () => {
  if (skip) return;
  dir = tempDir('jvmlens-nats-access-');
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=jvmlens test CA');
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'san.ext');
  caFile = join(dir, 'ca.pem');
  port = await freePort();
  writeFileSync(join(dir, 'nats.conf'), `listen: "127.0.0.1:${port}"
jetstream { store_dir: "${join(dir, 'js')}" }
authorization { user: "jv", password: "${PASSWORD}" }
tls { cert_file: "${join(dir, 'server.pem')}", key_file: "${join(dir, 'server.key')}" }
`);
  natsServer = await startNatsServer(['-c', join(dir, 'nats.conf')], port);
});

after(async () => {
  await Promise.all(nodes.map((node) => node.stop()));
  natsServer?.kill();
});

test('credentials in the URLs are taken apart from the servers, and shown nowhere', () => {
  assert.deepEqual(natsAccess(['nats://jv:p%40ss%2Fword%3A1@nats-1:4222', 'nats://nats-2:4222'], ''), { servers: ['nats://nats-1:4222', 'nats://nats-2:4222'], user: 'jv', pass: PASSWORD });
  assert.deepEqual(natsAccess(['nats://s3cr3t-token@nats-1:4222'], ''), { servers: ['nats://nats-1:4222'], token: 's3cr3t-token' });
  assert.deepEqual(natsAccess(['tls://nats-1:4222'], ''), { servers: ['tls://nats-1:4222'], tls: {} });
  assert.deepEqual(natsAccess(['nats://nats-1:4222'], '/etc/nats/ca.pem'), { servers: ['nats://nats-1:4222'], tls: { caFile: '/etc/nats/ca.pem' } });
  assert.equal(shownUrls(['nats://jv:secret@nats-1:4222', 'tls://token@nats-2:4222']), 'nats://nats-1:4222,tls://nats-2:4222');
});

test('a node and the CLI reach NATS servers with a password and TLS signed by a private CA', { skip }, async () => {
  // The URL in the environment, as the README advises: not in the process list.
  const node = await startService({ noStaticKey: true, env: { JVMLENS_CLUSTER: urlWith(PASSWORD) }, args: ['--api-key', KEY, '--node-id', 'a1', '--cluster-ca', caFile] });
  nodes.push(node);
  const vmId = '0acce550-0000-4000-8000-000000000001';
  assert.equal((await ingest(node.gatewayUrl, KEY, [vmStart(vmId, Date.now() - 1_000)])).status, 200);
  assert.equal((await request(`${node.apiUrl}/public/instance/${vmId}`, { key: KEY })).status, 200);

  const created = await runCli(['keys', 'create', '--cluster', urlWith(PASSWORD), '--cluster-ca', caFile, '--user', 'ops', '--scopes', 'read']);
  assert.equal(created.code, 0, created.stderr);
  const key = /key: +(\S+)/.exec(created.stdout)![1];
  const deadline = Date.now() + 10_000;
  let status = 0;
  while (status !== 200 && Date.now() < deadline) {
    status = (await request(`${node.apiUrl}/public/instance/${vmId}`, { key })).status;
    if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.equal(status, 200, 'the key created on the cluster is accepted by the node');
});

test('a wrong password or a certificate the node cannot check leaves it DOWN saying why, the password shown nowhere', { skip }, async () => {
  const wrong = 'not-the-password';
  const cases = [
    { name: 'b1', url: urlWith(wrong), ca: ['--cluster-ca', caFile], reason: /authorization/i },
    { name: 'b2', url: urlWith(PASSWORD), ca: [], reason: /certificate/i },
  ];
  for (const { name, url, ca, reason } of cases) {
    const node = await startService({ noStaticKey: true, waitReady: false, args: ['--api-key', KEY, '--node-id', name, '--cluster', url, ...ca] });
    nodes.push(node);
    let health = await request(`${node.gatewayUrl}/opthub-health`);
    const deadline = Date.now() + 15_000;
    while (!reason.test(String(health.body?.note)) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      health = await request(`${node.gatewayUrl}/opthub-health`);
    }
    assert.equal(health.status, 503, `${name}: ${health.text}`);
    assert.match(health.body.note, reason, name);
    for (const shown of [health.text, node.stdout(), node.stderr()]) {
      assert.ok(!shown.includes(wrong) && !shown.includes(encodeURIComponent(PASSWORD)) && !shown.includes(PASSWORD), `${name} shows a password: ${shown}`);
    }
  }
  const refused = await runCli(['keys', 'list', '--cluster', urlWith(wrong), '--cluster-ca', caFile]);
  assert.equal(refused.code, 4, refused.stderr);
  assert.match(refused.stderr, /cannot reach the cluster: .*authorization/i);
  assert.ok(!refused.stderr.includes(wrong), refused.stderr);
});

test('a node started before its NATS server is DOWN saying why, logs it once, and turns UP once the server starts', { skip }, async () => {
  const latePort = await freePort();
  const node = await startService({ noStaticKey: true, waitReady: false, args: ['--api-key', KEY, '--node-id', 'c1', '--cluster', `nats://127.0.0.1:${latePort}`] });
  nodes.push(node);
  let health = await request(`${node.gatewayUrl}/opthub-health`);
  const deadline = Date.now() + 15_000;
  while (!/attempt [3-9]/.test(String(health.body?.note)) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    health = await request(`${node.gatewayUrl}/opthub-health`);
  }
  assert.equal(health.status, 503, health.text);
  assert.match(health.body.note, /^joining the cluster failed \(attempt \d+\): cannot connect to NATS at nats:\/\/127\.0\.0\.1:\d+: connection refused$/);
  // Retried every second: logged once while the reason stays the same.
  assert.equal(node.stderr().split('\n').filter((line) => line.includes('joining the cluster failed')).length, 1, node.stderr());

  const late = spawn('nats-server', ['-js', '-sd', join(dir, 'late'), '-a', '127.0.0.1', '-p', String(latePort)], { stdio: 'ignore' });
  try {
    const up = Date.now() + 30_000;
    while (health.status !== 200 && Date.now() < up) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      health = await request(`${node.gatewayUrl}/opthub-health`);
    }
    assert.equal(health.status, 200, health.text);
  } finally {
    await node.stop();
    late.kill();
  }
});
