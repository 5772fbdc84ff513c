// Reads that need not wait (README "Reads that need not wait"): a GET with `x-jvmlens-consistency: local`
// answers with what its node has applied, without asking the log how far it goes (and so does the command
// line's with --consistency local); a read without it waits for that answer (read your writes). Real
// processes: three nats-servers and one node; with every server stopped (SIGSTOP), no question can be
// answered, so only the local read can answer before they resume.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { startNatsServers } from '../../src/cluster/nats-servers.ts';
import type { NatsServer } from '../../src/cluster/nats-servers.ts';
import { ingest, vmStart } from '../helpers/events.ts';
import { request, runCli, startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

const missing = spawnSync('nats-server', ['--version']).error !== undefined;
if (missing && process.env.CI === 'true') throw new Error('nats-server is not installed (apt-get install nats-server)');
const KEY = 'local_reads_test_key_0123456789';
const VM = '4a0e0e00-0000-4000-8000-00000000c0c0';

let nats: NatsServer[] = [];
let node: RunningService;

before(async () => {
  if (missing) return;
  const dir = tempDir('jvmlens-local-reads-');
  nats = await startNatsServers(3, dir);
  node = await startService({ noStaticKey: true, dataDir: `${dir}/n1`, args: ['--api-key', KEY, '--cluster', nats.map((server) => server.url).join(','), '--node-id', 'n1'] });
});

after(async () => {
  for (const server of nats) if (server.pid !== undefined) process.kill(server.pid, 'SIGCONT');
  await node?.stop();
  await Promise.all(nats.map((server) => server.stop()));
});

test('a local read answers while the log cannot be asked; a read-your-writes read waits for it', { skip: missing && 'nats-server is not installed' }, async () => {
  assert.equal((await ingest(node.gatewayUrl, KEY, [vmStart(VM, Date.now())])).status, 200);
  const url = `${node.apiUrl}/public/instance/${VM}`;
  assert.equal((await request(url, { key: KEY })).status, 200);
  for (const server of nats) process.kill(server.pid!, 'SIGSTOP');
  let waited: Awaited<ReturnType<typeof request>> | null = null;
  const waiting = request(url, { key: KEY }).then((response) => {
    waited = response;
  });
  try {
    const local = await request(url, { key: KEY, headers: { 'x-jvmlens-consistency': 'local' } });
    assert.equal(local.status, 200, JSON.stringify(local.body));
    assert.equal(local.body.vmId, VM);
    // The command line's reads alike.
    const shown = await runCli(['instance', VM, '--consistency', 'local', '--url', node.apiUrl, '--key', KEY], {}, 5_000);
    assert.equal(shown.code, 0, shown.stderr);
    assert.equal(JSON.parse(shown.stdout).vmId, VM);
    const explicit = request(url, { key: KEY, headers: { 'x-jvmlens-consistency': 'read-your-writes' } });
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(waited, null, 'a read-your-writes read answered while no NATS server could');
    for (const server of nats) process.kill(server.pid!, 'SIGCONT');
    await waiting;
    assert.equal(waited!.status, 200, JSON.stringify(waited!.body));
    assert.equal((await explicit).status, 200);
  } finally {
    for (const server of nats) process.kill(server.pid!, 'SIGCONT');
  }
});
