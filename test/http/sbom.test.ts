// CycloneDX 1.6 export with runtime VEX: every document valid against the 1.6 JSON schema (the CycloneDX
// library's strict validator), USED components in triage and PRESENT ones not affected, the fleet SBOM
// de-duplicated with VM counts, and the API's error model on bad input.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Spec, Validation } from '@cyclonedx/cyclonedx-library';
import { codeEvent, componentsEvent, startEvent } from '../helpers/cve.ts';
import { ingest } from '../helpers/events.ts';
import { request, startService } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

type Json = Record<string, any>;

const LOG4J = { componentName: 'log4j-core', componentVersion: '2.14.1', groupId: 'org.apache.logging.log4j', sourceName: 'log4j-core-2.14.1.jar' };
const JACKSON = { componentName: 'jackson-databind', componentVersion: '2.6.0', groupId: 'com.fasterxml.jackson.core', sourceName: 'jackson-databind-2.6.0.jar' };
const PLAIN = { componentName: 'in-house-lib', componentVersion: '1.0', sourceName: 'in-house-lib.jar' };

let service: RunningService;
const validator = new Validation.JsonStrictValidator(Spec.Version.v1dot6);

/** A document's schema errors, or null: asserted on every SBOM the tests receive. */
async function fetchSbom(path: string): Promise<Json> {
  const response = await fetch(`${service.apiUrl}${path}`, { headers: { 'x-api-key': service.apiKey } });
  assert.equal(response.status, 200, path);
  assert.match(response.headers.get('content-type') ?? '', /^application\/vnd\.cyclonedx\+json; version=1\.6/);
  const text = await response.text();
  assert.equal(await validator.validate(text), null, `${path} is a valid CycloneDX 1.6 document`);
  return JSON.parse(text) as Json;
}

const property = (item: Json, name: string): string | undefined => (item.properties as { name: string; value: string }[]).find((p) => p.name === name)?.value;

before(async () => {
  service = await startService();
  const now = Date.now();
  // vm-used loads code from log4j's JAR and only carries jackson's; vm-present carries log4j without loading it.
  const events = [
    startEvent('vm-used', now - 60_000, 'host-used', { env: 'test' }),
    componentsEvent('vm-used', now - 59_000, [LOG4J, JACKSON, PLAIN]),
    codeEvent('vm-used', now - 58_000, [LOG4J.sourceName]),
    startEvent('vm-present', now - 60_000, 'host-present', { env: 'prod' }),
    componentsEvent('vm-present', now - 59_000, [LOG4J]),
  ];
  const result = await ingest(service.gatewayUrl, service.apiKey, events);
  assert.equal(result.status, 200);
});
after(() => service.stop());

describe('SBOM of one VM', () => {
  it('lists its components with Maven purls and their JARs as evidence', async () => {
    const sbom = await fetchSbom('/public/instance/vm-used/sbom');
    assert.equal(sbom.specVersion, '1.6');
    assert.equal(property(sbom.metadata.component, 'jvmlens:vmId'), 'vm-used');
    assert.equal(property(sbom.metadata.component, 'jvmlens:hostName'), 'host-used');
    assert.equal(property(sbom.metadata.component, 'jvmlens:tag:env'), 'test');
    const log4j = sbom.components.find((c: Json) => c.name === 'log4j-core');
    assert.equal(log4j.purl, 'pkg:maven/org.apache.logging.log4j/log4j-core@2.14.1');
    assert.equal(log4j.group, 'org.apache.logging.log4j');
    assert.deepEqual(log4j.evidence.occurrences, [{ location: 'log4j-core-2.14.1.jar' }]);
    assert.equal(property(log4j, 'jvmlens:codeLoaded'), 'true');
    const plain = sbom.components.find((c: Json) => c.name === 'in-house-lib');
    assert.equal(plain.purl, undefined, 'no purl without a groupId');
    assert.equal(sbom.components.length, 3);
  });

  it('puts a CVE whose code the VM loaded in triage, and one it never loaded as not affected', async () => {
    const sbom = await fetchSbom('/public/instance/vm-used/sbom');
    const log4shell = sbom.vulnerabilities.find((v: Json) => v.id === 'CVE-2021-44228');
    assert.ok(log4shell, 'Log4Shell is listed');
    assert.equal(log4shell.analysis.state, 'in_triage');
    assert.match(log4shell.analysis.detail, /load code from log4j-core@2\.14\.1 \(log4j-core-2\.14\.1\.jar\)/);
    assert.deepEqual(log4shell.affects, [{ ref: 'pkg:maven/org.apache.logging.log4j/log4j-core@2.14.1' }]);
    assert.equal(log4shell.ratings[0].severity, 'critical');
    assert.equal(log4shell.ratings[0].score, 10);
    assert.equal(log4shell.source.name, 'OSV');
    const jackson = sbom.vulnerabilities.filter((v: Json) => v.affects.some((a: Json) => a.ref.includes('jackson-databind')));
    assert.ok(jackson.length > 0, 'jackson-databind 2.6.0 has CVEs');
    for (const vulnerability of jackson) {
      assert.equal(vulnerability.analysis.state, 'not_affected');
      assert.equal(vulnerability.analysis.justification, 'code_not_reachable');
      assert.match(vulnerability.analysis.detail, /no class loaded from it between/);
    }
  });

  it('answers 404 VM_NOT_FOUND for an unknown VM and 401 without a key', async () => {
    const missing = await request(`${service.apiUrl}/public/instance/no-such-vm/sbom`, { key: service.apiKey });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error, 'VM_NOT_FOUND');
    const anonymous = await request(`${service.apiUrl}/public/instance/vm-used/sbom`, { key: null });
    assert.equal(anonymous.status, 401);
  });
});

describe('SBOM of the fleet', () => {
  it('lists each component once, with how many VMs carry it and load code from it', async () => {
    const sbom = await fetchSbom('/public/sbom');
    assert.equal(property(sbom.metadata.component, 'jvmlens:vmCount'), '2');
    const log4j = sbom.components.filter((c: Json) => c.name === 'log4j-core');
    assert.equal(log4j.length, 1, 'de-duplicated');
    assert.equal(property(log4j[0], 'jvmlens:vmCount'), '2');
    assert.equal(property(log4j[0], 'jvmlens:codeLoadedVmCount'), '1');
    const log4shell = sbom.vulnerabilities.find((v: Json) => v.id === 'CVE-2021-44228');
    assert.equal(log4shell.analysis.state, 'in_triage');
    assert.match(log4shell.analysis.detail, /1 of the 2 JVMs/);
  });

  it('selects VMs by tag: where no selected VM loaded the code, the CVE is not affected', async () => {
    const sbom = await fetchSbom('/public/sbom?tags.env=prod');
    assert.equal(property(sbom.metadata.component, 'jvmlens:vmCount'), '1');
    assert.deepEqual(sbom.components.map((c: Json) => c.name), ['log4j-core']);
    const log4shell = sbom.vulnerabilities.find((v: Json) => v.id === 'CVE-2021-44228');
    assert.equal(log4shell.analysis.state, 'not_affected');
    assert.equal(log4shell.analysis.justification, 'code_not_reachable');
    const none = await fetchSbom('/public/sbom?AppEnv=nowhere');
    assert.deepEqual(none.components, []);
  });

  it('refuses an unknown parameter with 400 BAD_PARAMETER', async () => {
    const bad = await request(`${service.apiUrl}/public/sbom?team=x`, { key: service.apiKey });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error, 'BAD_PARAMETER');
    assert.match(bad.body.message, /unknown parameter 'team'/);
  });
});

describe('a component whose agent named no JAR', () => {
  it('stays in triage: nothing observed says its code was not loaded', async () => {
    const now = Date.now();
    const jarless = { componentName: LOG4J.componentName, componentVersion: LOG4J.componentVersion, groupId: LOG4J.groupId };
    const result = await ingest(service.gatewayUrl, service.apiKey, [
      startEvent('vm-jarless', now - 60_000, 'host-jarless', { env: 'jarless' }),
      componentsEvent('vm-jarless', now - 59_000, [jarless]),
      codeEvent('vm-jarless', now - 58_000, ['app.jar']),
    ]);
    assert.equal(result.status, 200);
    for (const path of ['/public/instance/vm-jarless/sbom', '/public/sbom?tags.env=jarless']) {
      const sbom = await fetchSbom(path);
      assert.equal(property(sbom.components.find((c: Json) => c.name === 'log4j-core'), 'jvmlens:codeLoaded'), 'unknown', path);
      const log4shell = sbom.vulnerabilities.find((v: Json) => v.id === 'CVE-2021-44228');
      assert.equal(log4shell.analysis.state, 'in_triage', path);
      assert.equal(log4shell.analysis.justification, undefined, path);
      assert.match(log4shell.analysis.detail, /named no JAR for log4j-core@2\.14\.1/, path);
    }
    // Where the JAR is known and ran nothing, the analysis stays not affected.
    const prod = (await fetchSbom('/public/sbom?tags.env=prod')).vulnerabilities.find((v: Json) => v.id === 'CVE-2021-44228');
    assert.equal(prod.analysis.state, 'not_affected');
  });
});
