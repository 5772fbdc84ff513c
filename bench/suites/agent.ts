// What the Java agent costs the application: loading 20,000 classes from 20 JARs (with pom.properties) without
// the agent, with methods=loaded and with methods=called; the time a call of an already-called method adds; and
// how much later a short-lived JVM exits. Runs alternate between the modes, each against a running jvmlens
// (at nice 19: on this machine it shares the cores that the application would have to itself).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchOptions, BenchRow, Suite } from '../harness.ts';
import { progress, rssMb, wanted } from '../harness.ts';
import { repositoryRoot } from '../results.ts';
import { startJvmlens } from '../service.ts';
import { round1, summarize } from '../stats.ts';

const ROWS = {
  loading: 'agent: class loading, 20 JARs',
  call: 'agent: a call of an already-called method (methods=called)',
  exit: 'agent: a short-lived JVM, start to exit',
};

/** 'transformer': an agent whose ClassFileTransformer does nothing, the floor any such agent pays (the JVM's hook). */
const MODES = ['none', 'transformer', 'loaded', 'called'] as const;
type Mode = (typeof MODES)[number];

function hasJdk(): boolean {
  return spawnSync('javac', ['-version'], { stdio: 'ignore' }).status === 0;
}

/**
 * The application: `jars` JARs of 1,000 classes (8 methods each) with a pom.properties each, and a main that
 * loads and initialises every class, calls m0 of each, and prints the milliseconds that took. Built once per size.
 */
function buildApp(jars: number): { classPath: string; main: string } {
  const dir = join(tmpdir(), `jvmlens-bench-agent-${jars}`);
  const classPath = [...Array.from({ length: jars }, (_, j) => join(dir, `lib${j}-1.${j}.0.jar`)), join(dir, 'app.jar')].join(':');
  // The cache holds the generated JARs; app.jar (the main, the micro-benchmark, the do-nothing agent) is rebuilt.
  if (existsSync(join(dir, `lib${jars - 1}-1.${jars - 1}.0.jar`))) {
    buildMain(dir, jars);
    return { classPath, main: 'app.Load' };
  }
  rmSync(dir, { recursive: true, force: true });
  progress(`agent: compiling ${jars * 1000} classes (once, cached in ${dir})`);
  for (let j = 0; j < jars; j++) {
    const src = join(dir, 'src', `lib${j}`);
    mkdirSync(join(src, `lib${j}`), { recursive: true });
    const classes = Array.from({ length: 1000 }, (_, c) => `  public static class C${c} { ${Array.from({ length: 8 }, (_, m) => `public static int m${m}(int x) { return x * ${m + 1} + ${c}; }`).join(' ')} }`);
    writeFileSync(join(src, `lib${j}`, 'L.java'), `package lib${j};\npublic class L {\n${classes.join('\n')}\n}\n`);
    const out = join(src, 'classes');
    execFileSync('javac', ['-d', out, join(src, `lib${j}`, 'L.java')]);
    mkdirSync(join(out, 'META-INF', 'maven', 'org.bench', `lib${j}`), { recursive: true });
    writeFileSync(join(out, 'META-INF', 'maven', 'org.bench', `lib${j}`, 'pom.properties'), `groupId=org.bench\nartifactId=lib${j}\nversion=1.${j}.0\n`);
    execFileSync('jar', ['--create', '--file', join(dir, `lib${j}-1.${j}.0.jar`), '-C', out, '.']);
  }
  buildMain(dir, jars);
  return { classPath, main: 'app.Load' };
}

/** app.jar: the main that loads every class, the call micro-benchmark, the short-lived JVM and the do-nothing agent. */
function buildMain(dir: string, jars: number): void {
  const app = join(dir, 'src', 'app');
  mkdirSync(join(app, 'app'), { recursive: true });
  writeFileSync(join(app, 'app', 'Load.java'), `package app;
public class Load {
    public static void main(String[] args) throws Exception {
        long start = System.nanoTime();
        long sum = 0;
        for (int j = 0; j < ${jars}; j++) {
            for (int c = 0; c < 1000; c++) {
                Class<?> type = Class.forName("lib" + j + ".L$C" + c);
                sum += (int) type.getMethod("m0", int.class).invoke(null, c);
            }
        }
        System.out.println((System.nanoTime() - start) / 1_000_000 + " " + sum);
    }
}
`);
  writeFileSync(join(app, 'app', 'Calls.java'), `package app;
public class Calls {
    static int f(int x) { return x + 1; }
    public static void main(String[] args) {
        int total = 0;
        for (int round = 0; round < 5; round++) {
            long start = System.nanoTime();
            for (int i = 0; i < 200_000_000; i++) total = f(total);
            if (round == 4) System.out.println((System.nanoTime() - start) / 200_000_000.0 + " " + total);
        }
    }
}
`);
  writeFileSync(join(app, 'app', 'Hello.java'), 'package app;\npublic class Hello { public static void main(String[] args) { System.out.println("hello"); } }\n');
  writeFileSync(join(app, 'app', 'NoopAgent.java'), `package app;
public class NoopAgent {
    public static void premain(String argument, java.lang.instrument.Instrumentation instrumentation) {
        instrumentation.addTransformer(new java.lang.instrument.ClassFileTransformer() {});
    }
}
`);
  execFileSync('javac', ['-d', join(app, 'classes'), join(app, 'app', 'Load.java'), join(app, 'app', 'Calls.java'), join(app, 'app', 'Hello.java'), join(app, 'app', 'NoopAgent.java')]);
  writeFileSync(join(app, 'manifest.txt'), 'Premain-Class: app.NoopAgent\n');
  execFileSync('jar', ['--create', '--file', join(dir, 'app.jar'), '--manifest', join(app, 'manifest.txt'), '-C', join(app, 'classes'), '.']);
}

function agentArgs(mode: Mode, agentJar: string, appJar: string, gateway: string, apiKey: string): string[] {
  if (mode === 'none') return [];
  if (mode === 'transformer') return [`-javaagent:${appJar}`];
  return [`-javaagent:${agentJar}=gateway=${gateway},apiKey=${apiKey},methods=${mode}`];
}

const label = (mode: Mode): string => (mode === 'none' ? 'no agent' : mode === 'transformer' ? 'a do-nothing transformer agent (the floor)' : `methods=${mode}`);

/** One JVM run: its stdout and the wall-clock milliseconds from spawn to exit. */
function runJvm(args: string[]): { stdout: string; wallMs: number } {
  const started = performance.now();
  const result = spawnSync('java', args, { encoding: 'utf8' });
  const wallMs = performance.now() - started;
  if (result.status !== 0) throw new Error(`java ${args.join(' ')} failed:\n${result.stderr}`);
  return { stdout: result.stdout, wallMs };
}

const percent = (value: number, base: number): number => round1((value / base - 1) * 100);

export const suite: Suite = {
  name: 'agent',
  rows: Object.values(ROWS),
  async run(options: BenchOptions): Promise<BenchRow[]> {
    if (!hasJdk()) {
      progress('agent: skipped, no JDK (javac) on PATH');
      return [];
    }
    const root = repositoryRoot();
    execFileSync('bash', [join(root, 'agent', 'build.sh')], { stdio: 'ignore' });
    const agentJar = join(root, 'agent', 'build', 'jvmlens-agent.jar');
    const jars = options.quick ? 2 : 20;
    const runs = options.quick ? 2 : 7;
    const { classPath, main } = buildApp(jars);
    const dataDir = join(tmpdir(), `jvmlens-bench-agent-data-${process.pid}`);
    const service = await startJvmlens({ dataDir, workers: 1 });
    // The service shares the two cores here; in a fleet it runs elsewhere. At nice 19 (every thread of it) it
    // takes only the CPU the JVM leaves, so the rows measure what the agent costs the application.
    for (const thread of readdirSync(`/proc/${service.pid}/task`)) spawnSync('renice', ['-n', '19', '-p', thread], { stdio: 'ignore' });
    const rows: BenchRow[] = [];
    try {
      const size = `${jars * 1000} classes, ${jars} JARs, ${runs} runs per mode`;
      const appJar = classPath.split(':').at(-1)!;
      if (wanted(options, 'agent', ROWS.loading)) {
        const loadMs: Record<Mode, number[]> = { none: [], transformer: [], loaded: [], called: [] };
        const wallMs: Record<Mode, number[]> = { none: [], transformer: [], loaded: [], called: [] };
        // Modes interleaved, so a change in the machine's load hits all three alike.
        for (let run = 0; run < runs; run++) {
          for (const mode of MODES) {
            const result = runJvm([...agentArgs(mode, agentJar, appJar, service.gatewayUrl, service.apiKey), '-cp', classPath, main]);
            loadMs[mode].push(Number(result.stdout.split(' ')[0]));
            wallMs[mode].push(result.wallMs);
          }
        }
        const median = (values: number[]) => summarize(values).p50;
        for (const mode of MODES) {
          const load = summarize(loadMs[mode]);
          rows.push({
            suite: 'agent', name: `${ROWS.loading}, ${label(mode)}`, size,
            rate: round1((jars * 1000) / (load.p50 / 1000)), unit: 'items/s', meanMs: round1(load.mean), p50Ms: round1(load.p50), p99Ms: round1(load.max), rssMb: rssMb(),
            extra: mode === 'none' ? { wallP50Ms: round1(median(wallMs.none)) } : {
              loadingCostPercent: percent(load.p50, median(loadMs.none)),
              wallP50Ms: round1(median(wallMs[mode])),
              wallCostPercent: percent(median(wallMs[mode]), median(wallMs.none)),
            },
          });
        }
      }
      if (wanted(options, 'agent', ROWS.call)) {
        const nsPerCall: Record<'none' | 'called', number[]> = { none: [], called: [] };
        for (let run = 0; run < Math.min(runs, 3); run++) {
          for (const mode of ['none', 'called'] as const) {
            // Not inlined, so each iteration is a real call, and the probe runs on every one.
            const result = runJvm([...agentArgs(mode, agentJar, appJar, service.gatewayUrl, service.apiKey), '-XX:CompileCommand=quiet', '-XX:CompileCommand=dontinline,app.Calls::f', '-cp', appJar, 'app.Calls']);
            nsPerCall[mode].push(Number(result.stdout.split(' ')[0]));
          }
        }
        const none = summarize(nsPerCall.none).p50;
        const called = summarize(nsPerCall.called).p50;
        rows.push({
          suite: 'agent', name: ROWS.call, size: '200M calls of a method the JIT may not inline',
          rate: round1(1e9 / called), unit: 'ops/s', meanMs: round1(called / 1e6), p50Ms: round1(called / 1e6), p99Ms: round1(called / 1e6), rssMb: rssMb(),
          extra: { nsPerCallWithout: round1(none), nsPerCallWith: round1(called), addedNsPerCall: round1(called - none) },
        });
      }
      if (wanted(options, 'agent', ROWS.exit)) {
        const wall: Record<Mode, number[]> = { none: [], transformer: [], loaded: [], called: [] };
        for (let run = 0; run < runs; run++) {
          for (const mode of MODES) wall[mode].push(runJvm([...agentArgs(mode, agentJar, appJar, service.gatewayUrl, service.apiKey), '-cp', appJar, 'app.Hello']).wallMs);
        }
        for (const mode of MODES) {
          const summary = summarize(wall[mode]);
          rows.push({
            suite: 'agent', name: `${ROWS.exit}, ${label(mode)}`, size: `hello world, ${runs} runs`,
            rate: round1(1000 / summary.p50), unit: 'ops/s', meanMs: round1(summary.mean), p50Ms: round1(summary.p50), p99Ms: round1(summary.max), rssMb: rssMb(),
            extra: mode === 'none' ? {} : { addedMs: round1(summary.p50 - summarize(wall.none).p50) },
          });
        }
      }
    } finally {
      await service.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
    return rows;
  },
};
