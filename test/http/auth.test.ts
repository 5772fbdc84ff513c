// The key and scope matrix of decisions §2 on every route family.
import assert from 'node:assert/strict';
import { before, after, test } from 'node:test';
import { vmStart } from '../helpers/events.ts';
import { request, runCli, startService } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

let service: RunningService;
const keys: Record<string, string> = {};
const keyIds: Record<string, string> = {};

async function createKey(name: string, scopes: string): Promise<void> {
  const result = await runCli(['keys', 'create', '--user', name, '--scopes', scopes, '--data-dir', service.dataDir]);
  assert.equal(result.code, 0, result.stderr);
  keys[name] = /key: +(\S+)/.exec(result.stdout)![1];
  keyIds[name] = /key id: +(\S+)/.exec(result.stdout)![1];
}

before(async () => {
  service = await startService();
  // Created with the CLI on the data directory while the service runs on it.
  await createKey('reader', 'read');
  await createKey('writer', 'write');
  await createKey('ingester', 'ingest');
  await createKey('all', 'read,write,ingest');
  await createKey('revoked', 'read,write,ingest');
  const revoke = await runCli(['keys', 'revoke', keyIds.revoked, '--data-dir', service.dataDir]);
  assert.equal(revoke.code, 0, revoke.stderr);
  const start = await fetch(`${service.gatewayUrl}/agent/v1/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': keys.all },
    body: JSON.stringify(vmStart('vm-auth', Date.now())),
  });
  assert.equal(start.status, 200);
});

after(() => service.stop());

const families = [
  { name: 'explorer read', scope: 'read', call: (key: string | null) => request(`${service.apiUrl}/public/instance/vm-auth`, { key }) },
  { name: 'tag write', scope: 'write', call: (key: string | null) => request(`${service.apiUrl}/public/instance/vm-auth/tags`, { method: 'POST', key, body: { key: 'k', value: 'v' } }) },
  { name: 'agent ingestion', scope: 'ingest', call: (key: string | null) => request(`${service.gatewayUrl}/agent/v1/events`, { method: 'POST', key, body: { type: 'vm.heartbeat', vmId: 'vm-auth', time: Date.now() } }) },
];

for (const family of families) {
  test(`${family.name}: no key → 401, unknown → 401, revoked → 401, other scope → 403, right scope → 2xx`, async () => {
    const none = await family.call(null);
    assert.equal(none.status, 401);
    assert.equal(none.body.error, 'UNAUTHORIZED');
    assert.equal((await family.call('jvl_not_a_key')).status, 401);
    assert.equal((await family.call(keys.revoked)).status, 401);
    for (const [name, key] of Object.entries({ reader: keys.reader, writer: keys.writer, ingester: keys.ingester })) {
      const scope = { reader: 'read', writer: 'write', ingester: 'ingest' }[name];
      const response = await family.call(key);
      if (scope === family.scope) assert.ok(response.status < 300, `${name}: ${response.status} ${response.text}`);
      else {
        assert.equal(response.status, 403, `${name} on ${family.name}`);
        assert.equal(response.body.error, 'FORBIDDEN');
      }
    }
    assert.ok((await family.call(keys.all)).status < 300);
    assert.ok((await family.call(service.apiKey)).status < 300, 'the --api-key key has every scope');
  });
}

test('health and metrics need no key', async () => {
  assert.equal((await request(`${service.gatewayUrl}/opthub-health`)).status, 200);
  const metrics = await request(`${service.gatewayUrl}/metrics`);
  assert.equal(metrics.status, 200);
  assert.match(metrics.text, /jvmlens_http_requests_total/);
});

test('a key revoked while the service runs stops working within 10 seconds', async () => {
  await createKey('late', 'read');
  assert.equal((await request(`${service.apiUrl}/public/instance/vm-auth`, { key: keys.late })).status, 200);
  const revoke = await runCli(['keys', 'revoke', keyIds.late, '--data-dir', service.dataDir]);
  assert.equal(revoke.code, 0);
  const deadline = Date.now() + 10_000;
  let status = 200;
  while (status === 200 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    status = (await request(`${service.apiUrl}/public/instance/vm-auth`, { key: keys.late })).status;
  }
  assert.equal(status, 401);
});

test('keys list shows users and scopes but never a key', async () => {
  const list = await runCli(['keys', 'list', '--data-dir', service.dataDir]);
  assert.equal(list.code, 0);
  assert.match(list.stdout, /reader\s+read/);
  for (const key of Object.values(keys)) assert.ok(!list.stdout.includes(key));
});

test('GET /public/me names the key\'s user and scopes; it needs the read scope', async () => {
  assert.deepEqual((await request(`${service.apiUrl}/public/me`, { key: keys.reader })).body, { userId: 'reader', scopes: ['read'] });
  assert.deepEqual((await request(`${service.apiUrl}/public/me`, { key: keys.all })).body, { userId: 'all', scopes: ['read', 'write', 'ingest'] });
  assert.equal((await request(`${service.apiUrl}/public/me`, { key: keys.ingester })).status, 403);
  assert.equal((await request(`${service.apiUrl}/public/me`, { key: null })).status, 401);
});
