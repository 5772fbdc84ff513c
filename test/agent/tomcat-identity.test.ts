// Debian's Tomcat JARs carry no pom.properties: a real JVM runs Tomcat's ServerInfo from them with the agent,
// its key in a file and its tags joined by '+', and the service matches an OSV record for
// org.apache.tomcat:tomcat-catalina to the VM, USED, while the key appears in no output.
import assert from 'node:assert/strict';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CVSS, cveImport, writeAdvisories } from '../helpers/cve.ts';
import { request, startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';
import { buildAgent, javaSkipReason, javaagent, requireJava, runJava } from './java.ts';
import type { JavaRun } from './java.ts';

const TOMCAT = '/usr/share/tomcat10';
const IN_CI = process.env.CI === 'true';
const missing = existsSync(join(TOMCAT, 'lib', 'catalina.jar')) ? false : 'tomcat10 is not installed (apt-get install tomcat10)';
const skip = javaSkipReason() || (missing !== false && !IN_CI ? missing : false);

type Json = Record<string, any>;

describe("the agent on Debian's Tomcat JARs", { skip }, () => {
  let dir = '';
  let service: RunningService | undefined;
  let run: JavaRun;

  before(async () => {
    requireJava();
    if (missing !== false) throw new Error(`CI=true: ${missing}`);
    buildAgent();
    dir = tempDir('jvmlens-tomcat-');
    service = await startService();
    // A synthetic advisory (the real Tomcat CVEs name older versions than Debian ships).
    const folder = writeAdvisories([{ osvId: 'JVMLENS-TOMCAT-1', cveId: 'CVE-2099-10160', groupId: 'org.apache.tomcat', artifactId: 'tomcat-catalina', versions: ['10.1.60'], severity: CVSS.score98 }]);
    await cveImport(service.dataDir, [folder]);
    const keyFile = join(dir, 'agent.key');
    writeFileSync(keyFile, `${service.apiKey}\n`, { mode: 0o600 });
    const classPath = ['lib/catalina.jar', 'bin/tomcat-juli.jar', 'lib/tomcat-util.jar', 'lib/servlet-api.jar'].map((jar) => join(TOMCAT, jar));
    run = await runJava(['-Xverify:all', javaagent({ gateway: service.gatewayUrl, apiKeyFile: keyFile, tags: 'env=test+team=web', flushMs: 100, stopWaitMs: 20000 }), '-cp', classPath.join(':'), 'org.apache.catalina.util.ServerInfo']);
  });

  after(async () => {
    await service?.stop();
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  test('Tomcat runs, and the key is in no line it or the agent printed', () => {
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /Server version: +Apache Tomcat\/10\.1/);
    assert.ok(!`${run.stdout}${run.stderr}`.includes(service!.apiKey));
  });

  test('catalina.jar is tomcat-catalina of org.apache.tomcat, its CVE matched and USED, the tags whole', async () => {
    const vmId = run.vmId ?? '';
    let events: Json[] = [];
    // The import is noticed by the service within its watch interval; the VM's events follow.
    for (let attempt = 0; attempt < 100 && !events.some((event) => event.cveId === 'CVE-2099-10160'); attempt++) {
      const page = await request<Json>(`${service!.apiUrl}/public/cve/events?vmId=${encodeURIComponent(vmId)}`, { key: service!.apiKey });
      assert.equal(page.status, 200, page.text);
      events = page.body.data as Json[];
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const catalina = events.find((event) => event.cveId === 'CVE-2099-10160');
    assert.ok(catalina, JSON.stringify(events));
    assert.equal(catalina.componentName, 'tomcat-catalina');
    assert.match(catalina.componentVersion, /^10\.1\.\d+$/);
    assert.equal(catalina.cveState, 'USED', 'ServerInfo ran from catalina.jar');
    assert.deepEqual(catalina.tags, { env: 'test', team: 'web' });
  });

  test('each Tomcat JAR is a component of its own', async () => {
    const created = await request<Json>(`${service!.apiUrl}/public/component/report/schedule`, { method: 'POST', key: service!.apiKey, body: { filter: ["componentName LIKE '^tomcat-'"] } });
    assert.equal(created.status, 202, created.text);
    let report: Json = {};
    for (;;) {
      report = (await request<Json>(`${service!.apiUrl}/public/component/report/${created.body.reportId}`, { key: service!.apiKey })).body;
      if (report.state !== 'PROCESSING') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const names = (report.data as Json[]).map((item) => item.componentName).sort();
    for (const name of ['tomcat-catalina', 'tomcat-servlet-api', 'tomcat-util']) assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
  });
});
