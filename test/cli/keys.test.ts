// `jvmlens keys` and `cve import` on a data directory with no service: a mistyped directory is refused and left
// unmade (no store a service never reads), a list or revocation needs a store, and a key needs a scope.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { STORE_FILE } from '../../src/storage/store.ts';
import { CVSS, GROUP, writeAdvisories } from '../helpers/cve.ts';
import { runCli, tempDir } from '../helpers/service.ts';

test('a data directory that does not exist is refused with exit status 2, and not made', async () => {
  const missing = join(tempDir('jvmlens-keys-'), 'nodir');
  const osv = writeAdvisories([{ osvId: 'GHSA-keys-test', cveId: 'CVE-2026-0002', groupId: GROUP, artifactId: 'keys-test', versions: ['1.0'], severity: CVSS.score75 }]);
  const cases: [string[], string][] = [
    [['keys', 'list'], `no jvmlens data directory at ${missing} (give --data-dir)`],
    [['keys', 'revoke', 'some-key'], `no jvmlens data directory at ${missing} (give --data-dir)`],
    [['keys', 'create', '--user', 'ops'], `no directory ${missing} (give --data-dir; a new data directory is made by serve or seed, or by mkdir)`],
    [['cve', 'import', osv], `no directory ${missing} (give --data-dir; a new data directory is made by serve or seed, or by mkdir)`],
  ];
  for (const [args, message] of cases) {
    const run = await runCli([...args, '--data-dir', missing]);
    assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
    assert.equal(run.stdout, '', args.join(' '));
    assert.equal(run.stderr, `jvmlens: ${message}\n`);
    assert.equal(existsSync(missing), false, args.join(' '));
  }
});

test('keys list needs a store; keys create starts one in an existing directory, for the service started on it next', async () => {
  const dataDir = tempDir('jvmlens-keys-');
  const listed = await runCli(['keys', 'list', '--data-dir', dataDir]);
  assert.equal(listed.code, 2, listed.stderr);
  assert.match(listed.stderr, /no jvmlens data directory at /);
  assert.equal(existsSync(join(dataDir, STORE_FILE)), false);
  const created = await runCli(['keys', 'create', '--user', 'ops', '--data-dir', dataDir]);
  assert.equal(created.code, 0, created.stderr);
  const keyId = /key id: (\S+)/.exec(created.stdout)![1];
  const relisted = await runCli(['keys', 'list', '--data-dir', dataDir]);
  assert.equal(relisted.code, 0, relisted.stderr);
  assert.match(relisted.stdout, new RegExp(`^${keyId} +ops +read `, 'm'));
});

test('keys create refuses a key without a scope, before touching the store', async () => {
  const dataDir = tempDir('jvmlens-keys-');
  for (const scopes of ['', ',']) {
    const run = await runCli(['keys', 'create', '--user', 'ops', '--scopes', scopes, '--data-dir', dataDir]);
    assert.equal(run.code, 2, run.stderr);
    assert.equal(run.stderr, 'jvmlens: --scopes needs at least one of read, write, ingest\n');
    assert.equal(run.stdout, '');
  }
  assert.equal(existsSync(join(dataDir, STORE_FILE)), false);
});
