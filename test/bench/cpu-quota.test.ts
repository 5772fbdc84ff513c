// The cluster bench's emulated machines: a process put under a quota of a quarter core gets about that much
// CPU, whatever its threads ask for, and removing the quota moves what still runs out of it. Skipped where this
// machine allows no quota (cgroups need root or a delegated group).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
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
