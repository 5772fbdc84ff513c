// A full disk (issue: hardening): ingestion answers 507 with Retry-After, health turns DOWN with a note, the
// process stays up, and once space is freed it recovers by itself with every acknowledged batch intact; a first
// start that cannot write its first API key says so and exits 1, as do the commands that write a data directory.
// Runs on a small tmpfs, so it needs root (CI runs as root; elsewhere it is skipped unless CI=true).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import { CVSS, GROUP, writeAdvisories } from '../helpers/cve.ts';
import { ingest, vmStart } from '../helpers/events.ts';
import { request, runCli, startService, tempDir, waitForHealth } from '../helpers/service.ts';

/** Runs `body` on a new tmpfs of `size`, unmounted after it; skips the test where none can be mounted. */
async function onTmpfs(t: TestContext, size: string, body: (mountPoint: string) => Promise<void>): Promise<void> {
  const mountPoint = tempDir('jvmlens-full-disk-');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', mountPoint], { stdio: 'pipe' });
  } catch (error) {
    if (process.env.CI === 'true') throw error;
    t.skip('needs root to mount a tmpfs');
    return;
  }
  try {
    await body(mountPoint);
  } finally {
    execFileSync('umount', [mountPoint]);
    rmSync(mountPoint, { recursive: true, force: true });
  }
}

/** Fills the tmpfs at `mountPoint` but for `leftBytes`: a file takes the rest. */
function fill(mountPoint: string, leftBytes: number): string {
  const free = Number(execFileSync('df', ['--output=avail', '-B1', mountPoint]).toString().split('\n')[1]);
  const filler = join(mountPoint, 'filler');
  writeFileSync(filler, Buffer.alloc(Math.max(0, free - leftBytes)));
  return filler;
}

/** One VM and 2,000 methods of 60-byte class names: about 250 KB a batch on disk. */
function batch(i: number, now: number): unknown[] {
  const vmId = `disk-vm-${i}`;
  const items = Array.from({ length: 2000 }, (_, j) => ({ sourceName: `app-${i}.jar`, className: `com.example.generated.package${i}.Class${j}${'x'.repeat(30)}`, methodName: `method${j}()` }));
  return [vmStart(vmId, now), { type: 'code', vmId, time: now, items }];
}

test('a full disk: 507 and health DOWN, the process stays up, and it recovers when space is freed', (t) => onTmpfs(t, '24m', async (mountPoint) => {
  const dataDir = join(mountPoint, 'data');
  mkdirSync(dataDir);
  const service = await startService({ dataDir });
  try {
    // Leave a few MB: a filler file takes the rest, and freeing it is "the operator cleaned up".
    const filler = fill(mountPoint, 6 * 1024 * 1024);
    const now = Date.now();
    const acknowledged: string[] = [];
    let refused: { status: number; body: any } | null = null;
    for (let i = 0; i < 200 && refused === null; i++) {
      const response = await ingest(service.gatewayUrl, service.apiKey, batch(i, now));
      if (response.status === 200) acknowledged.push(`disk-vm-${i}`);
      else refused = response;
    }
    assert.ok(refused !== null, 'the disk never filled');
    assert.equal(refused.status, 507, JSON.stringify(refused.body));
    assert.equal(refused.body.error, 'INSUFFICIENT_STORAGE');
    const health = await request(`${service.gatewayUrl}/opthub-health`);
    assert.equal(health.status, 503);
    assert.match(health.body.note, /storage cannot be written/);
    assert.equal(service.child.exitCode, null, `the process exited:\n${service.stderr()}`);
    // decisions §3: while DOWN, the API answers 503 with Retry-After.
    const read = await request(`${service.apiUrl}/public/instance/${acknowledged[0]}`, { key: service.apiKey });
    assert.equal(read.status, 503);
    assert.ok(read.headers.get('retry-after') !== null);

    rmSync(filler);
    await waitForHealth(service, 200, 20_000);
    const next = await ingest(service.gatewayUrl, service.apiKey, batch(1000, now));
    assert.equal(next.status, 200, JSON.stringify(next.body));
    acknowledged.push('disk-vm-1000');

    await service.stop({ keepData: true });
    const restarted = await startService({ dataDir });
    try {
      for (const vmId of acknowledged) {
        assert.equal((await request(`${restarted.apiUrl}/public/instance/${vmId}`, { key: restarted.apiKey })).status, 200, `${vmId} was acknowledged`);
      }
    } finally {
      await restarted.stop({ keepData: true });
    }
  } finally {
    await service.stop({ keepData: true });
  }
}));

test('a first start on a full disk: exit 1, saying which directory cannot be written, no stack', (t) => onTmpfs(t, '2m', async (mountPoint) => {
  const dataDir = join(mountPoint, 'data');
  mkdirSync(dataDir);
  // Room for the store's first pages, not for the first API key's write, nor the curated OSV set's.
  fill(mountPoint, 40 * 1024);
  // Without a key the first key's write fails as the ports open; with one, the vulnerability data's, as it starts.
  for (const key of [[], ['--api-key', 'full-disk-key-0123456789']]) {
    const started = await runCli(['serve', '--gateway-port', '0', '--api-port', '0', '--data-dir', dataDir, ...key], {}, 30_000);
    assert.equal(started.code, 1, started.stderr);
    assert.match(started.stderr, new RegExp(`jvmlens: (cannot start: )?${dataDir} cannot be written: commit failed \\(disk full or I/O error\\)`));
    // lmdb-js prints the I/O error itself; jvmlens adds no stack of its own.
    assert.doesNotMatch(started.stderr, /Commit failed|at .*service\.js/);
    assert.doesNotMatch(started.stdout, /created the first API key/);
  }
}));

test('commands that write a full data directory: exit 1, saying which directory cannot be written, no stack', (t) => onTmpfs(t, '2m', async (mountPoint) => {
  const osv = writeAdvisories([{ osvId: 'GHSA-full-disk', cveId: 'CVE-2026-0001', groupId: GROUP, artifactId: 'full-disk', versions: ['1.0'], severity: CVSS.score75 }]);
  try {
    const dataDir = join(mountPoint, 'data');
    mkdirSync(dataDir);
    // The store's first pages (keys list needs a store), then no room for any write.
    assert.equal((await runCli(['keys', 'create', '--user', 'first', '--data-dir', dataDir])).code, 0);
    fill(mountPoint, 0);
    for (const command of [['keys', 'create', '--user', 'ops'], ['cve', 'import', osv], ['seed', '--vms', '20']]) {
      const run = await runCli([...command, '--data-dir', dataDir], {}, 30_000);
      const label = `jvmlens ${command.join(' ')}: ${run.stderr}`;
      // Before, the process died on lmdb-js's unhandled rejection (status 1 with its stack), or ended with 0.
      assert.equal(run.code, 1, label);
      assert.match(run.stderr, new RegExp(`jvmlens: ${dataDir} cannot be written: commit failed \\(disk full or I/O error\\)\n$`), label);
      assert.doesNotMatch(run.stderr, /Commit failed/, label);
    }
    assert.doesNotMatch((await runCli(['keys', 'list', '--data-dir', dataDir])).stdout, /ops/);
  } finally {
    rmSync(osv, { recursive: true, force: true });
  }
}));
