// The same source runs on Deno 2 (architecture.md): start it from src/main.ts and use it over HTTP.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ingest, vmStart } from '../helpers/events.ts';
import { request, startService } from '../helpers/service.ts';

test('`deno run -A src/main.ts serve` serves health, ingestion and the explorer', { timeout: 180_000 }, async () => {
  const service = await startService({ deno: true });
  try {
    const health = await request(`${service.gatewayUrl}/opthub-health`);
    assert.equal(health.status, 200);
    assert.equal(health.body.healthState, 'UP');
    assert.equal((await ingest(service.gatewayUrl, service.apiKey, [vmStart('deno-vm', Date.now(), { tags: { env: 'prod' } })])).status, 200);
    const instance = await request(`${service.apiUrl}/public/instance/deno-vm?x=1`, { key: service.apiKey });
    assert.equal(instance.status, 200);
    assert.deepEqual(instance.body.tags, { env: 'prod' });
  } finally {
    assert.equal(await service.stop(), 0);
  }
});
