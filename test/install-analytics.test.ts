// `npm install` sends nothing about the installing organisation: swagger-ui-dist (the API's reference page)
// depends on @scarf/scarf, whose install script reports each install to scarf.sh unless the root package.json
// opts out. Scarf's own script is run here against a local server standing in for scarf.sh.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { ROOT } from './helpers/service.ts';

const run = promisify(execFile);

test("the install script of swagger-ui-dist's analytics finds the opt-out in package.json and sends nothing", async () => {
  const received: string[] = [];
  const server = createServer((request, response) => {
    received.push(`${request.method} ${request.url}`);
    response.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const report = join(ROOT, 'node_modules', '@scarf', 'scarf', 'report.js');
    const script = `require(${JSON.stringify(report)}).reportPostInstall().then(() => console.log('reported'), (error) => console.log('not reported: ' + error.message))`;
    // As npm runs an install script from the project's root; without the variables by which a user opts out.
    const env: NodeJS.ProcessEnv = { ...process.env, INIT_CWD: ROOT, SCARF_LOCAL_PORT: String((server.address() as AddressInfo).port) };
    for (const name of ['SCARF_ANALYTICS', 'SCARF_NO_ANALYTICS', 'DO_NOT_TRACK']) delete env[name];
    const listFailed = 'not reported: Scarf received an error from npm -ls';
    let outcome = listFailed;
    // Scarf gives `npm ls` 3 s, which a loaded machine can exceed: it then reports nothing either, but before
    // it read the opt-out, so it is run again.
    for (let attempt = 0; attempt < 3 && outcome.startsWith(listFailed); attempt++) {
      const { stdout } = await run(process.execPath, ['-e', script], { cwd: join(ROOT, 'node_modules', 'swagger-ui-dist'), env });
      outcome = stdout.trim();
    }
    assert.equal(outcome, 'not reported: Scarf has been disabled via a package.json in the dependency chain.');
    assert.deepEqual(received, []);
  } finally {
    server.close();
  }
});
