// Outages with real JVMs: a gateway that comes up late while the outbox overflows with code, and a service that
// lost its data while the JVM runs. Either way the VM ends up in the service with its components (and so
// its CVEs), within seconds of the gateway answering, and the agent logs at most one line per outage.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { freePort, request, startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';
import { buildAgent, compileJar, findDebianJars, javaSkipReason, javaagent, requireJava, runJava } from './java.ts';

// Loads spring-core (a vulnerable 4.3.30 in Debian) first, then 300 classes of its own, one every few ms,
// then waits: enough code batches to overflow an outbox of one batch, and time for the test to act.
const APP = `package outage;

import org.springframework.util.StringUtils;

public class Main {
    public static void main(String[] args) throws Exception {
        System.out.println(StringUtils.capitalize("started"));
        for (int i = 0; i < 300; i++) {
            Class.forName("outage.Gen$C" + i);
            Thread.sleep(5);
        }
        Thread.sleep(Long.parseLong(args[0]));
    }
}
`;
const GEN = `package outage;\n\npublic class Gen {\n${Array.from({ length: 300 }, (_, i) => `    public static class C${i} { public int m${i}(int x) { return x + ${i}; } }`).join('\n')}\n}\n`;

const jars = findDebianJars();
const IN_CI = process.env.CI === 'true';
const skip = javaSkipReason() || (typeof jars === 'string' && !IN_CI ? jars : false);

type Json = Record<string, any>;

/** Polls the CVE events (with the key the test gave the service, which replaces the helper's own) until spring-core's are there (the components arrived); the ms it took. */
async function waitForComponents(service: RunningService, key: string, vmId: string | null, timeoutMs = 30_000): Promise<{ ms: number; events: Json[] }> {
  const started = Date.now();
  for (;;) {
    const query = vmId === null ? '' : `?vmId=${encodeURIComponent(vmId)}`;
    const page = await request<Json>(`${service.apiUrl}/public/cve/events${query}`, { key });
    assert.notEqual(page.status, 401, 'the test key is accepted');
    const events = page.status === 200 ? (page.body.data as Json[]).filter((event) => event.componentName === 'spring-core') : [];
    if (events.length > 0) return { ms: Date.now() - started, events };
    if (Date.now() - started > timeoutMs) assert.fail(`no spring-core CVE events within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('agent outages', { skip }, () => {
  let dir = '';
  let app = '';
  const services: RunningService[] = [];

  before(() => {
    requireJava();
    if (typeof jars === 'string') throw new Error(`CI=true: ${jars}`);
    buildAgent();
    dir = tempDir('jvmlens-agent-outage-');
    app = compileJar(dir, { 'outage/Main.java': APP, 'outage/Gen.java': GEN }, { classPath: [jars.springCore], jarName: 'outage-app-1.0.jar' });
  });

  after(async () => {
    for (const service of services) await service.stop();
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  function runApp(gateway: string, key: string, waitMs: number) {
    if (typeof jars === 'string') throw new Error(jars);
    return runJava(['-Xverify:all', javaagent({ gateway, apiKey: key, flushMs: 50, maxBatches: 1, stopWaitMs: 10000 }), '-cp', [app, jars.springCore].join(':'), 'outage.Main', String(waitMs)], { timeoutMs: 90_000 });
  }

  test('a gateway that comes up late gets the VM with its components, though the outbox overflowed with code', async () => {
    const port = await freePort();
    const key = `test_late_${Date.now()}`;
    const running = runApp(`http://127.0.0.1:${port}`, key, 6000);
    // Code batches pile up in an outbox of one batch while nothing listens.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const service = await startService({ args: ['--gateway-port', String(port), '--api-key', key] });
    services.push(service);
    const { ms, events } = await waitForComponents(service, key, null);
    const run = await running;
    assert.equal(run.code, 0, run.stderr);
    assert.ok(events.every((event) => event.vmId === run.vmId));
    // spring-core's CVEs, all of them; whether its code shows USED depends on which code batches the overflow dropped.
    assert.deepEqual(events.map((event) => event.cveId).sort(), ['CVE-2022-22950', 'CVE-2022-22968']);
    assert.ok(ms < 10_000, `the VM appeared ${ms} ms after the gateway came up`);
    // At most one line as the outage lasts (after two seconds of it) and one when delivery resumes, which
    // says how many code batches the overflow dropped; nothing at exit, where all was delivered.
    const outage = run.agentLines.filter((line) => !line.includes('vmId='));
    assert.ok(outage.length <= 2, outage.join('\n'));
    assert.ok(outage.every((line) => /: (cannot deliver|delivering again) to /.test(line)), outage.join('\n'));
    assert.match(outage.at(-1) ?? '', /delivering again to .*; dropped [1-9]\d* batch\(es\) meanwhile/);
    assert.ok(!run.stderr.includes(key), 'the key is in no line');
  });

  test('a service that lost its data gets the VM again with every component', async () => {
    const port = await freePort();
    const key = `test_lost_${Date.now()}`;
    const first = await startService({ args: ['--gateway-port', String(port), '--api-key', key] });
    const running = runApp(`http://127.0.0.1:${port}`, key, 8000);
    const seen = await waitForComponents(first, key, null);
    const vmId = seen.events[0].vmId as string;
    await first.stop();
    // A new, empty data directory behind the same gateway address.
    const second = await startService({ args: ['--gateway-port', String(port), '--api-key', key] });
    services.push(second);
    const again = await waitForComponents(second, key, vmId);
    assert.ok(again.events.length > 0);
    const run = await running;
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.vmId, vmId);
  });

  // What a JVM with no gateway says at exit: what stayed undelivered, never a promise to retry as its last word.
  const UNDELIVERED = /could not deliver to http:\/\/127\.0\.0\.1:\d+\/agent\/v1\/events \(unreachable\): [1-9]\d* batch\(es\) undelivered at exit/;

  test('a short-lived JVM with no gateway ends with one line at exit, not a promise to retry', async () => {
    const port = await freePort();
    const run = await runApp(`http://127.0.0.1:${port}`, 'k', 0);
    assert.equal(run.code, 0, run.stderr);
    const lines = run.agentLines.filter((line) => !line.includes('vmId='));
    // Its classes load in about 2 s: on a busy machine the outage lasts 2 s first, and is said once.
    assert.ok(lines.length === 1 || (lines.length === 2 && lines[0].includes('; retrying every few seconds')), lines.join('\n'));
    assert.match(lines.at(-1) ?? '', UNDELIVERED);
  });

  test('a JVM that outlives 2 s of the outage says so once, then at exit what stayed undelivered', async () => {
    const port = await freePort();
    // Its retries back off from 50 ms: the one that says so comes about 3 to 4 s into the outage.
    const run = await runApp(`http://127.0.0.1:${port}`, 'k', 5000);
    assert.equal(run.code, 0, run.stderr);
    const lines = run.agentLines.filter((line) => !line.includes('vmId='));
    assert.equal(lines.length, 2, lines.join('\n'));
    assert.match(lines[0], /cannot deliver to .*: java\.net\.ConnectException.*; retrying every few seconds/);
    assert.match(lines[1], UNDELIVERED);
  });
});
