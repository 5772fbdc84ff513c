// The saved result file: its name, its shape, reading it back, and a machine without git.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { gitState, loadResult, machine, repositoryRoot, resultFileName, saveResult } from '../../bench/results.ts';
import type { ResultDocument } from '../../bench/results.ts';

const dir = mkdtempSync(join(tmpdir(), 'jvmlens-bench-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const document: ResultDocument = {
  format: 1,
  mode: 'quick',
  startedAt: '2026-11-22T01:02:03.456Z',
  finishedAt: '2026-11-22T01:03:00.000Z',
  commit: 'abc',
  dirty: false,
  machine: machine(),
  options: { quick: true, filter: ['http'] },
  rows: [{ suite: 'http', name: 'GET /opthub-health', size: '5k VMs', rate: 1, unit: 'req/s', meanMs: 1, p50Ms: 1, p99Ms: 1, rssMb: 1, extra: { vsNodeHttp: 2 } }],
  errors: [{ suite: 'vuln', message: 'Error: boom' }],
};

test('result file names sort by time and hold no colons', () => {
  assert.equal(resultFileName(new Date('2026-11-22T01:02:03.456Z'), 'quick'), '2026-11-22T01-02-03Z-quick.json');
  assert.equal(resultFileName(new Date('2026-11-22T01:02:03Z'), 'full'), '2026-11-22T01-02-03Z-full.json');
});

test('the machine block names CPU, cores, memory, Node and OS', () => {
  const host = machine();
  assert.equal(typeof host.cpuModel, 'string');
  assert.ok(Number.isInteger(host.cores) && host.cores >= 1);
  assert.ok(host.memoryMb > 0);
  assert.equal(host.node, process.version);
  assert.ok(host.os.length > 0);
  assert.equal(typeof host.loadAverage, 'number');
});

test('saved JSON has the documented keys and reads back unchanged', () => {
  const file = join(dir, 'nested', 'run.json');
  saveResult(document, file);
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  assert.deepEqual(Object.keys(parsed), ['format', 'mode', 'startedAt', 'finishedAt', 'commit', 'dirty', 'machine', 'options', 'rows', 'errors']);
  assert.deepEqual(loadResult(file), document);
});

test('loadResult refuses files that are not bench results', () => {
  const file = join(dir, 'other.json');
  writeFileSync(file, JSON.stringify({ rows: [] }));
  assert.throws(() => loadResult(file), /not a bench result file/);
});

test('no git: commit and dirty are null', () => {
  assert.deepEqual(gitState(dir), { commit: null, dirty: null });
});

test('the repository root holds package.json and the bench folder', () => {
  const root = repositoryRoot();
  assert.equal(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).name, 'jvmlens');
});
