// `jvmlens sbom` against a real service: one VM and a tag selection, to standard output and to a file,
// the URL as serve prints it with or without /public, and each exit status with a message a user can act on.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Spec, Validation } from '@cyclonedx/cyclonedx-library';
import { codeEvent, componentsEvent, startEvent } from '../helpers/cve.ts';
import { ingest } from '../helpers/events.ts';
import { runCli, startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

const LOG4J = { componentName: 'log4j-core', componentVersion: '2.14.1', groupId: 'org.apache.logging.log4j', sourceName: 'log4j-core-2.14.1.jar' };

let service: RunningService;
const validator = new Validation.JsonStrictValidator(Spec.Version.v1dot6);

before(async () => {
  service = await startService();
  const now = Date.now();
  const result = await ingest(service.gatewayUrl, service.apiKey, [
    startEvent('cli-used', now - 5000, 'host-a', { env: 'test' }),
    componentsEvent('cli-used', now - 4000, [LOG4J]),
    codeEvent('cli-used', now - 3000, [LOG4J.sourceName]),
    startEvent('cli-present', now - 5000, 'host-b', { env: 'prod' }),
    componentsEvent('cli-present', now - 4000, [LOG4J]),
  ]);
  assert.equal(result.status, 200);
});
after(() => service.stop());

describe('jvmlens sbom', () => {
  it('writes one VM\'s SBOM to standard output, the URL given with /public as serve prints it', async () => {
    const run = await runCli(['sbom', 'cli-used', '--url', `${service.apiUrl}/public`, '--key', service.apiKey]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(await validator.validate(run.stdout), null);
    const sbom = JSON.parse(run.stdout);
    assert.equal(sbom.vulnerabilities.find((v: { id: string }) => v.id === 'CVE-2021-44228').analysis.state, 'in_triage');
  });

  it('writes a selection\'s SBOM to a file, URL and key from the environment', async () => {
    const output = join(tempDir('jvmlens-sbom-'), 'prod.cdx.json');
    const run = await runCli(['sbom', '--tag', 'env=prod', '--output', output], { JVMLENS_URL: service.apiUrl, JVMLENS_API_KEY: service.apiKey });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, '');
    const text = readFileSync(output, 'utf8');
    assert.equal(await validator.validate(text), null);
    const sbom = JSON.parse(text);
    assert.equal(sbom.metadata.component.properties.find((p: { name: string }) => p.name === 'jvmlens:vmCount').value, '1');
    assert.equal(sbom.vulnerabilities.find((v: { id: string }) => v.id === 'CVE-2021-44228').analysis.state, 'not_affected');
  });

  it('exits 3 with the service\'s message when the service refuses', async () => {
    const run = await runCli(['sbom', 'no-such-vm', '--url', service.apiUrl, '--key', service.apiKey]);
    assert.equal(run.code, 3);
    assert.match(run.stderr, /404 VM_NOT_FOUND: no VM with vmId 'no-such-vm'/);
    const forbidden = await runCli(['sbom', 'cli-used', '--url', service.apiUrl, '--key', 'wrong-key']);
    assert.equal(forbidden.code, 3);
    assert.match(forbidden.stderr, /401/);
  });

  it('exits 4 when nothing answers, and 2 on bad usage with a clear message', async () => {
    const unreachable = await runCli(['sbom', 'cli-used', '--url', 'http://127.0.0.1:1', '--key', 'k']);
    assert.equal(unreachable.code, 4);
    assert.match(unreachable.stderr, /no jvmlens answered at http:\/\/127\.0\.0\.1:1/);
    const both = await runCli(['sbom', 'cli-used', '--tag', 'env=prod', '--key', 'k']);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /a VMID or a selection/);
    const badTag = await runCli(['sbom', '--tag', 'env', '--key', 'k']);
    assert.equal(badTag.code, 2);
    assert.match(badTag.stderr, /--tag takes KEY=VALUE/);
    const typo = await runCli(['sbom', 'cli-used', '--outptu', 'x', '--key', 'k']);
    assert.equal(typo.code, 2);
    assert.match(typo.stderr, /did you mean --output/);
    const noKey = await runCli(['sbom', 'cli-used'], { JVMLENS_API_KEY: '' });
    assert.equal(noKey.code, 2);
    assert.match(noKey.stderr, /an API key is needed/);
  });
});
