// `--help`, `-h` and `--version`, which users of any command line try first: each answers and exits 0.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { formatUsages, wrap } from '../../src/cli/help.ts';
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

test('help is laid out for a terminal: lines within 100 columns when piped, every description in one column, examples whole', async () => {
  const overview = await runCli(['--help']);
  const lines = overview.stdout.split('\n');
  for (const line of lines) assert.ok(line.length <= 100, `longer than 100 columns: ${line}`);
  const settingsAt = lines.findIndex((line) => line.startsWith('settings ('));
  const [commandLines, settingLines] = [lines.slice(0, settingsAt), lines.slice(settingsAt + 1)];
  const commands = commandLines.filter((line) => line.startsWith('jvmlens ') && / {2,}\S/.test(line));
  assert.ok(commands.length >= 8, overview.stdout);
  for (const line of commands) assert.equal(line.search(/(?<= {2,})\S/), 50, `description column of: ${line}`);
  // A call too long for its column has its description on the lines under it, in the same column; so has a long setting.
  for (const line of commandLines.filter((line) => /^ {20,}\S/.test(line))) assert.equal(line.search(/\S/), 50, line);
  for (const line of settingLines.filter((line) => line !== '')) assert.equal(line.startsWith('  --') ? line.search(/(?<=JVMLENS_\w+ +)\S/) : line.search(/\S/), 56, line);

  const report = await runCli(['report', '--help']);
  assert.ok(report.stdout.includes(`      e.g. jvmlens report component --filter "componentName = 'log4j-core'" --group-by tags.env --format csv\n`), report.stdout);
  assert.match(report.stdout, /exit status: 0 SUCCEEDED/);
});

test('wrap breaks between words only, within the width, continuing at the indent', () => {
  const text = 'a stopped node\'s place in the log dropped: the log no longer keeps what it missed';
  const wrapped = wrap(text, 40, 10, 4);
  const lines = wrapped.split('\n');
  assert.ok(lines.length > 2);
  assert.ok(10 + lines[0].length <= 40);
  for (const line of lines.slice(1)) {
    assert.ok(line.length <= 40, line);
    assert.match(line, /^ {4}\S/);
  }
  assert.equal(lines.map((line) => line.trim()).join(' '), text);
  assert.equal(wrap('averyveryverylongword short', 10, 0, 2), 'averyveryverylongword\n  short');
  assert.equal(formatUsages([{ call: 'jvmlens x', does: 'does x', notes: ['note'] }], { width: 80, notes: false }), `${'jvmlens x'.padEnd(50)}does x`);
});
