// The explorer endpoints of interface §4.2 with the payloads of decisions §5.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ingest, vmStart } from '../helpers/events.ts';
import { request, startService } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

let service: RunningService;
const now = Date.now();
const url = (path: string) => `${service.apiUrl}/public/instance/${path}`;

before(async () => {
  service = await startService();
  const result = await ingest(service.gatewayUrl, service.apiKey, [
    vmStart('vm-a', now - 1000, { tags: { env: 'prod', AppEnv: 'shop' }, annotations: { deployment: 'blue' }, jvmInfo: { vmName: 'OpenJDK' } }),
    vmStart('vm-b', now - 1000),
  ]);
  assert.equal(result.status, 200);
});

after(() => service.stop());

test('GET instance returns the VM of interface §2.2 plus its tags', async () => {
  const { status, body } = await request(url('vm-a'), { key: service.apiKey });
  assert.equal(status, 200);
  assert.equal(body.vmId, 'vm-a');
  assert.equal(body.agentVersion, '1.5.0');
  assert.equal(body.agentRevision, 'abc1234');
  assert.equal(body.mailbox, 'mbox');
  assert.equal(body.state, 'RUNNING');
  assert.equal(body.startTime, now - 1000);
  assert.equal(body.lastHeardTime, now - 1000);
  assert.deepEqual(body.jvmInfo, { vmName: 'OpenJDK' });
  assert.equal(body.inventory.hostName, 'host-vm-a');
  assert.equal(body.inventory.mainMethod, 'com.acme.Main');
  assert.equal(body.inventory.systemProperties['java.version'], '17.0.10');
  assert.equal(body.inventory.cpuInfo['Number of Processors'], 4);
  assert.deepEqual(body.tags, { AppEnv: 'shop', env: 'prod' });
});

test('unknown VM → 404 on every explorer endpoint', async () => {
  for (const [method, path, body] of [
    ['GET', 'nope'], ['GET', 'nope/annotations'], ['GET', 'nope/tags'], ['POST', 'nope/tags', { key: 'a', value: 'b' }],
    ['PUT', 'nope/tags', []], ['DELETE', 'nope/tags'], ['DELETE', 'nope/tags/a'],
  ] as const) {
    const response = await request(url(path), { method, key: service.apiKey, body });
    assert.equal(response.status, 404, `${method} ${path}`);
    assert.equal(response.body.error, 'VM_NOT_FOUND');
  }
});

test('annotations: recorded facts sorted by key, with time', async () => {
  const { status, body } = await request(url('vm-a/annotations'), { key: service.apiKey });
  assert.equal(status, 200);
  assert.deepEqual(body.map((a: { key: string }) => a.key), ['deployment', 'jvmlens.lastStart']);
  assert.deepEqual(body[0], { key: 'deployment', value: 'blue', time: now - 1000 });
});

test('tags: add one, add many, replace, delete one, delete missing, delete all', async () => {
  let response = await request(url('vm-b/tags'), { key: service.apiKey });
  assert.deepEqual(response.body, []);

  response = await request(url('vm-b/tags'), { method: 'POST', key: service.apiKey, body: { key: 'team', value: 'core' } });
  assert.equal(response.status, 200);
  assert.deepEqual(response.body, [{ key: 'team', value: 'core' }]);

  response = await request(url('vm-b/tags'), { method: 'POST', key: service.apiKey, body: [{ key: 'env', value: 'prod' }, { key: 'team', value: 'edge' }] });
  assert.deepEqual(response.body, [{ key: 'env', value: 'prod' }, { key: 'team', value: 'edge' }]);

  response = await request(url('vm-b/tags'), { method: 'PUT', key: service.apiKey, body: { region: 'eu-west-1', owner: 'ops@acme' } });
  assert.deepEqual(response.body, [{ key: 'owner', value: 'ops@acme' }, { key: 'region', value: 'eu-west-1' }]);

  response = await request(url('vm-b/tags'), { method: 'PUT', key: service.apiKey, body: [{ key: 'a', value: '1' }, { key: 'b', value: 'x y:z/w' }] });
  assert.deepEqual(response.body, [{ key: 'a', value: '1' }, { key: 'b', value: 'x y:z/w' }]);

  response = await request(url('vm-b/tags/a'), { method: 'DELETE', key: service.apiKey });
  assert.equal(response.status, 204);
  assert.equal(response.text, '');
  response = await request(url('vm-b/tags/a'), { method: 'DELETE', key: service.apiKey });
  assert.equal(response.status, 404);
  assert.equal(response.body.error, 'TAG_NOT_FOUND');
  assert.deepEqual((await request(url('vm-b/tags'), { key: service.apiKey })).body, [{ key: 'b', value: 'x y:z/w' }]);
  // The instance reflects tag changes at once.
  assert.deepEqual((await request(url('vm-b'), { key: service.apiKey })).body.tags, { b: 'x y:z/w' });

  response = await request(url('vm-b/tags'), { method: 'DELETE', key: service.apiKey });
  assert.equal(response.status, 204);
  assert.deepEqual((await request(url('vm-b/tags'), { key: service.apiKey })).body, []);
});

test('invalid tags → 400 with the index of each bad record, and nothing changes', async () => {
  const before = (await request(url('vm-a/tags'), { key: service.apiKey })).body;
  const cases: unknown[] = [
    { key: '1starts-with-digit', value: 'v' },
    { key: 'has space', value: 'v' },
    { key: 'k'.repeat(129), value: 'v' },
    { key: 'ok', value: 'bad$char' },
    { key: 'ok', value: 'v'.repeat(257) },
    { key: 'ok', value: 5 },
    { key: 'ok' },
    { key: 'ok', value: 'v', extra: 1 },
    [{ key: 'good', value: 'v' }, { key: 'bad key', value: 'v' }],
    'just a string',
  ];
  for (const body of cases) {
    const response = await request(url('vm-a/tags'), { method: 'POST', key: service.apiKey, body });
    assert.equal(response.status, 400, JSON.stringify(body));
    assert.equal(response.body.error, 'BAD_TAGS');
  }
  const mixed = await request(url('vm-a/tags'), { method: 'POST', key: service.apiKey, body: [{ key: 'good', value: 'v' }, { key: 'bad key', value: 'v' }] });
  assert.deepEqual(mixed.body.details, [{ index: 1, message: mixed.body.details[0].message }]);
  assert.deepEqual((await request(url('vm-a/tags'), { key: service.apiKey })).body, before);
});

test('a vmId with URL-escaped characters is addressed exactly', async () => {
  assert.equal((await ingest(service.gatewayUrl, service.apiKey, [vmStart('host:1.svc_x-y', now)])).status, 200);
  const response = await request(url(encodeURIComponent('host:1.svc_x-y')), { key: service.apiKey });
  assert.equal(response.status, 200);
  assert.equal(response.body.vmId, 'host:1.svc_x-y');
});
