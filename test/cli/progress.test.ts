// Progress of long commands on standard error: in a log file or a pipe (CI, scripts) each update is a line
// of its own; carriage returns there glued every update and the final line into one.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCli, tempDir } from '../helpers/service.ts';

test('seed\'s progress, written to a pipe, is one line per update, then the final count', async () => {
  // Progress comes with the first batch of VMs, then at most once a second: more than one batch.
  const vms = 1000;
  const result = await runCli(['seed', '--vms', String(vms), '--components-per-vm', '5', '--data-dir', tempDir('jvmlens-progress-')]);
  assert.equal(result.code, 0, result.stderr);
  assert.ok(!result.stderr.includes('\r'), 'no carriage return');
  const lines = result.stderr.trimEnd().split('\n');
  assert.ok(lines.length >= 2, `a progress line before the final one: ${JSON.stringify(result.stderr)}`);
  for (const line of lines.slice(0, -1)) assert.match(line, new RegExp(`^seed: \\d+/${vms} VMs \\(\\d+ VMs/s\\)$`));
  assert.match(lines.at(-1)!, new RegExp(`^seed: ${vms}/${vms} VMs \\(\\d+ VMs/s\\) in \\d+\\.\\d s$`));
});
