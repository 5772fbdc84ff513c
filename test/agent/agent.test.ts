// End to end: a real JVM runs with the agent and Debian's log4j and spring-core JARs, reports to a real
// jvmlens, and everything is checked through the public API (and the gateway's /metrics).
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { TestContext } from 'node:test';
import { ROOT, request, startService, tempDir } from '../helpers/service.ts';
import type { JsonResponse, RunningService } from '../helpers/service.ts';
import { buildAgent, compileJar, findDebianJars, javaSkipReason, javaagent, requireJava, runJava } from './java.ts';
import type { JavaRun } from './java.ts';

const CHECKOUT = `package shop;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.springframework.util.StringUtils;

public class Checkout {
    private static final Logger LOG = LogManager.getLogger(Checkout.class);

    static class Cart {
        private int items;

        void add(String sku, int quantity) {
            items += quantity;
            LOG.info("added {} x {}", quantity, sku);
        }

        String summary(java.util.Map<String, int[]> discounts) {
            return StringUtils.capitalize("cart of " + items);
        }
    }

    public static void main(String[] args) {
        Cart cart = new Cart();
        cart.add("book", 2);
        System.out.println(cart.summary(java.util.Map.of()));
    }
}
`;

const jars = findDebianJars();
const IN_CI = process.env.CI === 'true';
const skip = javaSkipReason() || (typeof jars === 'string' && !IN_CI ? jars : false);

type Json = Record<string, any>;

/** Polls a report until it leaves PROCESSING; null when the report family is not served (404 on create). */
async function generateReport(service: RunningService, createPath: string, getPath: (reportId: string) => string, body: unknown): Promise<JsonResponse<Json> | null> {
  const created = await request<Json>(`${service.apiUrl}${createPath}`, { method: 'POST', key: service.apiKey, body });
  if (created.status === 404) return null;
  assert.equal(created.status, 202, created.text);
  for (;;) {
    const report = await request<Json>(`${service.apiUrl}${getPath(created.body.reportId)}`, { key: service.apiKey });
    assert.equal(report.status, 200, report.text);
    if (report.body.state !== 'PROCESSING') return report;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The innermost items of a component report's nested data (interface §2.4). */
function innermost(data: Json[]): Json[] {
  return data.flatMap((item) => (Array.isArray(item.data) ? innermost(item.data) : [item]));
}

describe('agent end to end', { skip }, () => {
  let dir = '';
  let service: RunningService | undefined;
  let run: JavaRun;
  let vmId = '';

  before(async () => {
    requireJava();
    if (typeof jars === 'string') throw new Error(`CI=true: ${jars}`);
    buildAgent();
    dir = tempDir('jvmlens-agent-e2e-');
    const classPath = [jars.log4jApi, jars.springCore];
    const app = compileJar(dir, { 'shop/Checkout.java': CHECKOUT }, { classPath, jarName: 'shop-app-2.4.0.jar' });
    service = await startService();
    run = await runJava(
      ['-Dcom.azul.crs.instance.tags=env=prod;region=eu-west-1', javaagent({ gateway: service.gatewayUrl, apiKey: service.apiKey, flushMs: 100, stopWaitMs: 20000 }), '-cp', [app, jars.log4jCore, ...classPath].join(':'), 'shop.Checkout'],
      { env: { CRS_TAGS: 'team=payments;env=staging' } },
    );
    vmId = run.vmId ?? '';
  });

  after(async () => {
    await service?.stop();
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  test('the application runs as without the agent, which prints only its start line', () => {
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'Cart of 2\n');
    assert.deepEqual(run.agentLines, [`jvmlens agent: vmId=${vmId} gateway=${service!.gatewayUrl}`], run.stderr);
  });

  test('the VM is in the explorer with its inventory and tags, TERMINATED after exit', async () => {
    const vm = await request<Json>(`${service!.apiUrl}/public/instance/${vmId}`, { key: service!.apiKey });
    assert.equal(vm.status, 200, vm.text);
    const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    assert.equal(vm.body.vmId, vmId);
    assert.equal(vm.body.agentVersion, version);
    assert.match(vm.body.agentRevision, /^[0-9a-f]{7,}(-dirty)?$|^unknown$/);
    assert.equal(vm.body.state, 'TERMINATED');
    assert.ok(vm.body.startTime <= vm.body.lastHeardTime);

    const inventory = vm.body.inventory;
    assert.equal(inventory.hostName, hostname());
    assert.equal(inventory.mainMethod, 'shop.Checkout.main');
    assert.equal(inventory.systemProperties['com.azul.crs.instance.tags'], 'env=prod;region=eu-west-1');
    assert.match(inventory.systemProperties['java.class.path'], /log4j-core/);
    assert.ok(inventory.systemProperties['java.version'].length > 0);
    assert.equal(inventory.osEnvironment.CRS_TAGS, '', 'environment variables by name only');
    assert.deepEqual(Object.keys(inventory.cpuInfo).sort(), ['CPU Model Name', 'CPU Vendor', 'Number of Assigned Logical Cores', 'Number of Physical Cores', 'Number of Processors']);
    assert.ok(Number.isInteger(inventory.cpuInfo['Number of Processors']));
    assert.equal(vm.body.jvmInfo.pid > 0, true);

    // CRS_TAGS and the system property combined; the system property wins on env.
    assert.deepEqual(vm.body.tags, { team: 'payments', env: 'prod', region: 'eu-west-1' });
    const tags = await request<Json[]>(`${service!.apiUrl}/public/instance/${vmId}/tags`, { key: service!.apiKey });
    assert.equal(tags.status, 200, tags.text);
    assert.deepEqual(tags.body, [
      { key: 'env', value: 'prod' },
      { key: 'region', value: 'eu-west-1' },
      { key: 'team', value: 'payments' },
    ]);
  });

  test('every batch the agent sent was accepted and stored (gateway /metrics)', async () => {
    const metrics = await (await fetch(`${service!.gatewayUrl}/metrics`)).text();
    const stored = (type: string) => Number(new RegExp(`^jvmlens_ingested_events_total\\{type="${type.replace('.', '\\.')}"\\} (\\d+)$`, 'm').exec(metrics)?.[1] ?? 0);
    assert.equal(stored('vm.start'), 1);
    assert.equal(stored('vm.stop'), 1);
    assert.ok(stored('code') > 0, metrics);
    assert.ok(stored('components') > 0, metrics);
    const statuses = [...metrics.matchAll(/^jvmlens_http_requests_total\{route="[^"]*agent\/v1\/events[^"]*",method="POST",status="(\d+)"\} \d+$/gm)].map((match) => match[1]);
    assert.deepEqual([...new Set(statuses)], ['200'], metrics);
  });

  test('the components of the class path carry their real versions', async (t: TestContext) => {
    const report = await generateReport(service!, '/public/component/report/schedule', (id) => `/public/component/report/${id}`, { filter: [`vmId = '${vmId}'`] });
    if (report === null) {
      t.skip('component reports are not served yet: POST /public/component/report/schedule answered 404');
      return;
    }
    assert.equal(report.body.state, 'SUCCEEDED', report.text);
    const found = innermost(report.body.data).map((item) => `${item.componentName} ${item.componentVersion}`);
    for (const expected of ['log4j-core 2.19.0', 'log4j-api 2.19.0', 'spring-core 4.3.30.RELEASE', 'shop-app 2.4.0']) {
      assert.ok(found.includes(expected), `${expected} in ${JSON.stringify(found)}`);
    }
  });

  test("the application's classes and methods are in the code inventory", async (t: TestContext) => {
    const report = await generateReport(service!, '/public/report/codeInventory', (id) => `/public/report/codeInventory/${id}`, { filter: ['sourceName:shop-app-2.4.0.jar'] });
    if (report === null) {
      t.skip('code inventory reports are not served yet: POST /public/report/codeInventory answered 404');
      return;
    }
    assert.equal(report.body.state, 'SUCCEEDED', report.text);
    const items = (report.body.data as Json[]).map((item) => `${item.sourceName} ${item.className} ${item.methodName}`).sort();
    assert.deepEqual(items, [
      'shop-app-2.4.0.jar shop/Checkout <init>()',
      'shop-app-2.4.0.jar shop/Checkout main(java.lang.String[])',
      'shop-app-2.4.0.jar shop/Checkout$Cart <init>()',
      'shop-app-2.4.0.jar shop/Checkout$Cart add(java.lang.String, int)',
      'shop-app-2.4.0.jar shop/Checkout$Cart summary(java.util.Map)',
    ]);
    const log4j = await generateReport(service!, '/public/report/codeInventory', (id) => `/public/report/codeInventory/${id}`, { filter: ['className:org/apache/logging/log4j/core/'] });
    assert.ok((log4j!.body.totalCount as number) > 0, 'log4j-core classes were loaded and reported');
  });

  test('spring-core 4.3.30 raises CVE events for this VM, as USED', async (t: TestContext) => {
    const events = await request<Json>(`${service!.apiUrl}/public/cve/events?vmId=${encodeURIComponent(vmId)}`, { key: service!.apiKey });
    if (events.status === 404) {
      t.skip('CVE events are not served yet: GET /public/cve/events answered 404');
      return;
    }
    assert.equal(events.status, 200, events.text);
    const spring = (events.body.data as Json[]).filter((item) => item.componentName === 'spring-core');
    // The curated OSV set marks spring-core below 5.2.20 / 5.2.21 (decisions §11).
    const cves = spring.map((item) => item.cveId);
    for (const cveId of ['CVE-2022-22950', 'CVE-2022-22968']) assert.ok(cves.includes(cveId), `${cveId} in ${JSON.stringify(cves)}`);
    for (const item of spring) {
      assert.equal(item.componentVersion, '4.3.30.RELEASE');
      assert.equal(item.vmId, vmId);
      assert.equal(item.hostName, hostname());
      // The application loaded org.springframework.util.StringUtils from that JAR.
      assert.equal(item.cveState, 'USED');
      assert.ok(item.score > 0);
      assert.deepEqual(item.tags, { team: 'payments', env: 'prod', region: 'eu-west-1' });
    }
  });
});
