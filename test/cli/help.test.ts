// `--help`, `-h` and `--version`, which users of any command line try first: each answers and exits 0.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { runCli } from '../helpers/service.ts';

test('COMMAND --help or -h prints that command\'s usage and exits 0, wherever it stands after the command', async () => {
  const cases: [args: string[], shows: string][] = [
    [['serve', '--help'], '--gateway-port'],
    [['serve', '--data-dir', '/nowhere', '-h'], 'JVMLENS_CLUSTER'],
    [['keys', 'create', '--help'], 'jvmlens keys revoke KEY_ID'],
    [['report', 'jvm', '-h'], '--group-by FIELD'],
    [['cve', 'events', '--help'], '--cve-analysis-start-time'],
    [['instance', '--help'], 'jvmlens instance VMID'],
    [['sbom', '--help'], 'CycloneDX'],
    [['seed', '--help'], '--components-per-vm'],
    [['backup', '--help'], 'jvmlens backup DIR'],
    [['cluster', 'status', '--help'], 'jvmlens cluster detach --data-dir DIR'],
  ];
  for (const [args, shows] of cases) {
    const run = await runCli(args);
    assert.equal(run.code, 0, `${args.join(' ')}: ${run.stderr}`);
    assert.ok(run.stdout.includes(shows), `${args.join(' ')} shows ${shows}: ${run.stdout}`);
    assert.equal(run.stderr, '');
  }
});

test('help serve lists the settings; --help and -h alone the commands; --version the package\'s version', async () => {
  const serve = await runCli(['help', 'serve']);
  assert.equal(serve.code, 0);
  for (const setting of ['--host', 'JVMLENS_DATA_DIR', '--cluster', '--code-groups']) assert.ok(serve.stdout.includes(setting), setting);
  for (const flag of ['--help', '-h']) {
    const usage = await runCli([flag]);
    assert.equal(usage.code, 0);
    assert.match(usage.stdout, /^usage: jvmlens COMMAND/);
  }
  const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  for (const flag of ['--version', 'version']) {
    const run = await runCli([flag]);
    assert.equal(run.code, 0);
    assert.equal(run.stdout, `jvmlens ${version}\n`);
  }
});

test('an unknown option is still refused with exit 2, --help or not elsewhere', async () => {
  const run = await runCli(['instance', '--halp']);
  assert.equal(run.code, 2);
  assert.match(run.stderr, /unknown option --halp/);
});
