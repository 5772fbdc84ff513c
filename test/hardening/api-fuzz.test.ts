// Random requests to every operation of the OpenAPI document (issue: hardening; test/helpers/api-fuzz.ts):
// none may get a 5xx or an answer the document does not describe, and the service must keep every VM and go
// on taking writes.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fuzzApi } from '../helpers/api-fuzz.ts';
import type { Known } from '../helpers/api-fuzz.ts';
import { codeEvent, componentsEvent, startEvent } from '../helpers/cve.ts';
import { ingest, vmStart } from '../helpers/events.ts';
import { FAMILIES, createReport, waitFinal } from '../helpers/reports.ts';
import { request, startService } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

const REQUESTS = 1500;

let service: RunningService;
const known: Known = { vmIds: ['fuzz-a', 'fuzz-b', 'fuzz-c'], reportIds: [], tokens: [] };

before(async () => {
  service = await startService();
  const now = Date.now();
  const events = known.vmIds.flatMap((vmId, i) => [
    startEvent(vmId, now - 60_000, `host-${i}`, { env: i === 0 ? 'prod' : 'test' }),
    componentsEvent(vmId, now - 50_000, [{ componentName: 'log4j-core', componentVersion: '2.14.1', groupId: 'org.apache.logging.log4j', sourceName: 'log4j-core-2.14.1.jar' }]),
    codeEvent(vmId, now - 40_000, ['log4j-core-2.14.1.jar', 'app.jar']),
  ]);
  assert.equal((await ingest(service.gatewayUrl, service.apiKey, events)).status, 200);
  for (const family of FAMILIES) {
    const created = await createReport(service, family, family === 'component' ? {} : { from: '30d' });
    known.reportIds.push(created.body.reportId);
    await waitFinal(service, family, created.body.reportId);
  }
  const page = await request(`${service.apiUrl}/public/cve/events?limit=1`, { key: service.apiKey });
  if (typeof page.body.afterToken === 'string') known.tokens.push(page.body.afterToken);
});
after(() => service.stop());

test(`${REQUESTS} random requests over every documented operation: no 5xx, each answer as documented, nothing lost`, async () => {
  const statuses = await fuzzApi([service], known, REQUESTS, 0xf022);
  // The mix reached the handlers, not only the 4xx in front of them.
  assert.ok((statuses.get(200) ?? 0) > REQUESTS / 10, JSON.stringify([...statuses]));
  assert.equal(service.child.exitCode, null, `the service exited:\n${service.stderr()}`);
  assert.equal((await fetch(`${service.gatewayUrl}/opthub-health`)).status, 200);
  for (const vmId of known.vmIds) assert.equal((await request(`${service.apiUrl}/public/instance/${vmId}`, { key: service.apiKey })).status, 200, vmId);
  assert.equal((await ingest(service.gatewayUrl, service.apiKey, [vmStart('after-fuzz', Date.now())])).status, 200, 'writes still work');
});
