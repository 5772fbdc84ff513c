// A webapp redeployed in place, as Tomcat does it: the old class loader is dropped, WEB-INF/lib expanded anew
// (a JAR added, one replaced under the same name by another version), and a new loader loads the classes from
// the same locations. The components of the new WEB-INF/lib are reported, as at the first deploy.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pollEvents } from '../helpers/cve.ts';
import { startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';
import { buildAgent, compileJar, javaSkipReason, javaagent, requireJava, runJava } from './java.ts';
import type { JavaRun } from './java.ts';

const skip = javaSkipReason();

/** Deploys the webapp at args[0], then redeploys it with the WEB-INF/lib at args[1] in place of its own. */
const SERVER = `package server;

import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

public class Server {
    public static void main(String[] args) throws Exception {
        Path webapp = Paths.get(args[0]);
        Path lib = webapp.resolve("WEB-INF").resolve("lib");
        deploy(webapp);
        Thread.sleep(500);
        try (Stream<Path> old = Files.walk(lib)) {
            for (Path path : old.sorted(Comparator.reverseOrder()).toList()) Files.delete(path);
        }
        Files.createDirectory(lib);
        try (Stream<Path> next = Files.list(Paths.get(args[1]))) {
            for (Path jar : next.toList()) Files.copy(jar, lib.resolve(jar.getFileName()));
        }
        deploy(webapp);
        System.out.println("redeployed");
    }

    private static void deploy(Path webapp) throws Exception {
        List<URL> urls = new ArrayList<>();
        urls.add(webapp.resolve("WEB-INF").resolve("classes").toUri().toURL());
        try (Stream<Path> jars = Files.list(webapp.resolve("WEB-INF").resolve("lib"))) {
            for (Path jar : jars.sorted().toList()) urls.add(jar.toUri().toURL());
        }
        try (URLClassLoader loader = new URLClassLoader(urls.toArray(new URL[0]), Server.class.getClassLoader())) {
            loader.loadClass("shop.Page").getMethod("render").invoke(null);
        }
    }
}
`;

const PAGE = 'package shop;\n\npublic class Page {\n    public static String render() { return "page"; }\n}\n';

/** A JAR holding only a manifest that names the component. */
function libraryJar(file: string, title: string, version: string): void {
  const dir = `${file}.d`;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'MANIFEST.MF'), `Implementation-Title: ${title}\nImplementation-Version: ${version}\n`);
  writeFileSync(join(dir, 'readme.txt'), title);
  execFileSync('jar', ['--create', '--file', file, '--manifest', join(dir, 'MANIFEST.MF'), '-C', dir, 'readme.txt'], { stdio: ['ignore', 'ignore', 'pipe'] });
}

describe('a webapp redeployed in place', { skip }, () => {
  let dir = '';
  let service: RunningService | undefined;
  let run: JavaRun;

  before(async () => {
    requireJava();
    buildAgent();
    dir = tempDir('jvmlens-redeploy-');
    const server = compileJar(join(dir, 'server'), { 'server/Server.java': SERVER }, { jarName: 'server.jar' });
    const webInf = join(dir, 'webapps', 'shop', 'WEB-INF');
    compileJar(join(dir, 'page'), { 'shop/Page.java': PAGE });
    cpSync(join(dir, 'page', 'classes'), join(webInf, 'classes'), { recursive: true });
    mkdirSync(join(webInf, 'lib'));
    libraryJar(join(webInf, 'lib', 'kept.jar'), 'kept', '1.0');
    libraryJar(join(webInf, 'lib', 'replaced.jar'), 'replaced', '1.0');
    const next = join(dir, 'next-lib');
    mkdirSync(next);
    libraryJar(join(next, 'kept.jar'), 'kept', '1.0');
    libraryJar(join(next, 'replaced.jar'), 'replaced', '2.0');
    libraryJar(join(next, 'added.jar'), 'added', '3.0');
    service = await startService();
    run = await runJava([javaagent({ gateway: service.gatewayUrl, apiKey: service.apiKey, flushMs: 100, stopWaitMs: 20000 }), '-cp', server, 'server.Server', join(dir, 'webapps', 'shop'), next]);
  });

  after(async () => {
    await service?.stop();
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  test("the new WEB-INF/lib's JARs are components, the one replaced under its name in its new version", async () => {
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'redeployed\n');
    const components = (events: any[]) => events.map((event) => `${event.componentName} ${event.componentVersion}`).sort();
    const { items } = await pollEvents(service!, { vmId: run.vmId!, showNotImpacted: true }, (events) => components(events).includes('added 3.0'), 10_000);
    assert.deepEqual(components(items), ['added 3.0', 'kept 1.0', 'replaced 1.0', 'replaced 2.0', 'server UNKNOWN']);
  });
});
