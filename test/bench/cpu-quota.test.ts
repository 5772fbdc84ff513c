// The cluster bench's emulated machines: a process put under a quota of a quarter core gets about that much
// CPU, whatever its threads ask for, and removing the quota moves what still runs out of it. Skipped where this
// machine allows no quota (cgroups need root or a delegated group).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { cpuQuota } from '../../bench/cpu-quota.ts';
import { processCpuSeconds } from '../../bench/service.ts';

test('a busy process under a quota of 0.25 cores gets no more than its quota', async (t) => {
  const quota = cpuQuota(`jvmlens-test-${process.pid}`, 0.25);
  if (quota instanceof Error) {
    t.skip(quota.message);
    return;
  }
  // Two threads spinning: unlimited, it would use two cores where the machine has them, at least one.
  const busy = spawn(process.execPath, ['-e', `
    const { Worker } = require('node:worker_threads');
    new Worker('for (;;) {}', { eval: true });
    for (;;) {}
  `], { stdio: 'ignore' });
  try {
    await sleep(300);
    quota.add(busy.pid!);
    assert.match(readFileSync(`/proc/${busy.pid}/cgroup`, 'utf8'), new RegExp(`/jvmlens-test-${process.pid}$`, 'm'));
    const before = processCpuSeconds(busy.pid!)!;
    const started = performance.now();
    await sleep(2_000);
    const used = processCpuSeconds(busy.pid!)! - before;
    const seconds = (performance.now() - started) / 1000;
    // The quota allows 0.25 s per second; an unthrottled spinner takes 1 s per second or more.
    assert.ok(used / seconds < 0.5, `used ${used.toFixed(2)} s of CPU in ${seconds.toFixed(2)} s`);
    assert.ok(used > 0, 'the process ran under its quota');
  } finally {
    busy.kill('SIGKILL');
    await new Promise((resolve) => busy.once('exit', resolve));
    quota.remove();
  }
});

test('a quota removed while its process still runs moves the process out first', async (t) => {
  const name = `jvmlens-test-${process.pid}-running`;
  const quota = cpuQuota(name, 0.25);
  if (quota instanceof Error) {
    t.skip(quota.message);
    return;
  }
  const busy = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  try {
    quota.add(busy.pid!);
    assert.match(readFileSync(`/proc/${busy.pid}/cgroup`, 'utf8'), new RegExp(`/${name}$`, 'm'));
    quota.remove();
    assert.doesNotMatch(readFileSync(`/proc/${busy.pid}/cgroup`, 'utf8'), new RegExp(name));
    assert.equal(busy.exitCode, null, 'the process still runs');
  } finally {
    busy.kill('SIGKILL');
    await new Promise((resolve) => busy.once('exit', resolve));
    quota.remove();
  }
});

test('a quota left by a run whose process is gone is removed when the next one is made, with what still ran in it moved out', async (t) => {
  // A run stopped by a kill: its process is gone, one of its children still runs under its quota.
  const run = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => run.once('exit', resolve));
  const leftOver = `jvmlens-bench-${run.pid}-0`;
  const left = cpuQuota(leftOver, 0.25);
  if (left instanceof Error) {
    t.skip(left.message);
    return;
  }
  const orphan = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  const name = `jvmlens-test-${process.pid}-next`;
  let next: ReturnType<typeof cpuQuota> | null = null;
  try {
    left.add(orphan.pid!);
    next = cpuQuota(name, 0.25);
    assert.ok(!(next instanceof Error), String(next));
    assert.doesNotMatch(readFileSync(`/proc/${orphan.pid}/cgroup`, 'utf8'), new RegExp(leftOver), 'the orphan was moved out');
    assert.equal(orphan.exitCode, null, 'and still runs');
    assert.ok(!existsSync(join(quotaRoot(name), leftOver)), 'the left-over quota is gone');
    assert.ok(existsSync(join(quotaRoot(name), name)), 'a running process\'s quota stays');
  } finally {
    orphan.kill('SIGKILL');
    await new Promise((resolve) => orphan.once('exit', resolve));
    if (next !== null && !(next instanceof Error)) next.remove();
    left.remove();
  }
});

/** The directory that holds the quota named `name` (cgroup v1's cpu controller or v2's tree). */
function quotaRoot(name: string): string {
  return ['/sys/fs/cgroup/cpu', '/sys/fs/cgroup'].find((root) => existsSync(join(root, name)))!;
}
