// A JVM that keeps running its code: the agent reports a class once, when it loads, and again every
// codeRefreshMs, so the service's lastSeen follows the VM. Otherwise a server up for longer than a code
// report's `from` (30 days by default) would have all its code missing from the report, as if dead.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runReport } from '../helpers/reports.ts';
import { startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';
import { buildAgent, compileJar, javaSkipReason, javaagent, requireJava, runJava } from './java.ts';
import type { JavaRun } from './java.ts';

const skip = javaSkipReason();

const MAIN = `package lasting;

public class Main {
    public static void main(String[] args) throws Exception {
        long loaded = System.currentTimeMillis();
        int answer = Held.answer();
        Thread.sleep(3500);
        System.out.println(answer + " " + loaded);
    }
}

class Held {
    static int answer() { return 42; }
}
`;

describe('a long-running JVM', { skip }, () => {
  let dir = '';
  let service: RunningService | undefined;
  const runs = new Map<string, JavaRun>();

  before(async () => {
    requireJava();
    buildAgent();
    dir = tempDir('jvmlens-long-running-');
    service = await startService();
    // One JVM per mode, each with its own JAR, so that their code records stay apart.
    await Promise.all(['loaded', 'called'].map(async (methods) => {
      const app = compileJar(join(dir, methods), { 'lasting/Main.java': MAIN }, { jarName: `lasting-${methods}.jar` });
      const options = { gateway: service!.gatewayUrl, apiKey: service!.apiKey, flushMs: 100, codeRefreshMs: 1000, stopWaitMs: 20000, methods };
      runs.set(methods, await runJava([javaagent(options), '-cp', app, 'lasting.Main']));
    }));
  });

  after(async () => {
    await service?.stop();
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  for (const methods of ['loaded', 'called']) {
    test(`methods=${methods}: code reported once is seen again while the VM runs, lastSeen moving, firstSeen staying`, async () => {
      const run = runs.get(methods)!;
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(run.agentLines.filter((line) => !line.includes('vmId=')), [], 'codeRefreshMs is a known option');
      const loaded = Number(/^42 (\d+)\n$/.exec(run.stdout)![1]);
      // Seen since two seconds after the class loaded and ran: only a refresh can have reported it then.
      const from = new Date(loaded + 2000).toISOString();
      const filter = [`sourceName:lasting-${methods}.jar`, 'className:lasting/Held'];
      const { items } = await runReport(service!, 'codeInventory', { filter, from, to: new Date(Date.now() + 60_000).toISOString() });
      // methods=called: the constructor never ran, so it is not reported, then or again.
      assert.deepEqual(items.map((item) => item.methodName).sort(), methods === 'loaded' ? ['<init>()', 'answer()'] : ['answer()'], JSON.stringify(items));
      for (const item of items) {
        assert.ok(Date.parse(`${item.firstSeen}Z`) < loaded + 2000, `firstSeen stays the first sighting: ${JSON.stringify(item)}`);
        assert.ok(Date.parse(`${item.lastSeen}Z`) >= loaded + 2000, `lastSeen is a refresh's: ${JSON.stringify(item)}`);
      }
    });
  }
});
