// What a VM's own report of a component decides, although the fleet stores one record per (name, version):
// the groupIds other VMs reported for the same name and version (decisions §11), over HTTP.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Spec, Validation } from '@cyclonedx/cyclonedx-library';
import { codeEvent, componentsEvent, getEvents, startEvent } from '../helpers/cve.ts';
import { ingest } from '../helpers/events.ts';
import { createReport, waitFinal } from '../helpers/reports.ts';
import { request, startService } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

type Json = Record<string, any>;

const LOG4SHELL = 'CVE-2021-44228';
const APACHE = 'org.apache.logging.log4j';
const validator = new Validation.JsonStrictValidator(Spec.Version.v1dot6);

let service: RunningService;

before(async () => {
  service = await startService();
});
after(() => service.stop());

async function send(events: unknown[]): Promise<void> {
  const result = await ingest(service.gatewayUrl, service.apiKey, events);
  assert.equal(result.status, 200, JSON.stringify(result.body));
}

async function sbomOf(vmId: string): Promise<Json> {
  const response = await request(`${service.apiUrl}/public/instance/${vmId}/sbom`, { key: service.apiKey });
  assert.equal(response.status, 200);
  assert.equal(await validator.validate(response.text), null, 'a valid CycloneDX 1.6 document');
  return response.body as Json;
}

test('a groupId reported first by another VM does not hide Log4Shell from the VM that runs Apache log4j-core', async () => {
  const now = Date.now();
  const jar = 'log4j-core-2.14.0.jar';
  // A fork with the same artifactId and version reports first: no advisory names its group.
  await send([startEvent('vm-fork', now, 'host-fork'), componentsEvent('vm-fork', now, [{ componentName: 'log4j-core', componentVersion: '2.14.0', groupId: 'com.fork', sourceName: jar }])]);
  await send([
    startEvent('vm-apache', now, 'host-apache'),
    componentsEvent('vm-apache', now, [{ componentName: 'log4j-core', componentVersion: '2.14.0', groupId: APACHE, sourceName: jar }]),
    codeEvent('vm-apache', now, [jar]),
  ]);
  const events = await getEvents(service, { vmId: 'vm-apache' });
  assert.equal(events.status, 200);
  const log4shell = events.body.data.find((item: Json) => item.cveId === LOG4SHELL);
  assert.ok(log4shell, `Log4Shell on vm-apache: ${JSON.stringify(events.body.data)}`);
  assert.equal(log4shell.cveState, 'USED');
  const sbom = await sbomOf('vm-apache');
  assert.equal(sbom.vulnerabilities.find((v: Json) => v.id === LOG4SHELL)?.analysis.state, 'in_triage');
  // Which of the two groups this VM's copy has is not kept: the SBOM names neither rather than the fork's.
  const component = sbom.components.find((c: Json) => c.name === 'log4j-core');
  assert.equal(component.purl, undefined);
  assert.equal(component.group, undefined);
});

test('a component found in two JARs of a VM is USED when code came from the second, and counted once', async () => {
  const now = Date.now();
  const jar = (app: string) => `webapps/${app}/WEB-INF/lib/log4j-core-2.14.1.jar`;
  const log4j = (app: string) => ({ componentName: 'log4j-core', componentVersion: '2.14.1', groupId: APACHE, sourceName: jar(app) });
  await send([startEvent('vm-webapps', now, 'host-webapps'), componentsEvent('vm-webapps', now, [log4j('a'), log4j('b')])]);
  // A later batch adds a third copy and loads code from the second one only.
  await send([componentsEvent('vm-webapps', now, [log4j('c')]), codeEvent('vm-webapps', now, [jar('b')])]);
  const events = await getEvents(service, { vmId: 'vm-webapps' });
  assert.equal(events.status, 200);
  const log4shell = events.body.data.filter((item: Json) => item.cveId === LOG4SHELL);
  assert.equal(log4shell.length, 1, 'one event per (VM, component, CVE)');
  assert.equal(log4shell[0].cveState, 'USED');
  const sbom = await sbomOf('vm-webapps');
  const component = sbom.components.find((c: Json) => c.name === 'log4j-core');
  assert.deepEqual(component.evidence.occurrences, [{ location: jar('a') }, { location: jar('b') }, { location: jar('c') }]);
  assert.equal(sbom.vulnerabilities.find((v: Json) => v.id === LOG4SHELL)?.analysis.state, 'in_triage');
  const fleet = await request(`${service.apiUrl}/public/sbom`, { key: service.apiKey });
  const entry = (fleet.body as Json).components.find((c: Json) => c.name === 'log4j-core' && c.version === '2.14.1');
  const property = (name: string) => entry.properties.find((p: Json) => p.name === name)?.value;
  assert.equal(property('jvmlens:vmCount'), '1');
  assert.equal(property('jvmlens:codeLoadedVmCount'), '1');
  const summary = await request(`${service.apiUrl}/public/cve/summary?hostName=host-webapps`, { key: service.apiKey });
  const cve = (summary.body as Json).data.find((item: Json) => item.cveId === LOG4SHELL);
  assert.equal(cve.usedVmCount, 1);
  assert.equal(cve.presentVmCount, 0);
  const report = await createReport(service, 'component', { filter: ["componentName = 'log4j-core'", "componentVersion = '2.14.1'"] });
  assert.equal(report.status, 202);
  const page = await waitFinal(service, 'component', report.body.reportId);
  assert.deepEqual(page.body.data.map((item: Json) => [item.componentVersion, item.count]), [['2.14.1', 1]]);
});
