// Agent ingestion (decisions §4): formats, all-or-nothing batches, replay, VM states, durability.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pack } from 'msgpackr';
import { ingest, vmStart } from '../helpers/events.ts';
import { request, startService, tempDir } from '../helpers/service.ts';
import { validateEvents } from '../../src/ingest/events.ts';
import { readClassTimes } from '../../src/storage/code-times.ts';
import { Dictionary } from '../../src/storage/dictionary.ts';
import { Ingestor } from '../../src/storage/ingest.ts';
import { openStore, SCHEMA_VERSION } from '../../src/storage/store.ts';

const events = (url: string) => `${url}/agent/v1/events`;

test('every body format is accepted: one JSON object, a JSON array, NDJSON, MessagePack', async () => {
  const service = await startService();
  try {
    const now = Date.now();
    const post = (body: string | Buffer, contentType: string) =>
      request(events(service.gatewayUrl), { method: 'POST', key: service.apiKey, rawBody: body, contentType });
    let response = await post(JSON.stringify(vmStart('json-one', now)), 'application/json');
    assert.deepEqual([response.status, response.body], [200, { accepted: 1 }]);
    response = await post(JSON.stringify([vmStart('json-array', now), { type: 'vm.heartbeat', vmId: 'json-array', time: now + 1 }]), 'application/json; charset=utf-8');
    assert.deepEqual([response.status, response.body], [200, { accepted: 2 }]);
    response = await post([vmStart('ndjson', now), { type: 'vm.heartbeat', vmId: 'ndjson', time: now + 1 }].map((e) => JSON.stringify(e)).join('\n') + '\n', 'application/x-ndjson');
    assert.deepEqual([response.status, response.body], [200, { accepted: 2 }]);
    response = await post(pack([vmStart('msgpack', now)]), 'application/msgpack');
    assert.deepEqual([response.status, response.body], [200, { accepted: 1 }]);
    for (const vmId of ['json-one', 'json-array', 'ndjson', 'msgpack']) {
      assert.equal((await request(`${service.apiUrl}/public/instance/${vmId}`, { key: service.apiKey })).status, 200, vmId);
    }
    assert.equal((await request(`${service.apiUrl}/public/instance/json-array`, { key: service.apiKey })).body.lastHeardTime, now + 1);
  } finally {
    await service.stop();
  }
});

test('a batch with one bad event is rejected whole with the index of the problem', async () => {
  const service = await startService();
  try {
    const now = Date.now();
    const bad = [
      { event: { type: 'vm.explode', vmId: 'x', time: now }, problem: /'type'/ },
      { event: { type: 'vm.heartbeat', vmId: 'has space', time: now }, problem: /'vmId'/ },
      { event: { type: 'vm.heartbeat', vmId: 'a'.repeat(129), time: now }, problem: /'vmId'/ },
      { event: { type: 'vm.heartbeat', vmId: 'ok', time: 'yesterday' }, problem: /'time'/ },
      { event: { type: 'vm.heartbeat', vmId: 'ok', time: -1 }, problem: /'time'/ },
      { event: { ...vmStart('ok', now), inventory: 'nope' }, problem: /'inventory'/ },
      { event: { ...vmStart('ok', now), tags: { '9bad': 'v' } }, problem: /tag '9bad'/ },
      { event: { type: 'code', vmId: 'ok', time: now, items: [{ sourceName: 'a.jar', className: 'A' }] }, problem: /'methodName'/ },
      { event: { type: 'code', vmId: 'ok', time: now, items: [{ sourceName: 'a.jar', className: 'A', methodNames: [] }] }, problem: /'methodNames' must be a non-empty array/ },
      { event: { type: 'code', vmId: 'ok', time: now, items: [{ sourceName: 'a.jar', className: 'A', methodNames: ['a()', 7] }] }, problem: /items\[0\]: 'methodNames\[1\]' must be a non-empty string/ },
      { event: { type: 'code', vmId: 'ok', time: now, items: [{ sourceName: 'a.jar', className: 'A', methodNames: ['x'.repeat(1025)] }] }, problem: /'methodNames\[0\]' is longer than 1024 bytes/ },
      { event: { type: 'code', vmId: 'ok', time: now, items: [{ sourceName: 'a.jar', className: 'A', methodName: 'a()', methodNames: ['b()'] }] }, problem: /'methodName' or 'methodNames', not both/ },
      { event: { type: 'components', vmId: 'ok', time: now, items: [{ componentName: 'x' }] }, problem: /'componentVersion'/ },
      { event: { type: 'vm.heartbeat', vmId: 'ok', time: now, surprise: 1 }, problem: /unknown field 'surprise'/ },
      { event: 'not an object', problem: /JSON object/ },
    ];
    for (const { event, problem } of bad) {
      const response = await ingest(service.gatewayUrl, service.apiKey, [vmStart('first', now), event]);
      assert.equal(response.status, 400, JSON.stringify(event));
      assert.equal(response.body.error, 'INVALID_EVENTS');
      assert.equal(response.body.details[0].index, 1);
      assert.match(response.body.details[0].message, problem);
    }
    // The valid vm.start that came first in each batch was not stored.
    assert.equal((await request(`${service.apiUrl}/public/instance/first`, { key: service.apiKey })).status, 404);

    const unknown = await ingest(service.gatewayUrl, service.apiKey, [vmStart('known', now), { type: 'vm.heartbeat', vmId: 'stranger', time: now }]);
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.error, 'UNKNOWN_VM');
    assert.deepEqual(unknown.body.details, [{ index: 1, message: "unknown vmId 'stranger': send vm.start first" }]);
    assert.equal((await request(`${service.apiUrl}/public/instance/known`, { key: service.apiKey })).status, 404);
  } finally {
    await service.stop();
  }
});

test('an unknown field inside a code or components item is refused, naming the event, the item and the field, in JSON and MessagePack', async () => {
  const service = await startService();
  try {
    const now = Date.now();
    const log4j = { componentName: 'log4j-core', componentVersion: '2.14.1' };
    const method = { sourceName: 'a.jar', className: 'A', methodName: 'a()' };
    const post = (body: string | Buffer, contentType: string) => request(events(service.gatewayUrl), { method: 'POST', key: service.apiKey, rawBody: body, contentType });
    const bad = [
      // A misspelt sourceName would lose the JAR link that decides USED or PRESENT.
      { event: { type: 'components', vmId: 'first', time: now, items: [log4j, { ...log4j, sourcename: 'log4j-core-2.14.1.jar' }] }, message: "items[1]: unknown field 'sourcename'" },
      { event: { type: 'components', vmId: 'first', time: now, items: [{ ...log4j, sourceName: 'a.jar', groupId: 'g', extra: null }] }, message: "items[0]: unknown field 'extra'" },
      { event: { type: 'code', vmId: 'first', time: now, items: [method, { ...method, line: 7 }] }, message: "items[1]: unknown field 'line'" },
      { event: { type: 'code', vmId: 'first', time: now, items: [{ sourceName: 'a.jar', className: 'A', methodNames: ['a()'], line: 7 }] }, message: "items[0]: unknown field 'line'" },
    ];
    for (const { event, message } of bad) {
      for (const [body, type] of [[JSON.stringify([vmStart('first', now), event]), 'application/json'], [pack([vmStart('first', now), event]), 'application/msgpack']] as const) {
        const response = await post(body, type);
        assert.equal(response.status, 400, `${type} ${JSON.stringify(event)}`);
        assert.equal(response.body.error, 'INVALID_EVENTS');
        assert.deepEqual(response.body.details, [{ index: 1, message }]);
      }
    }
    // Past the depth limit of free-form values, under a key that no item has.
    const deep = `{"type":"components","vmId":"first","time":${now},"items":[{"componentName":"a","componentVersion":"1","x":${'['.repeat(100_000)}${']'.repeat(100_000)}}]}`;
    const response = await post(`[${JSON.stringify(vmStart('first', now))},${deep}]`, 'application/json');
    assert.equal(response.status, 400);
    assert.deepEqual(response.body.details, [{ index: 1, message: "items[0]: unknown field 'x'" }]);
    assert.equal((await request(`${service.apiUrl}/public/instance/first`, { key: service.apiKey })).status, 404, 'nothing stored');
  } finally {
    await service.stop();
  }
});

test('a class with methodNames is one code item per method, in order, beside items of one method', () => {
  const now = Date.now();
  const [event] = validateEvents([{
    type: 'code', vmId: 'vm', time: now, items: [
      { sourceName: 'a.jar', className: 'p/A', methodName: 'run()' },
      { sourceName: 'b.jar', className: 'p/B', methodNames: ['<init>()', 'get(int)', 'put(java.lang.String, int)'] },
      { sourceName: 'c.jar', className: 'p/C', methodName: 'main(java.lang.String[])' },
    ],
  }], now);
  assert.equal(event.type, 'code');
  assert.deepEqual(event.type === 'code' ? event.items : [], [
    { sourceName: 'a.jar', className: 'p/A', methodName: 'run()' },
    { sourceName: 'b.jar', className: 'p/B', methodName: '<init>()' },
    { sourceName: 'b.jar', className: 'p/B', methodName: 'get(int)' },
    { sourceName: 'b.jar', className: 'p/B', methodName: 'put(java.lang.String, int)' },
    { sourceName: 'c.jar', className: 'p/C', methodName: 'main(java.lang.String[])' },
  ]);
});

test('replaying a batch changes nothing, even after later events', async () => {
  const dataDir = tempDir();
  const service = await startService({ dataDir });
  const now = Date.now();
  const batch = [
    vmStart('replay', now - 5000, { tags: { AppEnv: 'shop' } }),
    { type: 'components', vmId: 'replay', time: now - 4000, items: [{ componentName: 'log4j-core', componentVersion: '2.14.1', groupId: 'org.apache.logging.log4j', sourceName: 'log4j-core-2.14.1.jar' }] },
    { type: 'code', vmId: 'replay', time: now - 3000, items: [{ sourceName: 'app.jar', className: 'com/acme/Main', methodName: 'main(java.lang.String[])' }] },
  ];
  const later = [{ type: 'code', vmId: 'replay', time: now - 1000, items: [{ sourceName: 'app.jar', className: 'com/acme/Main', methodName: 'main(java.lang.String[])' }] }, { type: 'vm.stop', vmId: 'replay', time: now }];
  try {
    assert.equal((await ingest(service.gatewayUrl, service.apiKey, batch)).status, 200);
    assert.equal((await ingest(service.gatewayUrl, service.apiKey, later)).status, 200);
    const before = (await request(`${service.apiUrl}/public/instance/replay`, { key: service.apiKey })).body;
    assert.equal(before.state, 'TERMINATED');
    assert.equal((await ingest(service.gatewayUrl, service.apiKey, batch)).status, 200);
    assert.equal((await ingest(service.gatewayUrl, service.apiKey, later)).status, 200);
    const afterReplay = (await request(`${service.apiUrl}/public/instance/replay`, { key: service.apiKey })).body;
    assert.deepEqual(afterReplay, before);
  } finally {
    await service.stop({ keepData: true });
  }
  const store = openStore(dataDir);
  try {
    assert.deepEqual(readClassTimes(store, ['app.jar', 'com/acme/Main', 'shop']), { methods: ['main(java.lang.String[])'], firstSeen: [now - 3000], lastSeen: [now - 1000] });
    assert.deepEqual(readClassTimes(store, ['app.jar', 'com/acme/Main']), { methods: ['main(java.lang.String[])'], firstSeen: [now - 3000], lastSeen: [now - 1000] }, 'the fleet-wide record');
    assert.equal(store.vmComponents.getBinary(0)!.length, 8, 'one (component, source) pair');
  } finally {
    await store.close();
  }
});

test('VM state: RUNNING, OFFLINE after silence, TERMINATED after vm.stop, RUNNING again after a new vm.start', async () => {
  const service = await startService({ args: ['--offline-after-ms', '60000'] });
  const state = async (vmId: string) => (await request(`${service.apiUrl}/public/instance/${vmId}`, { key: service.apiKey })).body;
  try {
    const now = Date.now();
    await ingest(service.gatewayUrl, service.apiKey, [vmStart('live', now - 10_000), { type: 'vm.heartbeat', vmId: 'live', time: now }]);
    await ingest(service.gatewayUrl, service.apiKey, [vmStart('silent', now - 600_000), { type: 'vm.heartbeat', vmId: 'silent', time: now - 120_000 }]);
    await ingest(service.gatewayUrl, service.apiKey, [vmStart('stopped', now - 10_000), { type: 'vm.stop', vmId: 'stopped', time: now - 5_000 }]);
    assert.equal((await state('live')).state, 'RUNNING');
    assert.equal((await state('silent')).state, 'OFFLINE');
    assert.equal((await state('silent')).lastHeardTime, now - 120_000);
    const stopped = await state('stopped');
    assert.equal(stopped.state, 'TERMINATED');
    assert.equal(stopped.lastHeardTime, now - 5_000);

    // Events after a stop are stored but do not revive the VM or move lastHeardTime.
    await ingest(service.gatewayUrl, service.apiKey, [{ type: 'vm.heartbeat', vmId: 'stopped', time: now }]);
    assert.deepEqual([(await state('stopped')).state, (await state('stopped')).lastHeardTime], ['TERMINATED', now - 5_000]);

    await ingest(service.gatewayUrl, service.apiKey, [vmStart('stopped', now)]);
    assert.deepEqual([(await state('stopped')).state, (await state('stopped')).startTime], ['RUNNING', now]);

    const metrics = (await request(`${service.gatewayUrl}/metrics`)).text;
    assert.match(metrics, /jvmlens_vms\{state="RUNNING"\} 2/);
    assert.match(metrics, /jvmlens_vms\{state="OFFLINE"\} 1/);
    assert.match(metrics, /jvmlens_ingested_events_total\{type="vm.start"\} 4/);
  } finally {
    await service.stop();
  }
});

test('data survives a restart, and nothing acknowledged is lost when the process is killed with SIGKILL', async () => {
  const dataDir = tempDir();
  const now = Date.now();
  let service = await startService({ dataDir });
  for (let i = 0; i < 20; i++) {
    const response = await ingest(service.gatewayUrl, service.apiKey, [vmStart(`vm-${i}`, now), { type: 'code', vmId: `vm-${i}`, time: now, items: [{ sourceName: 'a.jar', className: `C${i}`, methodName: 'm()' }] }]);
    assert.equal(response.status, 200);
  }
  // Killed right after the last acknowledgement: no chance to flush anything later.
  await service.stop({ keepData: true, signal: 'SIGKILL' });
  service = await startService({ dataDir });
  try {
    for (let i = 0; i < 20; i++) {
      const response = await request(`${service.apiUrl}/public/instance/vm-${i}`, { key: service.apiKey });
      assert.equal(response.status, 200, `vm-${i} lost`);
    }
  } finally {
    await service.stop({ keepData: true });
  }
  const store = openStore(dataDir);
  try {
    for (let i = 0; i < 20; i++) assert.ok(store.code.get(['a.jar', `C${i}`, '']), `code of vm-${i} lost`);
  } finally {
    await store.close();
  }
});

test('code from another process that writes the same data directory: every method once, times merged', async () => {
  const dataDir = tempDir();
  const service = await startService({ dataDir });
  const now = Date.now();
  const code = (vmId: string, time: number, methods: string[]) => ({ type: 'code', vmId, time, items: methods.map((methodName) => ({ sourceName: 'app.jar', className: 'com/acme/Shared', methodName })) });
  try {
    assert.equal((await ingest(service.gatewayUrl, service.apiKey, [vmStart('service-vm', now - 5000), code('service-vm', now - 5000, ['m1()'])])).status, 200);
    // This test process is the other writer (as `jvmlens seed` would be): it adds methods to a class the service has seen.
    const other = openStore(dataDir);
    try {
      await new Ingestor(other, new Dictionary(other)).ingest(() => validateEvents([vmStart('cli-vm', now - 4000), code('cli-vm', now - 4000, ['m0()', 'm2()'])]));
    } finally {
      await other.close();
    }
    assert.equal((await ingest(service.gatewayUrl, service.apiKey, [code('service-vm', now - 3000, ['m0()', 'm2()', 'm3()'])])).status, 200);
  } finally {
    await service.stop({ keepData: true });
  }
  const store = openStore(dataDir);
  try {
    const expected = {
      methods: ['m0()', 'm1()', 'm2()', 'm3()'],
      firstSeen: [now - 4000, now - 5000, now - 4000, now - 3000],
      lastSeen: [now - 3000, now - 5000, now - 3000, now - 3000],
    };
    assert.deepEqual(readClassTimes(store, ['app.jar', 'com/acme/Shared', '']), expected);
    assert.deepEqual(readClassTimes(store, ['app.jar', 'com/acme/Shared']), expected, 'the fleet-wide record');
  } finally {
    await store.close();
  }
});

test('a data directory of a schema version this jvmlens cannot migrate is refused with a message that says so', async () => {
  const dataDir = tempDir();
  const store = openStore(dataDir);
  await store.meta.put('schemaVersion', 1);
  await store.close();
  assert.throws(() => openStore(dataDir), new RegExp(`schema version 1; this jvmlens reads version ${SCHEMA_VERSION}, and migrates versions 2 to 4`));
});
