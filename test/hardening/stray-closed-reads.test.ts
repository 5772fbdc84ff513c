// A read refused by a closed store (StoreClosedError) that nothing handles does not end the process: a cluster
// node restarting in process shuts one service down and starts another, and a read the first left behind would
// otherwise end the node. Any other unhandled rejection still ends it. Each case runs in a process of its own,
// as `jvmlens serve` does: the test runner counts an unhandled rejection in its own process as a failure.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { tempDir } from '../helpers/service.ts';

/** A built module's URL, as a string in the child's script (the tests run from dist/, as npm test builds them). */
const module = (path: string): string => JSON.stringify(new URL(path, import.meta.url).href);

/** The start of each case's script: `strayThenFault` leaves a stray read and then a real fault unhandled, 200 ms apart. */
const STRAY_THEN_FAULT = `
const logger = { info() {}, warn: (message) => console.log('warn: ' + message), error: (message) => console.log('error: ' + message) };
const { StoreClosedError } = await import(${module('../../src/storage/closing-reads.js')});
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
async function strayThenFault() {
  Promise.reject(new StoreClosedError('the store in /tmp/x', 'get'));
  await sleep(200);
  console.log('alive after the stray read');
  Promise.reject(new Error('a real fault'));
  await sleep(1000);
  console.log('alive after the fault');
}
`;

/** Runs `script` as a module file: the service's worker threads take the process's flags, which may not include `-e`. */
function runScript(script: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const file = join(tempDir('jvmlens-stray-reads-script-'), 'script.mjs');
  writeFileSync(file, script);
  return new Promise((resolve) => {
    execFile(process.execPath, [file], { timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : (error as NodeJS.ErrnoException & { code: number | null }).code, stdout, stderr });
    });
  });
}

function assertStrayLoggedThenFaultEnded(run: { code: number | null; stdout: string; stderr: string }): void {
  assert.match(run.stdout, /warn: a read outlived its store's close/, run.stderr);
  assert.match(run.stdout, /alive after the stray read/, `the stray read ended the process: ${run.stderr}`);
  assert.doesNotMatch(run.stdout, /alive after the fault/);
  assert.notEqual(run.code, 0);
  assert.match(run.stderr, /a real fault/);
}

test('a running service logs a stray read of a closed store and goes on; any other unhandled rejection ends the process', async () => {
  const dataDir = tempDir('jvmlens-stray-reads-');
  const run = await runScript(`${STRAY_THEN_FAULT}
const { parseConfig } = await import(${module('../../src/config.js')});
const { startService } = await import(${module('../../src/service.js')});
const { config } = parseConfig(['--data-dir', ${JSON.stringify(dataDir)}, '--gateway-port', '0', '--api-port', '0', '--workers', '1', '--shutdown-grace-ms', '0'], {});
const service = await startService(config, logger);
await service.ready;
await strayThenFault();
await service.shutdown();
`);
  assertStrayLoggedThenFaultEnded(run);
});

test('between one service and the next in a process, a stray read is logged and any other unhandled rejection ends the process', async () => {
  const run = await runScript(`${STRAY_THEN_FAULT}
const { bridgeStrayReads } = await import(${module('../../src/cli/serve.js')});
bridgeStrayReads(logger);
await strayThenFault();
`);
  assertStrayLoggedThenFaultEnded(run);
});
