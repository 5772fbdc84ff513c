// The advisory an SBOM cites for a CVE that several OSV records describe: a live one, the most recently
// modified (as matching takes), its score and vector together, and the others as references.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Spec, Validation } from '@cyclonedx/cyclonedx-library';
import { componentsEvent, CVSS, cveImport, osvRecord, startEvent } from '../helpers/cve.ts';
import { ingest } from '../helpers/events.ts';
import { request, startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

type Json = Record<string, any>;

const CVE_ID = 'CVE-2099-0001';
const record = (osvId: string, version: string, severity: (typeof CVSS)[keyof typeof CVSS], extra: Record<string, unknown>) =>
  osvRecord({ osvId, cveId: CVE_ID, groupId: 'org.audit', artifactId: 'libx', versions: [version], severity }, extra);

let service: RunningService;

before(async () => {
  const folder = tempDir('jvmlens-osv-');
  // The withdrawn record sorts first by id and is the newest: neither may make it the one cited.
  writeFileSync(join(folder, 'a.json'), JSON.stringify(record('GHSA-0000-0000-0001', '1.0', CVSS.score98, { modified: '2026-03-01T00:00:00Z', withdrawn: '2026-03-01T00:00:00Z' })));
  writeFileSync(join(folder, 'b.json'), JSON.stringify(record('GHSA-2222-2222-2222', '1.0', CVSS.score53, { modified: '2026-01-01T00:00:00Z' })));
  writeFileSync(join(folder, 'c.json'), JSON.stringify(record('GHSA-3333-3333-3333', '2.0', CVSS.score75, { modified: '2026-02-01T00:00:00Z', aliases: [CVE_ID, 'BIT-libx-2099-1'] })));
  const dataDir = tempDir();
  await cveImport(dataDir, [folder]);
  service = await startService({ dataDir });
  const now = Date.now();
  const result = await ingest(service.gatewayUrl, service.apiKey, [
    startEvent('vm-libx', now, 'host-libx'),
    componentsEvent('vm-libx', now, [{ componentName: 'libx', componentVersion: '1.0', groupId: 'org.audit' }, { componentName: 'libx', componentVersion: '2.0', groupId: 'org.audit' }]),
  ]);
  assert.equal(result.status, 200);
});
after(() => service.stop());

test('a CVE of several records cites the newest live one and lists the others, not a withdrawn one', async () => {
  const validator = new Validation.JsonStrictValidator(Spec.Version.v1dot6);
  for (const path of ['/public/instance/vm-libx/sbom', '/public/sbom']) {
    const response = await request(`${service.apiUrl}${path}`, { key: service.apiKey });
    assert.equal(response.status, 200);
    assert.equal(await validator.validate(response.text), null, `${path} is a valid CycloneDX 1.6 document`);
    const vulnerability = (response.body as Json).vulnerabilities.find((v: Json) => v.id === CVE_ID);
    assert.equal(vulnerability.source.url, 'https://osv.dev/vulnerability/GHSA-3333-3333-3333', path);
    assert.deepEqual(vulnerability.ratings.map((r: Json) => [r.score, r.vector]), [[CVSS.score75.score, CVSS.score75.vector]], path);
    assert.deepEqual(vulnerability.references.map((r: Json) => r.id), ['BIT-libx-2099-1', 'GHSA-2222-2222-2222'], path);
    assert.equal(vulnerability.affects.length, 2, path);
  }
});
