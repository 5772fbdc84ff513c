// The V8 flags `jvmlens serve` runs best with are read only when Node starts: every launcher this repository
// ships passes them, and a service started without them says so.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { missingServeFlags, SERVE_NODE_FLAGS } from '../../src/node-flags.ts';
import { MAIN, ROOT, startService, tempDir } from '../helpers/service.ts';

test('a flag counts as given on the command line or in NODE_OPTIONS, with the operator\'s own value', () => {
  assert.deepEqual(missingServeFlags([], ''), SERVE_NODE_FLAGS);
  assert.deepEqual(missingServeFlags(['--max-semi-space-size=32'], ''), []);
  assert.deepEqual(missingServeFlags([], '--max-old-space-size=4096 --max-semi-space-size=128'), []);
  assert.deepEqual(missingServeFlags(['--max-old-space-size=4096'], '--inspect'), SERVE_NODE_FLAGS);
});

test('npm start passes every flag', () => {
  const start = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.start;
  for (const flag of SERVE_NODE_FLAGS) assert.ok(start.includes(` ${flag} `), `npm start: ${start}`);
});

/** The service's output until it is ready, then stopped (its data directory removed). */
async function outputUntilReady(args: string[]): Promise<string> {
  const dataDir = tempDir();
  const child = spawn(process.execPath, [...args, MAIN, 'serve', '--data-dir', dataDir, '--gateway-port', '0', '--api-port', '0', '--api-key', 'test_node_flags_0123456789'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('jvmlens: ready')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${output}`)));
  });
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  rmSync(dataDir, { recursive: true, force: true });
  return output;
}

test('serve started without the flags warns, naming them; started with them, it does not', async () => {
  const without = await outputUntilReady([]);
  assert.match(without, /started without the flags jvmlens serve runs best with.*"add":"--max-semi-space-size=64"/);
  const withFlags = await outputUntilReady([...SERVE_NODE_FLAGS]);
  assert.doesNotMatch(withFlags, /started without the flags/);
  // The tests' own services get them too: their figures are the ones users get.
  const service = await startService();
  try {
    assert.doesNotMatch(service.stdout() + service.stderr(), /started without the flags/);
  } finally {
    await service.stop();
  }
});
