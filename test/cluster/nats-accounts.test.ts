// Two jvmlens clusters (production and staging, say) on the same NATS servers: what an operator relies on is
// that each keeps its own fleet when each has its own NATS account, as the README says (within one account
// they would share one log). Real processes: one nats-server with two accounts, a node in each.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { natsMissing, startNatsServer } from '../helpers/cluster.ts';
import { ingest, vmStart } from '../helpers/events.ts';
import { freePort, request, runCli, startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

const skip = natsMissing && 'nats-server is not installed';
const KEY = 'nats_accounts_test_key_0123456789';
let port = 0;
let natsServer: ChildProcess | null = null;
const nodes: RunningService[] = [];

const url = (account: 'prod' | 'staging') => `nats://${account}:${account}-password@127.0.0.1:${port}`;

before(async () => {
  if (skip) return;
  const dir = tempDir('jvmlens-nats-accounts-');
  port = await freePort();
  writeFileSync(join(dir, 'nats.conf'), `listen: "127.0.0.1:${port}"
jetstream { store_dir: "${join(dir, 'js')}" }
accounts {
  PROD: { jetstream: enabled, users: [ { user: prod, password: prod-password } ] }
  STAGING: { jetstream: enabled, users: [ { user: staging, password: staging-password } ] }
}
`);
  natsServer = await startNatsServer(['-c', join(dir, 'nats.conf')], port);
});

after(async () => {
  await Promise.all(nodes.map((node) => node.stop()));
  natsServer?.kill();
});

test('clusters in two NATS accounts of the same servers keep their fleets and keys apart', { skip, timeout: 120_000 }, async () => {
  const [prod, staging] = await Promise.all((['prod', 'staging'] as const).map((account) => startService({ noStaticKey: true, args: ['--api-key', KEY, '--cluster', url(account), '--node-id', `${account}-1`] })));
  nodes.push(prod, staging);
  const vmId = 'accounts-prod-vm';
  const written = await ingest(prod.gatewayUrl, KEY, [vmStart(vmId, Date.now() - 1000)]);
  assert.equal(written.status, 200, JSON.stringify(written.body));
  assert.equal((await request(`${prod.apiUrl}/public/instance/${vmId}`, { key: KEY })).status, 200);
  assert.equal((await request(`${staging.apiUrl}/public/instance/${vmId}`, { key: KEY })).status, 404, 'staging has no production VM');

  const created = await runCli(['keys', 'create', '--cluster', url('staging'), '--user', 'stager']);
  assert.equal(created.code, 0, created.stderr);
  const keyId = /^key id: (\S+)$/m.exec(created.stdout)![1];
  assert.match((await runCli(['keys', 'list', '--cluster', url('staging')])).stdout, new RegExp(`^${keyId}\\s`, 'm'));
  assert.doesNotMatch((await runCli(['keys', 'list', '--cluster', url('prod')])).stdout, new RegExp(`^${keyId}\\s`, 'm'));
  const status = await runCli(['cluster', 'status', '--cluster', url('prod')]);
  assert.match(status.stdout, /^prod-1 +UP /m);
  assert.doesNotMatch(status.stdout, /^staging-1 /m, 'each account lists its own nodes');
});
