// Debian's Tomcat 10 as its users run it: `catalina.sh run` with its own CATALINA_BASE, the agent in
// bin/setenv.sh (key in a file, tags joined by '+', which the script's eval leaves whole), a webapp
// serving a request. The code report names what the user sees (lib/catalina.jar, not the symlink's
// target; the webapp's classes by its context), tomcat-catalina matches its OSV record as USED, and
// the log4j-core JAR in WEB-INF/lib that no class was loaded from is a component, PRESENT. A second webapp runs
// from its packed WAR (unpackWARs="false"): the JARs inside it are components too. The agent runs with
// methods=called under -Xverify:all: every method of Tomcat's classes gets a probe, and the JVM verifies each.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CVSS, cveImport, pollEvents, writeAdvisories } from '../helpers/cve.ts';
import { runReport } from '../helpers/reports.ts';
import { freePort, startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';
import { AGENT_JAR, buildAgent, compileJar, findDebianJars, javaSkipReason, requireJava } from './java.ts';

const TOMCAT = '/usr/share/tomcat10';
const SERVLET_API = '/usr/share/java/tomcat10-servlet-api.jar';
const IN_CI = process.env.CI === 'true';
const jars = findDebianJars();
const missing = !existsSync(join(TOMCAT, 'bin', 'catalina.sh')) || !existsSync(SERVLET_API) ? 'tomcat10 is not installed (apt-get install tomcat10)' : typeof jars === 'string' ? jars : false;
const skip = javaSkipReason() || (missing !== false && !IN_CI ? missing : false);

const HELLO = `package shop;

import jakarta.servlet.annotation.WebServlet;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

@WebServlet("/hello")
public class Hello extends HttpServlet {
    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        response.setContentType("text/plain");
        response.getWriter().print("hello from shop");
    }
}
`;

const BLANK = `package store;

import jakarta.servlet.annotation.WebServlet;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.apache.logging.log4j.util.Strings;

@WebServlet("/blank")
public class Blank extends HttpServlet {
    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        response.setContentType("text/plain");
        response.getWriter().print(Strings.isBlank(request.getParameter("q")) ? "blank" : "not blank");
    }
}
`;

/** A CATALINA_BASE of Debian's configuration, the HTTP connector on `port`, no shutdown port, the agent in setenv.sh. */
function catalinaBase(base: string, port: number, agentOptions: string): void {
  for (const folder of ['bin', 'conf', 'logs', 'temp', 'webapps', 'work']) mkdirSync(join(base, folder), { recursive: true });
  cpSync(join(TOMCAT, 'etc'), join(base, 'conf'), { recursive: true, dereference: true });
  const serverXml = join(base, 'conf', 'server.xml');
  const configured = readFileSync(serverXml, 'utf8').replace(/<Server port="-?\d+"/, '<Server port="-1"').replace('<Connector port="8080"', '<Connector port="${http.port}" address="127.0.0.1"')
    .replace('unpackWARs="true"', 'unpackWARs="false"');
  writeFileSync(serverXml, configured);
  // As the README shows it: the options in CATALINA_OPTS, which catalina.sh evals.
  writeFileSync(join(base, 'bin', 'setenv.sh'), `CATALINA_OPTS="$CATALINA_OPTS -Dhttp.port=${port} -javaagent:${AGENT_JAR}=${agentOptions}"\n`);
}

async function waitForHello(url: string, tomcat: ChildProcess, output: () => string): Promise<string> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (tomcat.exitCode !== null) throw new Error(`Tomcat exited with ${tomcat.exitCode}:\n${output()}`);
    try {
      const response = await fetch(url);
      if (response.status === 200) return await response.text();
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`Tomcat did not serve ${url} within 60 s:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const WINDOW = () => ({ from: new Date(Date.now() - 3_600_000).toISOString(), to: new Date(Date.now() + 3_600_000).toISOString() });

describe('the agent in a running Tomcat server', { skip }, () => {
  let dir = '';
  let service: RunningService | undefined;
  let tomcat: ChildProcess | undefined;
  let output = '';
  let hello = '';
  let blank = '';
  let vmId = '';

  before(async () => {
    requireJava();
    if (missing !== false) throw new Error(`CI=true: ${missing}`);
    if (typeof jars === 'string') throw new Error(jars);
    buildAgent();
    dir = tempDir('jvmlens-tomcat-server-');
    service = await startService();
    const folder = writeAdvisories([
      { osvId: 'JVMLENS-TOMCAT-2', cveId: 'CVE-2099-20160', groupId: 'org.apache.tomcat', artifactId: 'tomcat-catalina', versions: ['10.1.60'], severity: CVSS.score98 },
      { osvId: 'JVMLENS-LOG4J-1', cveId: 'CVE-2099-21900', groupId: 'org.apache.logging.log4j', artifactId: 'log4j-core', versions: ['2.19.0'], severity: CVSS.score98 },
      { osvId: 'JVMLENS-LOG4J-API-1', cveId: 'CVE-2099-21901', groupId: 'org.apache.logging.log4j', artifactId: 'log4j-api', versions: ['2.19.0'], severity: CVSS.score98 },
    ]);
    await cveImport(service.dataDir, [folder]);

    const keyFile = join(dir, 'agent.key');
    writeFileSync(keyFile, `${service.apiKey}\n`, { mode: 0o600 });
    const port = await freePort();
    const base = join(dir, 'base');
    catalinaBase(base, port, `gateway=${service.gatewayUrl},apiKeyFile=${keyFile},tags=env=test+team=web,flushMs=200,methods=called`);
    const webInf = join(base, 'webapps', 'shop', 'WEB-INF');
    compileJar(join(dir, 'build'), { 'shop/Hello.java': HELLO }, { classPath: [SERVLET_API] });
    cpSync(join(dir, 'build', 'classes'), join(webInf, 'classes'), { recursive: true });
    mkdirSync(join(webInf, 'lib'));
    copyFileSync(jars.log4jCore, join(webInf, 'lib', 'log4j-core-2.19.0.jar'));
    // The packed WAR: its servlet calls log4j-api; spring-core sits in its WEB-INF/lib unused.
    const store = join(dir, 'store');
    compileJar(join(store, 'build'), { 'store/Blank.java': BLANK }, { classPath: [SERVLET_API, jars.log4jApi] });
    cpSync(join(store, 'build', 'classes'), join(store, 'war', 'WEB-INF', 'classes'), { recursive: true });
    mkdirSync(join(store, 'war', 'WEB-INF', 'lib'));
    copyFileSync(jars.log4jApi, join(store, 'war', 'WEB-INF', 'lib', 'log4j-api-2.19.0.jar'));
    copyFileSync(jars.springCore, join(store, 'war', 'WEB-INF', 'lib', 'spring-core.jar'));
    execFileSync('jar', ['--create', '--file', join(base, 'webapps', 'store.war'), '-C', join(store, 'war'), '.'], { stdio: ['ignore', 'ignore', 'pipe'] });

    tomcat = spawn(join(TOMCAT, 'bin', 'catalina.sh'), ['run'], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, CATALINA_HOME: TOMCAT, CATALINA_BASE: base, JAVA_OPTS: '-Xverify:all' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    tomcat.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    tomcat.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    hello = await waitForHello(`http://127.0.0.1:${port}/shop/hello`, tomcat, () => output);
    blank = await waitForHello(`http://127.0.0.1:${port}/store/blank`, tomcat, () => output);
    vmId = /jvmlens agent: vmId=(\S+) gateway=/.exec(output)?.[1] ?? '';
  });

  after(async () => {
    if (tomcat !== undefined && tomcat.exitCode === null) {
      const exited = new Promise((resolve) => tomcat!.once('exit', resolve));
      tomcat.kill('SIGTERM');
      await exited;
    }
    await service?.stop();
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  test('Tomcat starts from setenv.sh with the agent and serves the webapps', () => {
    assert.equal(hello, 'hello from shop');
    assert.equal(blank, 'blank');
    assert.ok(!existsSync(join(dir, 'base', 'webapps', 'store')), 'store runs from its packed WAR');
    assert.match(vmId, /.+/, `the agent's start line:\n${output}`);
    const agentLines = output.split('\n').filter((line) => line.startsWith('jvmlens agent: '));
    assert.deepEqual(agentLines.filter((line) => !line.includes('vmId=')), [], 'no class the agent failed to observe or probe');
  });

  test('the API key is in no line Tomcat printed or logged', () => {
    const logs = readdirSync(join(dir, 'base', 'logs')).map((file) => readFileSync(join(dir, 'base', 'logs', file), 'utf8'));
    assert.ok(logs.length > 0, 'Tomcat wrote its logs');
    for (const text of [output, ...logs]) assert.ok(!text.includes(service!.apiKey));
    assert.match(output, /Command line argument: -javaagent:.*apiKeyFile=/, 'Tomcat logs the agent option, with the file name only');
  });

  test("code sources carry the names the user sees: lib/catalina.jar and the webapp's context", async () => {
    // With methods=called, doGet's first call reaches the service at the agent's next flush after the request.
    let report = await runReport(service!, 'codeInventory', { ...WINDOW(), filter: [] });
    for (let attempt = 0; attempt < 50 && !report.items.some((item) => String(item.methodName).startsWith('doGet(')); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      report = await runReport(service!, 'codeInventory', { ...WINDOW(), filter: [] });
    }
    const classesBySource = new Map<string, Set<string>>();
    for (const item of report.items) {
      const classes = classesBySource.get(String(item.sourceName)) ?? new Set<string>();
      classesBySource.set(String(item.sourceName), classes.add(String(item.className)));
    }
    assert.deepEqual([...(classesBySource.get('shop/WEB-INF/classes') ?? [])], ['shop/Hello']);
    // methods=called: the servlet's methods that ran, with doGet, and no method Tomcat never called.
    const hello = report.items.filter((item) => item.className === 'shop/Hello').map((item) => item.methodName).sort();
    assert.deepEqual(hello, ['<init>()', 'doGet(jakarta.servlet.http.HttpServletRequest, jakarta.servlet.http.HttpServletResponse)']);
    const catalinaMethods = report.items.filter((item) => item.className === 'org/apache/catalina/startup/Catalina').map((item) => item.methodName);
    assert.ok(catalinaMethods.includes('start()') && !catalinaMethods.includes('usage()'), catalinaMethods.join(', '));
    assert.ok(classesBySource.get('catalina.jar')?.has('org/apache/catalina/startup/Catalina'), 'the name in lib/, not the symlink target');
    assert.ok(classesBySource.get('bootstrap.jar')?.has('org/apache/catalina/startup/Bootstrap'));
    const targets = [...classesBySource.keys()].filter((name) => name.startsWith('tomcat10-'));
    assert.deepEqual(targets, [], 'no code source is named after a symlink target');
  });

  test('tomcat-catalina matches its advisory as USED; the unloaded log4j-core of WEB-INF/lib as PRESENT', async () => {
    const { items } = await pollEvents(service!, { vmId }, (events) => events.length >= 2, 30_000);
    const byCve = new Map(items.map((event) => [event.cveId, event]));
    assert.equal(byCve.get('CVE-2099-20160')?.componentName, 'tomcat-catalina', JSON.stringify(items));
    assert.equal(byCve.get('CVE-2099-20160')?.cveState, 'USED');
    assert.equal(byCve.get('CVE-2099-21900')?.componentName, 'log4j-core', JSON.stringify(items));
    assert.equal(byCve.get('CVE-2099-21900')?.componentVersion, '2.19.0');
    assert.equal(byCve.get('CVE-2099-21900')?.cveState, 'PRESENT', 'no class of log4j-core was loaded');
    assert.deepEqual(byCve.get('CVE-2099-20160')?.tags, { env: 'test', team: 'web' });
  });

  test("a packed WAR's WEB-INF/lib JARs are components: log4j-api, which ran, USED; spring-core, never loaded, PRESENT", async () => {
    const { items } = await pollEvents(service!, { vmId }, (events) => events.some((event) => event.componentName === 'log4j-api' && event.cveState === 'USED') && events.some((event) => event.componentName === 'spring-core'), 30_000);
    assert.equal(items.find((event) => event.cveId === 'CVE-2099-21901')?.componentVersion, '2.19.0', JSON.stringify(items));
    const spring = items.filter((event) => event.componentName === 'spring-core');
    assert.deepEqual([...new Set(spring.map((event) => event.cveState))], ['PRESENT'], JSON.stringify(spring));
  });

  test('lib/ JARs no class was loaded from are components all the same', async () => {
    const components = await runReport(service!, 'component', { filter: ["componentName = 'tomcat-storeconfig'"] });
    assert.equal(components.items.length, 1, 'tomcat-storeconfig, from lib/catalina-storeconfig.jar');
    const code = await runReport(service!, 'codeInventory', { ...WINDOW(), filter: ['sourceName:catalina-storeconfig.jar'] });
    assert.equal(code.items.length, 0, 'no class of it was loaded: a server without StoreConfig listeners never does');
  });
});
