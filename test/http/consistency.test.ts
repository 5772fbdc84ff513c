// `x-jvmlens-consistency` (README "Reads that need not wait"): a single node answers a read alike with either
// value, and any other value is a 400 that names the header and its values. The cluster's side is in
// test/cluster/local-reads.test.ts.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ingest, vmStart } from '../helpers/events.ts';
import { request, startService } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

let service: RunningService;

before(async () => {
  service = await startService();
  assert.equal((await ingest(service.gatewayUrl, service.apiKey, [vmStart('vm-consistency', Date.now())])).status, 200);
});

after(() => service.stop());

test('a single node answers a read alike with either consistency', async () => {
  const url = `${service.apiUrl}/public/instance/vm-consistency`;
  const plain = await request(url, { key: service.apiKey });
  assert.equal(plain.status, 200);
  for (const consistency of ['local', 'read-your-writes']) {
    const read = await request(url, { key: service.apiKey, headers: { 'x-jvmlens-consistency': consistency } });
    assert.equal(read.status, 200, consistency);
    assert.deepEqual(read.body, plain.body, consistency);
  }
});

test('any other consistency is a 400 naming the header and the values it takes', async () => {
  for (const consistency of ['eventual', 'LOCAL', 'local, local']) {
    const read = await request(`${service.apiUrl}/public/cve/events?limit=1`, { key: service.apiKey, headers: { 'x-jvmlens-consistency': consistency } });
    assert.equal(read.status, 400, consistency);
    assert.equal(read.body.error, 'BAD_REQUEST');
    assert.match(read.body.message, /'x-jvmlens-consistency' is 'read-your-writes' \(the default\) or 'local'/);
  }
});
