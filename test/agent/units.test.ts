// The agent's pure parts, table by table, through a test-only Probe in the agent's package (one JVM per table).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { tempDir } from '../helpers/service.ts';
import { AGENT_JAR, TEST_JAVA, buildAgent, compileJar, javaSkipReason, requireJava, runJava } from './java.ts';

const skip = javaSkipReason();

type Field = string | null;

describe('agent units', { skip }, () => {
  let dir = '';
  let probeClasses = '';
  let fixtureJar = '';

  before(() => {
    requireJava();
    buildAgent();
    dir = tempDir('jvmlens-agent-units-');
    probeClasses = join(dir, 'probe');
    execFileSync('javac', ['-encoding', 'UTF-8', '-cp', AGENT_JAR, '-d', probeClasses, join(TEST_JAVA, 'io', 'jvmlens', 'agent', 'Probe.java')], { stdio: ['ignore', 'ignore', 'pipe'] });
    fixtureJar = compileJar(join(dir, 'fixture'), { 'fixture/Shapes.java': SHAPES }, { mainClass: 'fixture.Shapes', jarName: 'fixture-3.1.jar' });
  });

  after(() => {
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  /** Runs every case in one JVM; each answer is the parsed JSON line. */
  async function probe(cases: Field[][]): Promise<unknown[]> {
    const input = cases.map((fields) => fields.map((field) => (field === null ? '-' : Buffer.from(field, 'utf8').toString('base64'))).join(' ')).join('\n') + '\n';
    const run = await runJava(['-cp', [AGENT_JAR, probeClasses, fixtureJar].join(':'), 'io.jvmlens.agent.Probe'], { input });
    assert.equal(run.code, 0, run.stderr);
    return run.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as unknown);
  }

  async function table(kind: string, rows: { input: Field[]; expected: unknown }[]): Promise<void> {
    const answers = await probe(rows.map((row) => [kind, ...row.input]));
    rows.forEach((row, i) => assert.deepEqual(answers[i], row.expected, `${kind} ${JSON.stringify(row.input)}`));
  }

  const invalid = (answer: unknown) => typeof answer === 'object' && answer !== null && 'error' in answer;

  test('method descriptors become name(type, type) with Java type names', async () => {
    await table('methodName', [
      { input: ['main', '([Ljava/lang/String;)V'], expected: 'main(java.lang.String[])' },
      { input: ['<init>', '()V'], expected: '<init>()' },
      { input: ['put', '(Ljava/lang/Object;I)Ljava/lang/Object;'], expected: 'put(java.lang.Object, int)' },
      { input: ['all', '(ZBCSIJFD)V'], expected: 'all(boolean, byte, char, short, int, long, float, double)' },
      { input: ['grid', '([[I[[Ljava/util/Map$Entry;)[J'], expected: 'grid(int[][], java.util.Map$Entry[][])' },
      { input: ['ünïcödé', '(Ljava/lang/String;)V'], expected: 'ünïcödé(java.lang.String)' },
    ]);
    const answers = await probe([['methodName', 'x', 'V'], ['methodName', 'x', '(Q)V'], ['methodName', 'x', '(Ljava/lang/String']]);
    for (const answer of answers) assert.ok(invalid(answer), `a malformed descriptor is an error, got ${JSON.stringify(answer)}`);
  });

  test('a class file yields its declared methods, without <clinit> and bridges', async () => {
    const classFile = join(dir, 'fixture', 'classes', 'fixture', 'Shapes.class');
    const [names] = (await probe([['classFile', classFile]])) as string[][];
    assert.deepEqual([...names].sort(), [
      '<init>()',
      '<init>(int[], java.lang.String[])',
      'compareTo(fixture.Shapes)',
      'first(java.util.List, java.util.Map$Entry)',
      'lambda$task$0()',
      'main(java.lang.String[])',
      'nativeMethod(java.lang.Object[])',
      'primitives(boolean, byte, char, short, int, long, float, double)',
      'task()',
      'ünïcödé()',
    ]);
  });

  test('methods read from bytes are exactly the declared methods reflection reports', async () => {
    // Real classes with every constant-pool shape (Long/Double take two slots, MethodHandle, Dynamic…).
    const classes = ['fixture.Shapes', 'fixture.Shapes$Kind', 'fixture.Shapes$Inner', 'java.lang.String', 'java.util.HashMap', 'java.util.concurrent.ConcurrentHashMap', 'java.lang.invoke.MethodHandles', 'java.lang.Math'];
    const answers = (await probe(classes.map((name) => ['crossCheck', name]))) as { fromBytes: string[]; fromReflection: string[] }[];
    answers.forEach((answer, i) => {
      assert.ok(!invalid(answer), `${classes[i]}: ${JSON.stringify(answer)}`);
      assert.deepEqual([...answer.fromBytes].sort(), [...new Set(answer.fromReflection)].sort(), classes[i]);
    });
  });

  test('a code-source location names its source', async () => {
    await table('sourceName', [
      { input: ['file:/usr/share/java/log4j-core.jar'], expected: 'log4j-core.jar' },
      { input: ['file:/opt/my%20app/lib/foo%2Bbar-1.0.jar'], expected: 'foo+bar-1.0.jar' },
      { input: ['jar:file:/opt/app.jar!/BOOT-INF/lib/spring-core-5.3.9.jar!/'], expected: 'spring-core-5.3.9.jar' },
      { input: ['jar:nested:/opt/app.jar/!BOOT-INF/lib/spring-core-6.1.0.jar!/'], expected: 'spring-core-6.1.0.jar' },
      { input: ['jar:file:/opt/app.jar!/BOOT-INF/classes!/'], expected: 'app.jar' },
      { input: ['file:/opt/app/target/classes/'], expected: 'classes' },
      { input: ['vfs:/content/shop.war/WEB-INF/lib/guava-31.1-jre.jar/'], expected: 'guava-31.1-jre.jar' },
      { input: ['jrt:/java.sql'], expected: null },
      // A webapp's classes carry its context, or every webapp's would merge as "classes".
      { input: ['file:/var/lib/tomcat10/webapps/shop/WEB-INF/classes/'], expected: 'shop/WEB-INF/classes' },
      { input: ['file:/var/lib/tomcat10/webapps/ROOT/WEB-INF/classes'], expected: 'ROOT/WEB-INF/classes' },
      { input: ['file:/var/lib/tomcat10/webapps/shop/WEB-INF/lib/guava-31.1-jre.jar'], expected: 'guava-31.1-jre.jar' },
      { input: ['file:/opt/WEB-INF/classes/'], expected: 'opt/WEB-INF/classes' },
    ]);
  });

  test('a JAR opened through a symbolic link keeps the name the user gave it', async () => {
    const real = join(dir, 'aliases', 'java');
    const lib = join(dir, 'aliases', 'lib');
    mkdirSync(real, { recursive: true });
    mkdirSync(lib, { recursive: true });
    writeFileSync(join(real, 'tomcat10-catalina-10.1.60.jar'), '');
    symlinkSync('tomcat10-catalina-10.1.60.jar', join(real, 'tomcat10-catalina.jar'));
    symlinkSync(join(real, 'tomcat10-catalina.jar'), join(lib, 'catalina.jar'));
    writeFileSync(join(real, 'app-2.0.jar'), '');
    symlinkSync(join(real, 'app-2.0.jar'), join(dir, 'aliases', 'app.jar'));
    writeFileSync(join(lib, 'plain-1.0.jar'), '');
    await table('jarAlias', [
      // The JVM opens the real file: named as in the lib directory, or as on the class path.
      { input: ['', lib, `file:${real}/tomcat10-catalina-10.1.60.jar`], expected: 'catalina.jar' },
      { input: [join(dir, 'aliases', 'app.jar'), null, `file:${real}/app-2.0.jar`], expected: 'app.jar' },
      // A manifest Class-Path entry through another link to the same file.
      { input: ['', lib, `file:${real}/tomcat10-catalina.jar`], expected: 'catalina.jar' },
      // A JAR without another name, and a lib directory not given.
      { input: ['', lib, `file:${lib}/plain-1.0.jar`], expected: null },
      { input: ['', null, `file:${real}/tomcat10-catalina-10.1.60.jar`], expected: null },
    ]);
  });

  test('a JAR without metadata is named by its file name', async () => {
    const component = (componentName: string, componentVersion: string, sourceName: string) => ({ componentName, componentVersion, sourceName, groupId: null });
    await table('fileName', [
      { input: ['foo-1.2.3.jar'], expected: component('foo', '1.2.3', 'foo-1.2.3.jar') },
      { input: ['commons-lang3-3.12.0.jar'], expected: component('commons-lang3', '3.12.0', 'commons-lang3-3.12.0.jar') },
      { input: ['guava-31.1-jre.jar'], expected: component('guava', '31.1-jre', 'guava-31.1-jre.jar') },
      { input: ['app-1.0.0-SNAPSHOT.jar'], expected: component('app', '1.0.0-SNAPSHOT', 'app-1.0.0-SNAPSHOT.jar') },
      { input: ['log4j-core.jar'], expected: component('log4j-core', 'UNKNOWN', 'log4j-core.jar') },
      { input: ['classes'], expected: component('classes', 'UNKNOWN', 'classes') },
    ]);
  });

  test('components come from pom.properties, else the manifest, else the file name', async () => {
    const jars = join(dir, 'jars');
    const shaded = makeJar(jars, 'shaded-app-2.0.jar', {
      'META-INF/maven/com.example/shaded-app/pom.properties': 'groupId=com.example\nartifactId=shaded-app\nversion=2.0\n',
      'META-INF/maven/com.google.guava/guava/pom.properties': '#generated\ngroupId=com.google.guava\nartifactId=guava\nversion=31.1-jre\n',
    }, 'Implementation-Title: ignored-when-pom-exists\nImplementation-Version: 9\n');
    const titled = makeJar(jars, 'spring3-core-3.x.jar', {}, 'Implementation-Title: spring-core\nImplementation-Version: 4.3.30.RELEASE\n');
    const titleOnly = makeJar(jars, 'lib-7.jar', {}, 'Implementation-Title: lib\n');
    const versionOnly = makeJar(jars, 'bar.jar', {}, 'Implementation-Version: 1.4\nClass-Path: lib/a.jar  b%20c.jar\n');
    const named = makeJar(jars, 'foo-1.2.3.jar', { 'x.txt': 'x' });
    const noVersion = makeJar(jars, 'nover.jar', { 'META-INF/maven/g/a/pom.properties': 'groupId=g\nartifactId=a\n' });
    type Scan = { components: { componentName: string }[]; manifestClassPath: string[] };
    const answers = (await probe([shaded, titled, titleOnly, versionOnly, named, noVersion].map((jar) => ['scanFile', jar, jar.slice(jars.length + 1)]))) as Scan[];
    // A JAR's entries come in archive order; compare the shaded JAR's components by name.
    for (const answer of answers) answer.components.sort((a, b) => a.componentName.localeCompare(b.componentName));
    assert.deepEqual(answers, [
      {
        components: [
          { componentName: 'guava', componentVersion: '31.1-jre', sourceName: 'shaded-app-2.0.jar', groupId: 'com.google.guava' },
          { componentName: 'shaded-app', componentVersion: '2.0', sourceName: 'shaded-app-2.0.jar', groupId: 'com.example' },
        ],
        manifestClassPath: [],
      },
      { components: [{ componentName: 'spring-core', componentVersion: '4.3.30.RELEASE', sourceName: 'spring3-core-3.x.jar', groupId: null }], manifestClassPath: [] },
      { components: [{ componentName: 'lib', componentVersion: 'UNKNOWN', sourceName: 'lib-7.jar', groupId: null }], manifestClassPath: [] },
      { components: [{ componentName: 'bar', componentVersion: '1.4', sourceName: 'bar.jar', groupId: null }], manifestClassPath: ['lib/a.jar', 'b%20c.jar'] },
      { components: [{ componentName: 'foo', componentVersion: '1.2.3', sourceName: 'foo-1.2.3.jar', groupId: null }], manifestClassPath: [] },
      { components: [{ componentName: 'a', componentVersion: 'UNKNOWN', sourceName: 'nover.jar', groupId: 'g' }], manifestClassPath: [] },
    ]);
  });

  test('JARs without pom.properties are named as a vulnerability database knows them: OSGi bundles, modules, the real file', async () => {
    const jars = join(dir, 'identity');
    const catalina = makeJar(jars, 'tomcat10-catalina-10.1.60.jar', { 'x.txt': 'x' }, 'Bundle-SymbolicName: org.apache.tomcat-catalina\nBundle-Version: 10.1.60\nImplementation-Title: Apache Tomcat\nImplementation-Version: 10.1.60\n');
    symlinkSync('tomcat10-catalina-10.1.60.jar', join(jars, 'catalina.jar'));
    const eclipse = makeJar(jars, 'jdt-core.jar', { 'x.txt': 'x' }, 'Bundle-SymbolicName: org.eclipse.jdt.core;singleton:=true\nBundle-Version: 3.32.0.qualifier\n');
    const bundleNoVersion = makeJar(jars, 'coyote.jar', { 'x.txt': 'x' }, 'Bundle-SymbolicName: org.apache.tomcat-coyote\nImplementation-Version: 10.1.60\n');
    const module = makeJar(jars, 'mod.jar', { 'x.txt': 'x' }, 'Automatic-Module-Name: org.acme.widgets\nImplementation-Title: Widgets\nImplementation-Version: 2.1\n');
    makeJar(jars, 'guice-4.2.3-no_aop.jar', { 'x.txt': 'x' });
    symlinkSync('guice-4.2.3-no_aop.jar', join(jars, 'guice-no-aop.jar'));
    const cases = [[join(jars, 'catalina.jar'), 'catalina.jar'], [catalina, 'tomcat10-catalina-10.1.60.jar'], [eclipse, 'jdt-core.jar'], [bundleNoVersion, 'coyote.jar'], [module, 'mod.jar'], [join(jars, 'guice-no-aop.jar'), 'guice-no-aop.jar']];
    const answers = (await probe(cases.map(([path, name]) => ['scanFile', path, name]))) as { components: unknown[] }[];
    assert.deepEqual(answers.map((answer) => answer.components), [
      [{ componentName: 'tomcat-catalina', componentVersion: '10.1.60', sourceName: 'catalina.jar', groupId: 'org.apache.tomcat' }],
      [{ componentName: 'tomcat-catalina', componentVersion: '10.1.60', sourceName: 'tomcat10-catalina-10.1.60.jar', groupId: 'org.apache.tomcat' }],
      [{ componentName: 'org.eclipse.jdt.core', componentVersion: '3.32.0.qualifier', sourceName: 'jdt-core.jar', groupId: 'org.eclipse.jdt' }],
      [{ componentName: 'tomcat-coyote', componentVersion: '10.1.60', sourceName: 'coyote.jar', groupId: 'org.apache.tomcat' }],
      [{ componentName: 'org.acme.widgets', componentVersion: '2.1', sourceName: 'mod.jar', groupId: null }],
      [{ componentName: 'guice', componentVersion: '4.2.3-no_aop', sourceName: 'guice-no-aop.jar', groupId: null }],
    ]);
  });

  test("Debian's Tomcat JARs are distinct components with Tomcat's coordinates", async (t) => {
    const lib = '/usr/share/tomcat10/lib';
    if (!existsSync(join(lib, 'catalina.jar'))) {
      if (process.env.CI === 'true') assert.fail('.ci/run installs tomcat10');
      return t.skip('tomcat10 is not installed');
    }
    const names = ['catalina.jar', 'tomcat-coyote.jar', 'jsp-api.jar', 'servlet-api.jar'];
    const answers = (await probe(names.map((name) => ['scanFile', join(lib, name), name]))) as { components: { componentName: string; groupId: string | null; componentVersion: string }[] }[];
    const components = answers.map((answer) => answer.components[0]);
    assert.deepEqual(components.map((c) => `${c.groupId}:${c.componentName}`), ['org.apache.tomcat:tomcat-catalina', 'org.apache.tomcat:tomcat-coyote', 'org.apache.tomcat:tomcat-jsp-api', 'org.apache.tomcat:tomcat-servlet-api']);
    for (const component of components) assert.match(component.componentVersion, /^10\.1\.\d+$/);
  });

  test('components of a JAR nested in another are read through the outer JAR', async () => {
    const jars = join(dir, 'nested');
    const inner = makeJar(join(jars, 'inner'), 'inner-lib-2.0.jar', { 'META-INF/maven/org.example/inner-lib/pom.properties': 'groupId=org.example\nartifactId=inner-lib\nversion=2.0.1\n' });
    const outerDir = join(jars, 'outer-content');
    mkdirSync(join(outerDir, 'BOOT-INF', 'lib'), { recursive: true });
    execFileSync('cp', [inner, join(outerDir, 'BOOT-INF', 'lib', 'inner-lib-2.0.jar')]);
    mkdirSync(join(outerDir, 'BOOT-INF', 'classes'), { recursive: true });
    writeFileSync(join(outerDir, 'BOOT-INF', 'classes', 'x.txt'), 'x');
    const outer = join(jars, 'boot-app-1.0.jar');
    execFileSync('jar', ['--create', '--file', outer, '-C', outerDir, '.']);
    const answers = await probe([
      ['scanLocation', `jar:file:${outer}!/BOOT-INF/lib/inner-lib-2.0.jar!/`, 'inner-lib-2.0.jar'],
      ['scanLocation', `jar:nested:${outer}/!BOOT-INF/lib/inner-lib-2.0.jar!/`, 'inner-lib-2.0.jar'],
      ['scanLocation', `jar:file:${outer}!/BOOT-INF/classes!/`, 'boot-app-1.0.jar'],
      ['scanLocation', `file:${jars}/`, 'nested'],
      ['scanLocation', `file:${outer}`, 'boot-app-1.0.jar'],
    ]);
    const innerLib = { components: [{ componentName: 'inner-lib', componentVersion: '2.0.1', sourceName: 'inner-lib-2.0.jar', groupId: 'org.example' }], manifestClassPath: [] };
    const bootApp = { components: [{ componentName: 'boot-app', componentVersion: '1.0', sourceName: 'boot-app-1.0.jar', groupId: null }], manifestClassPath: [] };
    assert.deepEqual(answers, [innerLib, innerLib, bootApp, null, bootApp]);
  });

  test('tags combine CRS_TAGS, the system property and the agent option, later winning; invalid tags are skipped', async () => {
    const answers = (await probe([
      ['tags', 'team=core;env=dev', 'env=prod;region=eu-west-1', null],
      ['tags', 'a=1', 'b=2', 'a=3;c=x y:z/@w'],
      ['tags', ' spaced = v ;;', null, null],
      ['tags', '1bad=x;good=ok;noequals;bad-value=a,b', null, null],
      ['tags', `k=${'v'.repeat(257)}`, `${'k'.repeat(129)}=v`, null],
      ['tags', null, null, null],
    ])) as { tags: Record<string, string>; problems: string[] }[];
    assert.deepEqual(answers.map((answer) => answer.tags), [
      { team: 'core', env: 'prod', region: 'eu-west-1' },
      { a: '3', b: '2', c: 'x y:z/@w' },
      { spaced: 'v' },
      { good: 'ok' },
      {},
      {},
    ]);
    assert.equal(answers[0].problems.length, 0);
    assert.equal(answers[3].problems.length, 3);
    assert.match(answers[3].problems[0], /skipping tag '1bad' from CRS_TAGS: a tag key starts with a letter/);
    assert.match(answers[3].problems[1], /skipping tag 'noequals' from CRS_TAGS: expected key=value/);
    assert.match(answers[3].problems[2], /skipping tag 'bad-value' from CRS_TAGS: a tag value is up to 256/);
    assert.equal(answers[4].problems.length, 2);
  });

  test('options come from the agent argument, else JVMLENS_AGENT_* variables, else defaults', async () => {
    const defaults = { gateway: 'http://127.0.0.1:8080', apiKey: null, flushMs: 1000, heartbeatMs: 30000, stopWaitMs: 3000, codeRefreshMs: 86400000, maxBatches: 256, sendEnvValues: 'false', tags: null, methods: 'loaded', problems: [] };
    await table('options', [
      { input: [null], expected: defaults },
      { input: ['methods=called'], expected: { ...defaults, methods: 'called' } },
      { input: ['', 'JVMLENS_AGENT_METHODS', 'called'], expected: { ...defaults, methods: 'called' } },
      { input: ['methods=loaded', 'JVMLENS_AGENT_METHODS', 'called'], expected: defaults },
      { input: ['methods=all'], expected: { ...defaults, problems: ["ignoring methods 'all' from agent option: expected called or loaded"] } },
      { input: ['', 'JVMLENS_AGENT_CODE_REFRESH_MS', '3600000'], expected: { ...defaults, codeRefreshMs: 3600000 } },
      { input: ['codeRefreshMs=10'], expected: { ...defaults, problems: ["ignoring codeRefreshMs '10' from agent option: expected an integer from 1000 to 2592000000"] } },
      {
        input: ['gateway=http://gw:8080/,apiKey=jvl_a-b_c,flushMs=250,tags=team=core;env=prod', 'JVMLENS_AGENT_GATEWAY', 'http://env:1', 'JVMLENS_AGENT_FLUSH_MS', '5000'],
        expected: { ...defaults, gateway: 'http://gw:8080', apiKey: 'jvl_a-b_c', flushMs: 250, tags: 'team=core;env=prod' },
      },
      {
        input: ['', 'JVMLENS_AGENT_GATEWAY', 'https://env:8443', 'JVMLENS_AGENT_API_KEY', 'k', 'JVMLENS_AGENT_FLUSH_MS', '5000', 'JVMLENS_AGENT_SEND_ENV_VALUES', 'true'],
        expected: { ...defaults, gateway: 'https://env:8443', apiKey: 'k', flushMs: 5000, sendEnvValues: 'true' },
      },
      {
        input: ['gateway=ftp://x,flushMs=fast,heartbeatMs=1,tags=a=1,b=2,verbose'],
        expected: {
          ...defaults,
          tags: 'a=1',
          problems: [
            "ignoring gateway 'ftp://x' from agent option: expected an http:// or https:// URL",
            "ignoring flushMs 'fast' from agent option: expected an integer from 10 to 3600000",
            "ignoring heartbeatMs '1' from agent option: expected an integer from 100 to 86400000",
            "ignoring unknown agent option 'b' (options: gateway, apiKeyFile, apiKey, flushMs, heartbeatMs, stopWaitMs, codeRefreshMs, maxBatches, sendEnvValues, tags, libDirs, methods; separate tags with '+' or ';': tags=k1=v1+k2=v2)",
            "ignoring agent option 'verbose': expected name=value",
          ],
        },
      },
    ]);
  });

  test('the key comes from apiKeyFile (or its variable), and no message ever shows a key', async () => {
    const keys = join(dir, 'keys');
    mkdirSync(keys, { recursive: true });
    writeFileSync(join(keys, 'agent.key'), 'jvl_secret_from_file\nsecond line ignored\n');
    writeFileSync(join(keys, 'empty.key'), '\n');
    const defaults = { gateway: 'http://127.0.0.1:8080', apiKey: null, flushMs: 1000, heartbeatMs: 30000, stopWaitMs: 3000, codeRefreshMs: 86400000, maxBatches: 256, sendEnvValues: 'false', tags: null, methods: 'loaded', problems: [] };
    await table('options', [
      { input: [`apiKeyFile=${join(keys, 'agent.key')}`], expected: { ...defaults, apiKey: 'jvl_secret_from_file' } },
      { input: ['', 'JVMLENS_AGENT_API_KEY_FILE', join(keys, 'agent.key')], expected: { ...defaults, apiKey: 'jvl_secret_from_file' } },
      { input: [`apiKeyFile=${join(keys, 'empty.key')}`], expected: { ...defaults, problems: [`ignoring apiKeyFile '${join(keys, 'empty.key')}' from agent option: its first line is empty`] } },
      { input: [`apiKeyFile=${join(keys, 'missing.key')}`], expected: { ...defaults, problems: [`ignoring apiKeyFile '${join(keys, 'missing.key')}' from agent option: cannot read it (NoSuchFileException)`] } },
      // A mistyped option name with a key in it is reported by name only.
      { input: ['apikey=jvl_do_not_print'], expected: { ...defaults, problems: ["ignoring unknown agent option 'apikey' (options: gateway, apiKeyFile, apiKey, flushMs, heartbeatMs, stopWaitMs, codeRefreshMs, maxBatches, sendEnvValues, tags, libDirs, methods; separate tags with '+' or ';': tags=k1=v1+k2=v2)"] } },
    ]);
  });

  test("tags separated by '+' need no ';', which start scripts that eval the JVM options would cut", async () => {
    const answers = (await probe([['tags', null, null, 'env=test+team=web'], ['tags', 'a=1+b=2', null, 'c=3;d=4+e=5']])) as { tags: Record<string, string>; problems: string[] }[];
    assert.deepEqual(answers.map((answer) => answer.tags), [{ env: 'test', team: 'web' }, { a: '1', b: '2', c: '3', d: '4', e: '5' }]);
    assert.deepEqual(answers.map((answer) => answer.problems), [[], []]);
  });

  test('JSON strings are escaped so any string survives the round trip', async () => {
    const strings = ['plain', 'quote " and backslash \\', 'controls \u0000\u0001\u001f\n\r\t\b\f', 'unicode ünï 😀 \u2028 中文', ''];
    const answers = await probe(strings.map((value) => ['json', value]));
    assert.deepEqual(answers, strings);
  });

  test("a class's methods go in one code item; fields over the service's limits are left out, not the batch", async () => {
    type Event = { type: string; vmId: string; time: number; items: { sourceName: string; className: string; methodNames: string[] }[] };
    const events = (batch: string) => JSON.parse(`[${batch}]`) as Event[];
    const overLimit = 'é'.repeat(513); // 513 characters, 1,026 UTF-8 bytes: over the service's 1,024
    const [one, noClass] = (await probe([['codeEvents', '1', 'app.jar', 'p/A', 'run()', overLimit, 'get(int)'], ['codeEvents', '1', 'app.jar', overLimit, 'run()']])) as string[][];
    assert.deepEqual(one.map(events), [[{ type: 'code', vmId: 'vm-1', time: 1_700_000_000_000, items: [{ sourceName: 'app.jar', className: 'p/A', methodNames: ['run()', 'get(int)'] }] }]]);
    assert.deepEqual(noClass, []);

    const [many] = (await probe([['codeEvents', '3000', 'lib.jar', 'p/C', ...Array.from({ length: 30 }, (_, m) => `method${m}(java.lang.String, java.util.Map)`)]])) as string[][];
    assert.ok(many.length > 1, `3,000 classes of 30 methods make several batches, got ${many.length}`);
    const classes: string[] = [];
    for (const batch of many) {
      assert.ok(Buffer.byteLength(batch) < 512 * 1024 + 4096, `a batch stays near 512 KiB: ${Buffer.byteLength(batch)}`);
      for (const event of events(batch)) {
        assert.ok(event.items.length <= 1000);
        for (const item of event.items) {
          assert.equal(item.methodNames.length, 30);
          classes.push(item.className);
        }
      }
    }
    assert.deepEqual(classes, Array.from({ length: 3000 }, (_, i) => `p/C#${i}`));
  });

  test('cpuInfo comes from /proc/cpuinfo with the keys of interface §2.2', async () => {
    const x86 = [0, 1, 2, 3, 4, 5, 6, 7]
      .map((n) => `processor\t: ${n}\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Gold 6230\nphysical id\t: ${n >> 2}\ncore id\t\t: ${(n >> 1) & 1}\ncpu cores\t: 2\n`)
      .join('\n');
    const arm = [0, 1, 2].map((n) => `processor\t: ${n}\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n`).join('\n');
    await table('cpu', [
      { input: [x86], expected: { cpuInfo: { 'Number of Processors': 8, 'Number of Assigned Logical Cores': 4, 'CPU Vendor': 'GenuineIntel', 'CPU Model Name': 'Intel(R) Xeon(R) Gold 6230', 'Number of Physical Cores': 4 } } },
      { input: [arm], expected: { cpuInfo: { 'Number of Processors': 3, 'Number of Assigned Logical Cores': 4, 'CPU Vendor': 'ARM', 'CPU Model Name': '', 'Number of Physical Cores': 3 } } },
      { input: [''], expected: { cpuInfo: { 'Number of Processors': 4, 'Number of Assigned Logical Cores': 4, 'CPU Vendor': '', 'CPU Model Name': '', 'Number of Physical Cores': 4 } } },
    ]);
  });

  test('mainMethod comes from the launcher command', async () => {
    await table('mainMethod', [
      { input: ['com.example.App --port 8080'], expected: 'com.example.App.main' },
      { input: ['shop/com.example.shop.Main'], expected: 'com.example.shop.Main.main' },
      { input: [`${fixtureJar} arg`], expected: 'fixture.Shapes.main' },
      { input: [null, 'com.example.Modular'], expected: 'com.example.Modular.main' },
      { input: [''], expected: '' },
    ]);
  });

  test('the outbox drops the oldest code batches when full and counts them, never components', async () => {
    await table('outbox', [
      { input: ['2', '1000', 'a', 'b', 'c', 'd'], expected: { dropped: 2, kept: ['c', 'd'] } },
      { input: ['10', '5', 'aaa', 'bbb'], expected: { dropped: 1, kept: ['bbb'] } },
      { input: ['10', '5', 'aaaaaaaa'], expected: { dropped: 0, kept: ['aaaaaaaa'] } },
      // "!x" is a components batch: the oldest code goes first, components stay even past the bounds.
      { input: ['2', '1000', '!comp1', 'code1', 'code2', 'code3'], expected: { dropped: 2, kept: ['comp1', 'code3'] } },
      { input: ['2', '1000', '!comp1', '!comp2', '!comp3', 'code1'], expected: { dropped: 0, kept: ['comp1', 'comp2', 'comp3', 'code1'] } },
      { input: ['2', '1000', '!comp1', '!comp2', 'code1', 'code2'], expected: { dropped: 1, kept: ['comp1', 'comp2', 'code2'] } },
    ]);
  });
});

/** A JAR with the given entries and, when given, manifest attributes; returns its path. */
function makeJar(dir: string, name: string, entries: Record<string, string>, manifest?: string): string {
  const content = join(dir, `${name}.content`);
  mkdirSync(content, { recursive: true });
  for (const [path, text] of Object.entries(entries)) {
    mkdirSync(dirname(join(content, path)), { recursive: true });
    writeFileSync(join(content, path), text);
  }
  const jar = join(dir, name);
  const args = ['--create', '--file', jar];
  if (manifest !== undefined) {
    writeFileSync(join(dir, `${name}.mf`), manifest);
    args.push('--manifest', join(dir, `${name}.mf`));
  }
  execFileSync('jar', [...args, '-C', content, '.']);
  return jar;
}

/** Every method shape the reader must handle; Long and Double constants take two constant-pool slots. */
const SHAPES = `package fixture;

import java.util.List;
import java.util.Map;

public class Shapes<T extends Comparable<T>> implements Comparable<Shapes<T>> {
    static final long BIG = System.nanoTime() + (1L << 40);
    static final double HALF = Math.random() * 0.5;

    enum Kind { ROUND, SQUARE; Kind() {} Kind(int sides) {} }

    class Inner {
        Inner(String name) {}
        long area(double scale) { return (long) (BIG * scale * HALF); }
    }

    public Shapes() {}
    Shapes(int[] sizes, String... names) {}

    public int compareTo(Shapes<T> other) { return 0; }
    T first(List<? extends T> items, Map.Entry<String, int[][]> entry) { return items.get(0); }
    static void primitives(boolean z, byte b, char c, short s, int i, long j, float f, double d) {}
    Runnable task() { return () -> System.out.println(BIG); }
    void ünïcödé() {}
    native void nativeMethod(Object[] objects);

    public static void main(String[] args) {}
}
`;
