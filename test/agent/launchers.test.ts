// The README's launcher examples, as a user copies them: Debian's Maven 3 with the agent in MAVEN_OPTS, and the
// systemd unit (checked by systemd-analyze verify, then its ExecStart run with its Environment). Paths and the
// gateway are the only things replaced; the key comes from a file and appears in no output.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { request, ROOT, startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';
import { AGENT_JAR, buildAgent, compileJar, javaSkipReason, requireJava, runJava } from './java.ts';

const IN_CI = process.env.CI === 'true';
const mavenMissing = spawnSync('mvn', ['-v'], { stdio: 'ignore' }).status === 0 ? false : 'maven is not installed (apt-get install maven)';
const skip = javaSkipReason() || (mavenMissing !== false && !IN_CI ? mavenMissing : false);

type Json = Record<string, any>;

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The README's example with its placeholders pointed at this test's agent, key file and gateway. */
function localise(text: string, keyFile: string, gatewayUrl: string): string {
  return text.replaceAll('/opt/jvmlens/jvmlens-agent.jar', AGENT_JAR).replaceAll('/etc/jvmlens/agent.key', keyFile).replaceAll('http://jvmlens:8080', gatewayUrl);
}

/** The VM whose start line a run printed, once the service has it. */
async function vmOf(service: RunningService, output: string): Promise<Json> {
  const vmId = /jvmlens agent: vmId=(\S+) gateway=/.exec(output)?.[1];
  assert.ok(vmId, output);
  const vm = await request<Json>(`${service.apiUrl}/public/instance/${vmId}`, { key: service.apiKey });
  assert.equal(vm.status, 200, vm.text);
  return vm.body;
}

describe("the README's Maven and systemd examples", { skip }, () => {
  let dir = '';
  let keyFile = '';
  let service: RunningService;

  before(async () => {
    requireJava();
    if (mavenMissing !== false) throw new Error(`CI=true: ${mavenMissing}`);
    buildAgent();
    dir = tempDir('jvmlens-launchers-');
    service = await startService();
    keyFile = join(dir, 'agent.key');
    writeFileSync(keyFile, `${service.apiKey}\n`, { mode: 0o600 });
  });

  after(async () => {
    await service?.stop();
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  test('Maven with the agent in MAVEN_OPTS, with methods=loaded and methods=called', async () => {
    const line = /^export MAVEN_OPTS="(.+)"$/m.exec(README);
    assert.ok(line, 'the README shows MAVEN_OPTS');
    const mavenOpts = `-Xverify:all ${localise(line[1], keyFile, service.gatewayUrl)}`;
    const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, MAVEN_OPTS: mavenOpts };
    const output = await new Promise<{ code: number | null; text: string }>((resolve, reject) => {
      const child = spawn('mvn', ['-B', '-v'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let text = '';
      child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
      child.once('error', reject);
      child.once('exit', (code) => resolve({ code, text }));
    });
    assert.equal(output.code, 0, output.text);
    assert.match(output.text, /Apache Maven 3\./);
    assert.ok(!output.text.includes(service.apiKey), 'the key is in no line Maven or the agent printed');
    const vm = await vmOf(service, output.text);
    assert.equal(vm.inventory.mainMethod, 'org.codehaus.plexus.classworlds.launcher.Launcher.main');
    assert.deepEqual(vm.tags, { env: 'ci', team: 'build' });
    assert.equal(vm.state, 'TERMINATED');
    const events = await request<Json>(`${service.apiUrl}/public/cve/events?vmId=${vm.vmId}&showNotImpacted=true&limit=1000`, { key: service.apiKey });
    const components = new Set((events.body.data as Json[]).map((item) => item.componentName));
    assert.ok(components.has('maven-core'), [...components].join(', '));

    // The same with methods=called: Maven's class realms see the probe, so every class is rewritten, verified
    // (-Xverify:all) and runs; the agent prints nothing but its start line.
    const called = spawnSync('mvn', ['-B', '-v'], { env: { ...env, MAVEN_OPTS: `${mavenOpts},methods=called` }, encoding: 'utf8' });
    assert.equal(called.status, 0, `${called.stdout}${called.stderr}`);
    assert.match(called.stdout, /Apache Maven 3\./);
    const agentLines = `${called.stdout}${called.stderr}`.split('\n').filter((line) => line.includes('jvmlens agent:') && !line.includes('vmId='));
    assert.deepEqual(agentLines, [], 'no class left without probes, no failure');
    assert.ok(!`${called.stdout}${called.stderr}`.includes('VM warning'));
  });

  test('the systemd unit: systemd-analyze accepts it, and its ExecStart with its Environment reports the VM', async (t) => {
    const block = /<!-- systemd-unit:[^>]*-->\n```ini\n([\s\S]*?)```/.exec(README);
    assert.ok(block, 'the README shows the unit');
    const app = compileJar(join(dir, 'shop'), { 'shop/Main.java': 'package shop;\npublic class Main { public static void main(String[] args) { System.out.println("shop up"); } }\n' }, { mainClass: 'shop.Main', jarName: 'shop.jar' });
    const unit = localise(block[1], keyFile, service.gatewayUrl).replaceAll('/opt/shop/shop.jar', app).replace(/^User=.*\n/m, '');
    const unitFile = join(dir, 'shop.service');
    writeFileSync(unitFile, unit);
    const verify = spawnSync('systemd-analyze', ['verify', unitFile], { encoding: 'utf8' });
    if (verify.error !== undefined) t.diagnostic('systemd-analyze is not available here; the unit was not verified');
    else assert.equal(`${verify.status} ${verify.stderr}`, '0 ', 'systemd-analyze verify: no error, no warning');

    const environment: Record<string, string> = {};
    for (const [, name, value] of unit.matchAll(/^Environment=([A-Z_]+)=(.*)$/gm)) environment[name] = value;
    const execStart = /^ExecStart=(\S+) (.+)$/m.exec(unit)!;
    assert.equal(execStart[1], '/usr/bin/java');
    const run = await runJava(execStart[2].split(' '), { env: environment });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'shop up\n');
    assert.ok(!`${run.stdout}${run.stderr}`.includes(service.apiKey));
    const vm = await vmOf(service, run.stderr);
    assert.deepEqual(vm.tags, { env: 'prod', team: 'payments' });
    assert.equal(vm.inventory.mainMethod, 'shop.Main.main');
  });
});
