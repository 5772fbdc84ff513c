// --ab REF: the order of the runs, and each row's B/A, pair by pair; then a real A/B run of a quick suite
// against HEAD, built in a git worktree that is gone afterwards.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { abOrder, formatAb, summarizeAb } from '../../bench/ab.ts';
import type { AbDocument, AbRun } from '../../bench/ab.ts';
import type { BenchRow } from '../../bench/harness.ts';
import type { ResultDocument } from '../../bench/results.ts';
import { repositoryRoot } from '../../bench/results.ts';
import { tempDir } from '../helpers/service.ts';

const row = (name: string, rate: number): BenchRow => ({ suite: 'parser', name, size: '1 filter', rate, unit: 'ops/s', meanMs: 1, p50Ms: 1, p99Ms: 2, rssMb: 50 });
const run = (side: AbRun['side'], rows: BenchRow[]): AbRun => ({ side, result: { rows } as ResultDocument });

test('each side runs as often as asked, neither always first: A B, B A, A B', () => {
  assert.deepEqual(abOrder(1), ['A', 'B']);
  assert.deepEqual(abOrder(2), ['A', 'B', 'B', 'A']);
  assert.deepEqual(abOrder(3), ['A', 'B', 'B', 'A', 'A', 'B']);
});

test('B/A is taken pair by pair of runs next to each other; a row one side lacks has no ratio', () => {
  const runs = [
    run('A', [row('parse', 100), row('old only', 5)]),
    run('B', [row('parse', 120), row('new only', 7)]),
    run('B', [row('parse', 90), row('new only', 9)]),
    run('A', [row('parse', 60), row('old only', 6)]),
  ];
  const rows = summarizeAb(runs);
  assert.deepEqual(rows.map((r) => [r.name, r.a, r.b, r.ratios]), [
    ['parse', 80, 105, [1.2, 1.5]],
    ['old only', 5.5, null, []],
    ['new only', null, 8, []],
  ]);
  const table = formatAb(rows);
  assert.match(table, /parse\s+ops\/s\s+80\s+105\s+1\.35\s+1\.20 1\.50/);
  assert.match(table, /old only\s+ops\/s\s+5\.5\s+-\s+-/);
});

const root = repositoryRoot();
const git = (args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
const noGit = existsSync(join(root, '.git')) ? false : 'not a git checkout';

test('a real A/B run against HEAD: both sides run the same quick rows, and the worktree is removed', { skip: noGit, timeout: 600_000 }, () => {
  const out = join(tempDir('jvmlens-ab-'), 'ab.json');
  const worktreesBefore = git(['worktree', 'list']);
  // The runner built beside this test file: B is this checkout as built.
  const runner = fileURLToPath(new URL('../../bench/run.js', import.meta.url));
  const result = spawnSync(process.execPath, [runner, '--ab', 'HEAD', '--ab-rounds', '1', '--quick', '--filter', 'parse + compile', '--out', out], { encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  // Where HEAD's lockfile is this checkout's (unless `npm install` rewrote it), A uses this checkout's dependencies.
  const lockIsHeads = readFileSync(join(root, 'package-lock.json'), 'utf8').trim() === git(['show', 'HEAD:package-lock.json']);
  if (lockIsHeads) assert.doesNotMatch(result.stderr, /package-lock\.json differs/);
  assert.match(result.stdout, new RegExp(`A: HEAD \\(${git(['rev-parse', 'HEAD']).slice(0, 12)}\\); B: this checkout`));
  assert.match(result.stdout, /runs in turn: A B; load average at each start: /);
  const document = JSON.parse(readFileSync(out, 'utf8')) as AbDocument;
  assert.deepEqual(document.runs.map((r) => r.side), ['A', 'B']);
  const names = document.runs.map((r) => r.result.rows.map((benchRow) => benchRow.name));
  assert.ok(names[0].length > 0, 'A ran rows');
  assert.deepEqual(names[1], names[0], 'B ran the same rows');
  for (const name of names[0]) assert.match(result.stdout, new RegExp(`${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.*\\d\\.\\d\\d`));
  assert.equal(git(['worktree', 'list']), worktreesBefore, 'the worktree is gone');
});
