// methods=called: a real JVM (-Xverify:all, so the JVM checks every rewritten class) calls half of its
// methods, among them the constructs whose code offsets the probe moves (switch padding, handlers, frames
// with uninitialized objects, loops at offset 0, old class-file versions); the code report then holds
// exactly the methods that ran, each with the time of its first call. A method whose code carries type
// annotations keeps its code, is counted on standard error, and is not reported. A class whose loader does
// not delegate to the application class loader (where the probe class is) keeps its code, is counted, and is
// reported as methods=loaded reports it, so that its JAR's code counts as run (USED).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runReport } from '../helpers/reports.ts';
import { startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';
import { buildAgent, compileJar, javaSkipReason, javaagent, requireJava, runJava } from './java.ts';
import type { JavaRun } from './java.ts';

const skip = javaSkipReason();

/** Forty methods per class; main calls the even ones. */
const METHODS = 40;
const GENERATED = `package half;

public class Generated {
${Array.from({ length: METHODS }, (_, i) => `    public static int m${i}(int x) { return x + ${i}; }`).join('\n')}

    public static int callEven() {
        int sum = 0;
${Array.from({ length: METHODS / 2 }, (_, k) => `        sum += m${2 * k}(${k});`).join('\n')}
        return sum;
    }
}
`;

const TRICKY = `package half;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntUnaryOperator;

public class Tricky {
    @Retention(RetentionPolicy.RUNTIME) @Target(ElementType.TYPE_USE) @interface Checked {}

    interface Shape { double area(); default String label() { return "shape " + area(); } static Shape unit() { return () -> 1; } }
    record Box(int w, int h) { Box { if (w < 0) throw new IllegalArgumentException(); } int size() { return w * h; } }
    enum Mode { FAST, SLOW; Mode other() { return this == FAST ? SLOW : FAST; } }

    private final List<String> seen = new ArrayList<>();

    Tricky() { this(choose(true)); }
    Tricky(String first) { seen.add(first); }
    Tricky(int unused, String never) { this(never); }

    static String choose(boolean flag) { return flag ? "a" : "b"; }

    // tableswitch and lookupswitch: their padding depends on the offset of the instruction.
    static int dense(int x) { switch (x) { case 0: return 3; case 1: return 5; case 2: return 7; case 3: return 11; default: return -1; } }
    static int sparse(int x) { switch (x) { case -100: return 1; case 7: return 2; case 100000: return 3; default: return 0; } }
    static String strings(String s) { switch (s) { case "alpha": return "A"; case "beta": return "B"; default: return "?"; } }

    // A new object on the stack across a branch: its frame names Uninitialized(offset of the new).
    static StringBuilder uninitialized(boolean flag) { return new StringBuilder(flag ? "yes" : "no"); }
    static Box boxed(int w) { return new Box(w > 0 ? w : -w, w < 10 ? 1 : 2); }

    // A loop whose head is offset 0, and handlers whose ranges start at 0.
    static int loopAtStart(int n) { while (n > 10) n -= 3; return n; }
    static int handlers(String s) {
        try { return Integer.parseInt(s); }
        catch (NumberFormatException e) { return -1; }
        finally { if (s == null) System.out.print(""); }
    }
    synchronized int locked(int x) { synchronized (this) { return x * 2; } }
    static long wide(long a, double b, int... rest) { long total = a + (long) b; for (int r : rest) total += r; return total; }
    static int lambdas(int x) { IntUnaryOperator twice = y -> y * 2; return twice.applyAsInt(x); }

    // Type annotations in the code: offsets the probe would have to move in a table it does not rewrite.
    static int annotated(Object o) { @Checked String s = (@Checked String) o; return s.length(); }

    static int neverDense(int x) { switch (x) { case 0: return 1; case 1: return 2; case 2: return 4; default: return 0; } }
    static StringBuilder neverUninitialized(boolean flag) { return new StringBuilder(flag ? "x" : "y"); }
    int neverLocked() { synchronized (this) { return seen.size(); } }

    public static int exercise() {
        Tricky t = new Tricky();
        int sum = dense(2) + sparse(100000) + strings("beta").length() + uninitialized(true).length() + boxed(-4).size();
        sum += loopAtStart(25) + handlers("12") + handlers("x") + t.locked(3) + (int) wide(1, 2.5, 3, 4) + lambdas(5);
        sum += (int) Shape.unit().area() + Shape.unit().label().length() + Mode.FAST.other().ordinal() + annotated("four");
        return sum;
    }
}
`;

/** Compiled with --release 8: a version-52 class file, whose frames and offsets the probe must move as well. */
const OLD = `package half;

public class Old {
    static int legacy(int x) { switch (x) { case 1: return 10; case 5: return 50; default: return x > 3 ? new Integer(x) : 0; } }
    static int unusedLegacy() { return 1; }
    public static int run() { return legacy(5) + legacy(4); }
}
`;

const MAIN = `package half;

import java.net.URL;
import java.net.URLClassLoader;

public class Main {
    public static void main(String[] args) throws Exception {
        int sum = Generated.callEven() + Tricky.exercise() + Old.run();
        // A loader whose parent is the bootstrap loader cannot see the probe: its class must run unchanged.
        try (URLClassLoader isolated = new URLClassLoader(new URL[] {Main.class.getProtectionDomain().getCodeSource().getLocation()}, null)) {
            sum += (int) isolated.loadClass("half.Isolated").getMethod("run").invoke(null);
        }
        long before = System.currentTimeMillis();
        Thread.sleep(1200);
        // First called only now: its first-call time is at least 1.2 s after the others'.
        System.out.println(sum + " " + Late.call() + " " + before);
    }
}

class Late {
    static int call() { return 7; }
    static int never() { return 8; }
}
`;

const ISOLATED = 'package half;\n\npublic class Isolated {\n    public static int run() { return 3; }\n}\n';

type Json = Record<string, any>;

describe('methods=called', { skip }, () => {
  let dir = '';
  let service: RunningService | undefined;
  let run: JavaRun;
  let items: Json[] = [];

  before(async () => {
    requireJava();
    buildAgent();
    dir = tempDir('jvmlens-called-');
    const old = join(dir, 'old');
    compileJar(old, { 'half/Old.java': OLD }, { jarName: 'old.jar' });
    // Recompile Old for Java 8 into the same classes folder the app JAR is made from.
    execFileSync('javac', ['--release', '8', '-nowarn', '-d', join(dir, 'app', 'classes'), join(old, 'src', 'half', 'Old.java')], { stdio: ['ignore', 'ignore', 'pipe'] });
    const app = compileJar(join(dir, 'app'), { 'half/Generated.java': GENERATED, 'half/Tricky.java': TRICKY, 'half/Main.java': MAIN, 'half/Isolated.java': ISOLATED }, { jarName: 'half-app-1.0.jar', classPath: [join(dir, 'app', 'classes')] });
    service = await startService();
    run = await runJava(['-Xverify:all', javaagent({ gateway: service.gatewayUrl, apiKey: service.apiKey, methods: 'called', flushMs: 100, stopWaitMs: 20000 }), '-cp', app, 'half.Main']);
    const report = await runReport(service, 'codeInventory', { filter: ['sourceName:half-app-1.0.jar'], from: '1d' });
    items = report.items;
  });

  after(async () => {
    await service?.stop();
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  test('the application runs as without the agent; the method and the class left without probes are counted', () => {
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^\d+ 7 \d+\n$/);
    assert.ok(!run.stderr.includes('VM warning'), `no JVM warning (the probe is not on the bootstrap class path): ${run.stderr}`);
    const lines = run.agentLines.filter((line) => !line.includes('vmId='));
    assert.equal(lines.length, 2, run.stderr);
    assert.match(lines.find((line) => line.includes('method(s)')) ?? '', /left 1 method\(s\) without a probe .* first in half\/Tricky/);
    assert.match(lines.find((line) => line.includes('class(es)')) ?? '', /left 1 class\(es\) without probes .* first: half\/Isolated/);
  });

  test('exactly the methods that ran are reported', () => {
    const methods = (className: string) => items.filter((item) => item.className === className).map((item) => item.methodName as string).sort();
    const even = Array.from({ length: METHODS / 2 }, (_, k) => `m${2 * k}(int)`);
    assert.deepEqual(methods('half/Generated'), ['callEven()', ...even].sort());
    assert.deepEqual(methods('half/Tricky'), [
      '<init>()', '<init>(java.lang.String)', 'boxed(int)', 'choose(boolean)', 'dense(int)', 'exercise()', 'handlers(java.lang.String)',
      'lambda$lambdas$0(int)', 'lambdas(int)', 'locked(int)', 'loopAtStart(int)', 'sparse(int)', 'strings(java.lang.String)', 'uninitialized(boolean)', 'wide(long, double, int[])',
    ].sort());
    assert.deepEqual(methods('half/Tricky$Box'), ['<init>(int, int)', 'size()']);
    assert.deepEqual(methods('half/Tricky$Shape'), ['label()', 'lambda$unit$0()', 'unit()']);
    assert.deepEqual(methods('half/Tricky$Mode'), ['$values()', '<init>(java.lang.String, int)', 'other()']);
    assert.deepEqual(methods('half/Old'), ['legacy(int)', 'run()']);
    assert.deepEqual(methods('half/Late'), ['call()']);
    assert.deepEqual(methods('half/Main'), ['main(java.lang.String[])']);
    assert.deepEqual(methods('half/Isolated'), ['<init>()', 'run()'], 'its loader cannot see the probe: left as it is, reported with its declared methods');
  });

  test('firstSeen is the time of the first call', () => {
    const time = (className: string, methodName: string) => Date.parse(`${items.find((item) => item.className === className && item.methodName === methodName)!.firstSeen}Z`);
    const before = Number(/ (\d+)\n$/.exec(run.stdout)![1]);
    assert.ok(time('half/Generated', 'm0(int)') <= before, 'called before the sleep');
    assert.ok(time('half/Late', 'call()') >= before + 1200, 'called after the sleep');
  });
});
