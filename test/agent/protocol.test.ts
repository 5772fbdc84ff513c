// What the agent sends and how it behaves when the gateway fails, against a stand-in gateway that
// validates every request with the service's own event validator (decisions §4) and can misbehave on cue.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { decodeEventBody, validateEvents } from '../../src/ingest/events.ts';
import { ROOT, tempDir } from '../helpers/service.ts';
import { buildAgent, compileJar, javaSkipReason, javaagent, requireJava, runJava } from './java.ts';

type Event = Record<string, any>;

interface Received {
  /** The status the stand-in answered. */
  status: number;
  contentType: string;
  apiKey: string | undefined;
  events: Event[];
}

interface Gateway {
  url: string;
  requests: Received[];
  close(): Promise<void>;
}

/**
 * A gateway that answers like the service: 400 for an invalid batch, else what `answer` says
 * (200 by default). `answer` sees the events and how many requests came before.
 */
async function standInGateway(answer: (events: Event[], index: number) => number = () => 200): Promise<Gateway> {
  const requests: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const contentType = request.headers['content-type'] ?? '';
      let events: Event[] = [];
      let status: number;
      try {
        events = decodeEventBody(Buffer.concat(chunks), contentType) as Event[];
        validateEvents(events);
        status = request.method === 'POST' && request.url === '/agent/v1/events' ? answer(events, requests.length) : 404;
      } catch (error) {
        status = (error as { status?: number }).status ?? 500;
      }
      requests.push({ status, contentType, apiKey: request.headers['x-api-key'] as string | undefined, events });
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(status === 200 ? JSON.stringify({ accepted: events.length }) : JSON.stringify({ error: 'STAND_IN', message: `status ${status}` }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const DEMO = `package demo;

public class Demo {
    static class Helper {
        String greet(String who, int times) { return "started " + who + times; }
    }

    static class Late {
        void run(long[] values) {}
    }

    public static void main(String[] args) throws Exception {
        System.out.println(new Helper().greet("demo", 1));
        String plugin = System.getProperty("demo.plugin");
        if (plugin != null) {
            // A JAR that is not on the class path, loaded later (as application servers and plug-in hosts do).
            java.net.URLClassLoader loader = new java.net.URLClassLoader(new java.net.URL[] {new java.io.File(plugin).toURI().toURL()});
            System.out.println(loader.loadClass("plugin.Plugin").getDeclaredConstructor().newInstance());
        }
        Thread.sleep(Long.parseLong(args[0]));
        new Late().run(new long[0]);
        Thread.sleep(Long.parseLong(args[0]));
        System.out.println("done");
        if (args.length > 1) System.exit(Integer.parseInt(args[1]));
    }
}
`;

const PLUGIN = `package plugin;

public class Plugin {
    @Override
    public String toString() { return "plugin loaded"; }
}
`;

const skip = javaSkipReason();
// Every run passes a generous stopWaitMs: these tests check behaviour, not timing, on machines of any load.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('agent protocol', { skip }, () => {
  let dir = '';
  let demoJar = '';
  let pluginJar = '';

  before(() => {
    requireJava();
    buildAgent();
    dir = tempDir('jvmlens-agent-protocol-');
    demoJar = compileJar(dir, { 'demo/Demo.java': DEMO }, { jarName: 'demo-app-1.0.0.jar' });
    pluginJar = compileJar(join(dir, 'plugin'), { 'plugin/Plugin.java': PLUGIN }, { jarName: 'plugin-1.2.jar' });
    // Maven coordinates inside the JAR, as every Maven-built JAR carries them.
    mkdirSync(join(dir, 'plugin', 'meta', 'META-INF', 'maven', 'org.example', 'plugin'), { recursive: true });
    writeFileSync(join(dir, 'plugin', 'meta', 'META-INF', 'maven', 'org.example', 'plugin', 'pom.properties'), 'groupId=org.example\nartifactId=plugin\nversion=1.2.0\n');
    execFileSync('jar', ['--update', '--file', pluginJar, '-C', join(dir, 'plugin', 'meta'), '.']);
  });

  after(() => {
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  const events = (gateway: Gateway) => gateway.requests.flatMap((request) => request.events);
  const itemKey = (item: Event) => JSON.stringify(item);

  test('requests follow decisions §4: vm.start first, valid events only, nothing repeated, vm.stop last', async () => {
    const gateway = await standInGateway();
    try {
      const run = await runJava(['-Dcom.azul.crs.instance.tags=env=prod', `-Ddemo.plugin=${pluginJar}`, javaagent({ gateway: gateway.url, flushMs: 50, stopWaitMs: 20000 }), '-cp', demoJar, 'demo.Demo', '150'], {
        env: { JVMLENS_AGENT_API_KEY: 'key-from-env', DEMO_SECRET: 'hunter2', CRS_TAGS: 'team=core;env=dev' },
      });
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, 'started demo1\nplugin loaded\ndone\n');
      // decisions §12: one line at start, nothing else when all is well.
      assert.equal(run.agentLines.length, 1, run.stderr);
      assert.match(run.vmId ?? '', UUID);
      assert.match(run.agentLines[0], new RegExp(`^jvmlens agent: vmId=${run.vmId} gateway=${gateway.url}$`));

      assert.ok(gateway.requests.length >= 2);
      for (const request of gateway.requests) {
        assert.equal(request.status, 200, JSON.stringify(request.events).slice(0, 500));
        assert.equal(request.contentType, 'application/json');
        assert.equal(request.apiKey, 'key-from-env');
      }
      const all = events(gateway);
      assert.ok(all.every((event) => event.vmId === run.vmId));
      assert.equal(all[0].type, 'vm.start');
      assert.equal(all.filter((event) => event.type === 'vm.start').length, 1, 'vm.start is sent until accepted, then never again');
      assert.equal(all.at(-1)!.type, 'vm.stop');
      assert.equal(all.filter((event) => event.type === 'vm.stop').length, 1);

      const start = all[0];
      const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
      assert.equal(start.agentVersion, version);
      assert.ok(start.agentRevision.length > 0);
      assert.deepEqual(start.tags, { team: 'core', env: 'prod' });
      assert.equal(start.inventory.mainMethod, 'demo.Demo.main');
      assert.equal(start.inventory.systemProperties['com.azul.crs.instance.tags'], 'env=prod');
      assert.equal(start.inventory.osEnvironment.DEMO_SECRET, '');
      assert.ok(Object.values(start.inventory.osEnvironment).every((value) => value === ''), 'environment variables go by name only');
      const cpu = start.inventory.cpuInfo;
      assert.deepEqual(Object.keys(cpu).sort(), ['CPU Model Name', 'CPU Vendor', 'Number of Assigned Logical Cores', 'Number of Physical Cores', 'Number of Processors']);
      for (const key of ['Number of Processors', 'Number of Assigned Logical Cores', 'Number of Physical Cores']) assert.ok(Number.isInteger(cpu[key]) && cpu[key] > 0, key);

      // A class's methods come in one item (methodNames); one item per method here, as the service stores them.
      const code = all.filter((event) => event.type === 'code').flatMap((event) => event.items as Event[])
        .flatMap((item) => (item.methodNames as string[]).map((methodName) => ({ sourceName: item.sourceName, className: item.className, methodName })));
      assert.equal(new Set(code.map(itemKey)).size, code.length, 'no method is sent twice');
      const demoCode = code.filter((item) => item.sourceName === 'demo-app-1.0.0.jar').map((item) => `${item.className}.${item.methodName}`).sort();
      assert.deepEqual(demoCode, [
        'demo/Demo$Helper.<init>()',
        'demo/Demo$Helper.greet(java.lang.String, int)',
        'demo/Demo$Late.<init>()',
        'demo/Demo$Late.run(long[])',
        'demo/Demo.<init>()',
        'demo/Demo.main(java.lang.String[])',
      ]);
      assert.ok(!code.some((item) => item.className.startsWith('io/jvmlens/agent/')), "the agent's own classes are not reported");
      const pluginCode = code.filter((item) => item.sourceName === 'plugin-1.2.jar').map((item) => `${item.className}.${item.methodName}`).sort();
      assert.deepEqual(pluginCode, ['plugin/Plugin.<init>()', 'plugin/Plugin.toString()']);

      const components = all.filter((event) => event.type === 'components').flatMap((event) => event.items as Event[]);
      assert.equal(new Set(components.map(itemKey)).size, components.length, 'no component is sent twice');
      // The class path's JAR at start; the plug-in's when its first class loaded.
      assert.deepEqual(components, [
        { componentName: 'demo-app', componentVersion: '1.0.0', sourceName: 'demo-app-1.0.0.jar' },
        { componentName: 'plugin', componentVersion: '1.2.0', sourceName: 'plugin-1.2.jar', groupId: 'org.example' },
      ]);
    } finally {
      await gateway.close();
    }
  });

  test('environment values are sent only with sendEnvValues=true, and never the API key', async () => {
    const gateway = await standInGateway();
    try {
      const run = await runJava([javaagent({ gateway: gateway.url, sendEnvValues: 'true', stopWaitMs: 20000 }), '-cp', demoJar, 'demo.Demo', '0'], {
        env: { JVMLENS_AGENT_API_KEY: 'key-from-env', DEMO_SECRET: 'hunter2' },
      });
      assert.equal(run.code, 0, run.stderr);
      const start = events(gateway).find((event) => event.type === 'vm.start')!;
      assert.equal(start.inventory.osEnvironment.DEMO_SECRET, 'hunter2');
      assert.equal(start.inventory.osEnvironment.JVMLENS_AGENT_API_KEY, '');
    } finally {
      await gateway.close();
    }
  });

  test('an idle VM sends heartbeats, and only after its vm.start', async () => {
    const gateway = await standInGateway();
    try {
      // Two idle seconds against a 100 ms heartbeat period.
      const run = await runJava([javaagent({ gateway: gateway.url, flushMs: 20, heartbeatMs: 100, stopWaitMs: 20000 }), '-cp', demoJar, 'demo.Demo', '1000'], {});
      assert.equal(run.code, 0, run.stderr);
      const all = events(gateway);
      const heartbeats = all.flatMap((event, index) => (event.type === 'vm.heartbeat' ? [index] : []));
      assert.ok(heartbeats.length >= 1, JSON.stringify(all.map((event) => event.type)));
      assert.ok(heartbeats.every((index) => index > all.findIndex((event) => event.type === 'vm.start')));
    } finally {
      await gateway.close();
    }
  });

  test('while the service starts (503) the agent retries quietly and vm.start leads the first accepted request', async () => {
    const gateway = await standInGateway((_events, index) => (index < 2 ? 503 : 200));
    try {
      const run = await runJava([javaagent({ gateway: gateway.url, flushMs: 20, stopWaitMs: 20000 }), '-cp', demoJar, 'demo.Demo', '200'], {});
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.agentLines.length, 1, run.stderr);
      const statuses = gateway.requests.map((request) => request.status);
      assert.deepEqual(statuses.slice(0, 3), [503, 503, 200]);
      for (const request of gateway.requests.slice(0, 3)) assert.equal(request.events[0].type, 'vm.start');
      assert.equal(events(gateway).at(-1)!.type, 'vm.stop');
    } finally {
      await gateway.close();
    }
  });

  test('a service that lost the VM is sent vm.start again, and no event is lost', async () => {
    // Like the service: events of an unknown vmId are refused; after the first accepted request it forgets, once.
    const known = new Set<string>();
    let forgotten = false;
    const gateway = await standInGateway((batch) => {
      for (const event of batch) {
        if (event.type === 'vm.start') known.add(event.vmId);
        else if (!known.has(event.vmId)) return 400;
      }
      if (!forgotten) {
        forgotten = true;
        queueMicrotask(() => known.clear());
      }
      return 200;
    });
    try {
      // The application lives long enough for a first request before its exit sends the last one.
      const run = await runJava([javaagent({ gateway: gateway.url, flushMs: 50, stopWaitMs: 20000 }), '-cp', demoJar, 'demo.Demo', '300'], {});
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.agentLines.length, 1, run.stderr);
      const rejected = gateway.requests.findIndex((request) => request.status === 400);
      assert.ok(rejected > 0, 'the second request is refused');
      assert.equal(gateway.requests.filter((request) => request.status === 400).length, 1);
      const retry = gateway.requests[rejected + 1];
      assert.equal(retry.status, 200);
      assert.equal(retry.events[0].type, 'vm.start');
      assert.deepEqual(retry.events.slice(1), gateway.requests[rejected].events);
      assert.equal(events(gateway).at(-1)!.type, 'vm.stop');
    } finally {
      await gateway.close();
    }
  });

  test('an unreachable gateway never disturbs the application: oldest batches are dropped and counted', async () => {
    const port = await closedPort();
    const run = await runJava([javaagent({ gateway: `http://127.0.0.1:${port}`, flushMs: 20, maxBatches: 1, stopWaitMs: 20000 }), '-cp', demoJar, 'demo.Demo', '50', '3'], {});
    assert.equal(run.code, 3, 'the application keeps its exit status');
    assert.equal(run.stdout, 'started demo1\ndone\n');
    // A JVM this short says it once, at exit: what stayed undelivered, and how much of the code the full
    // outbox (maxBatches=1) dropped; no promise to retry (on a busy machine one may come first, after 2 s).
    const lines = run.agentLines.slice(1);
    assert.ok(lines.length === 1 || (lines.length === 2 && lines[0].includes('; retrying every few seconds')), run.stderr);
    assert.match(lines.at(-1) ?? '', new RegExp(`^jvmlens agent: could not deliver to http://127.0.0.1:${port}/agent/v1/events \\(unreachable\\): [1-9]\\d* batch\\(es\\) undelivered at exit, [1-9]\\d* dropped$`));
  });

  test('a refused API key is reported once, with what to check', async () => {
    const gateway = await standInGateway(() => 401);
    try {
      const run = await runJava([javaagent({ gateway: gateway.url, apiKey: 'wrong', flushMs: 20, stopWaitMs: 20000 }), '-cp', demoJar, 'demo.Demo', '100'], {});
      assert.equal(run.code, 0, run.stderr);
      const refused = run.agentLines.filter((line) => line.includes('HTTP 401'));
      // Once as it happens, with the hint, not at every retry; and at exit, what stayed undelivered.
      assert.equal(refused.length, 2, run.stderr);
      assert.match(refused[0], /HTTP 401 \(check apiKeyFile \/ JVMLENS_AGENT_API_KEY\)/);
      assert.match(refused[1], /\(HTTP 401\): [1-9]\d* batch\(es\) undelivered at exit$/);
      assert.ok(gateway.requests.every((request) => request.apiKey === 'wrong'));
    } finally {
      await gateway.close();
    }
  });
});
