// The process around the service (issue: hardening): ports it cannot have, flags it does not know, a key
// kept out of the process list, a signal while it starts.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { MAIN, request, runCli, startService, tempDir } from '../helpers/service.ts';

/** Runs `jvmlens ARGS` until it exits (or kills it after `timeoutMs`), with its output. */
function runUntilExit(args: string[], timeoutMs = 30_000): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

test('a second service on ports in use says so and exits non-zero, leaving the first one serving', async () => {
  const first = await startService();
  try {
    const gatewayPort = new URL(first.gatewayUrl).port;
    // Several at once: one exiting while its report threads still loaded their native modules died by a signal
    // now and then (a full suite's run) instead of exiting with the status that says why.
    const seconds = await Promise.all(Array.from({ length: 4 }, () => runUntilExit(['serve', '--gateway-port', gatewayPort, '--api-port', '0', '--data-dir', tempDir(), '--api-key', 'k2'])));
    for (const second of seconds) {
      assert.equal(second.code, 1, `exit ${second.code}, signal ${second.signal}: ${second.stderr.slice(-500)}`);
      assert.match(second.stderr, /address in use/);
    }
    const apiPort = new URL(first.apiUrl).port;
    const third = await runUntilExit(['serve', '--gateway-port', '0', '--api-port', apiPort, '--data-dir', tempDir(), '--api-key', 'k3']);
    assert.notEqual(third.code, 0);
    assert.match(third.stderr, /address in use/);
    // Every health probe still reaches the first service.
    for (let i = 0; i < 20; i++) assert.equal((await fetch(`${first.gatewayUrl}/opthub-health`)).status, 200);
  } finally {
    await first.stop();
  }
});

test('an unknown flag is refused with the nearest valid one, exit status 2', async () => {
  for (const args of [['serve', '--gatway-port', '9000'], ['--gatway-port', '9000', 'serve'], ['keys', 'list', '--data-dri', tempDir()], ['serve', 'extra']]) {
    const result = await runCli(args);
    assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
    assert.equal(result.stdout, '');
    if (args.includes('--gatway-port')) assert.match(result.stderr, /unknown option --gatway-port; did you mean --gateway-port\?/);
    if (args.includes('--data-dri')) assert.match(result.stderr, /did you mean --data-dir\?/);
    if (args.includes('extra')) assert.match(result.stderr, /unexpected argument 'extra'/);
  }
});

test('--api-key-file and JVMLENS_API_KEY_FILE take the key from a file, never from the command line', async () => {
  const dir = tempDir();
  const file = join(dir, 'key');
  writeFileSync(file, 'from-a-file-0123456789\n');
  for (const options of [{ args: ['--api-key-file', file] }, { env: { JVMLENS_API_KEY_FILE: file } }]) {
    const service = await startService({ ...options, noStaticKey: true });
    try {
      assert.equal((await request(`${service.apiUrl}/public/report/jvmInventory`, { key: 'from-a-file-0123456789' })).status, 200);
      assert.equal((await request(`${service.apiUrl}/public/report/jvmInventory`, { key: 'wrong' })).status, 401);
      assert.doesNotMatch(service.stdout() + service.stderr(), /from-a-file/);
    } finally {
      await service.stop();
    }
  }
  const missing = await runCli(['serve', '--api-key-file', join(dir, 'absent'), '--data-dir', dir]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /--api-key-file/);
});

test('a signal while the service starts stops it cleanly: exit 0, no start-up failure said', async () => {
  // A fleet large enough that its start-up (report threads, the CVE events index) is under way at the signal.
  const dataDir = tempDir();
  const seeded = await runCli(['seed', '--vms', '3000', '--data-dir', dataDir]);
  assert.equal(seeded.code, 0, seeded.stderr);
  // At once (the start-up then still writes and warms its threads up: Node's default action killed it), and later
  // (report threads loading their modules, or reading LMDB for the CVE matches: terminated then, they aborted it).
  for (const delayMs of [0, 0, 5, 5, 20, 20, 60, 60]) {
    const child = spawn(process.execPath, [MAIN, 'serve', '--data-dir', dataDir, '--gateway-port', '0', '--api-port', '0', '--shutdown-grace-ms', '0', '--api-key', 'k_0123456789'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let signalled = false;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      // Its ports are open, and its signals handled: the start-up steps after them are running.
      if (!signalled && stdout.includes('jvmlens: api')) {
        signalled = true;
        setTimeout(() => child.kill('SIGTERM'), delayMs);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
    assert.equal(code, 0, `SIGTERM after ${delayMs} ms: exit ${code} ${signal}\n${stderr}`);
    assert.match(stderr, /"message":"shutting down","signal":"SIGTERM"/);
    assert.doesNotMatch(stderr, /start-up failed|cannot start|Terminating worker thread/, stderr);
  }
});
