// The bench runner's command line: flags, repeated and comma-separated filters, size overrides, errors.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ArgsError, parseRunnerArgs } from '../../bench/args.ts';

test('no flags: a full run of every suite', () => {
  assert.deepEqual(parseRunnerArgs([]), { options: { quick: false }, abRounds: 2, runArgs: [], help: false });
});

test('every flag', () => {
  const args = parseRunnerArgs([
    '--quick', '--filter', 'http', '--filter=parser,vuln', '--vms', '2000', '--components-per-vm=50', '--methods', '9000', '--method-names', 'realistic',
    '--runs', '10', '--compare', 'old.json', '--out', 'new.json',
  ]);
  assert.deepEqual(args, {
    options: { quick: true, vms: 2000, componentsPerVm: 50, methods: 9000, methodNames: 'realistic', runs: 10, filter: ['http', 'parser', 'vuln'] },
    compare: 'old.json',
    out: 'new.json',
    abRounds: 2,
    runArgs: ['--quick', '--filter', 'http', '--filter', 'parser,vuln', '--vms', '2000', '--components-per-vm', '50', '--methods', '9000', '--method-names', 'realistic', '--runs', '10'],
    help: false,
  });
});

test('--ab: the commit, the runs of each side, and the options each run is given as given', () => {
  const args = parseRunnerArgs(['--ab', 'main~3', '--ab-rounds', '3', '--filter', 'cluster: ingestion, NDJSON batches of 10,000', '--quick', '--out', 'ab.json']);
  assert.equal(args.ab, 'main~3');
  assert.equal(args.abRounds, 3);
  assert.equal(args.out, 'ab.json');
  assert.deepEqual(args.runArgs, ['--quick', '--filter', 'cluster: ingestion, NDJSON batches of 10,000']);
});

test('empty filter terms are dropped', () => {
  assert.deepEqual(parseRunnerArgs(['--filter', ' a,,b,']).options.filter, ['a', 'b']);
  assert.equal(parseRunnerArgs(['--filter', ',']).options.filter, undefined);
});

test('a comma followed by a space or between digits is part of a row\'s name, not a separator', () => {
  assert.deepEqual(parseRunnerArgs(['--filter', 'cluster: ingestion, NDJSON batches of 10,000 code items already known']).options.filter, ['cluster: ingestion, NDJSON batches of 10,000 code items already known']);
  assert.deepEqual(parseRunnerArgs(['--filter', '1 filter,groupBy day over 30 days: POST,every method']).options.filter, ['1 filter', 'groupBy day over 30 days: POST', 'every method']);
  assert.deepEqual(parseRunnerArgs(['--filter', 'batches of 10,000,parser']).options.filter, ['batches of 10,000', 'parser']);
});

test('--help', () => {
  assert.equal(parseRunnerArgs(['--help']).help, true);
});

for (const [argv, message] of [
  [['--vms', '0'], /--vms must be a whole number of at least 1/],
  [['--vms', '1e5'], /--vms must be a whole number/],
  [['--methods', '-3'], /methods/],
  [['--runs', '0'], /runs/],
  [['--method-names', 'unique'], /--method-names must be one of repeated, realistic, got 'unique'/],
  [['--vms'], /--vms/],
  [['--fast'], /--fast/],
  [['suite-name'], /suite-name/],
  [['--ab', 'HEAD~1', '--compare', 'old.json'], /give one of them/],
  [['--ab-rounds', '2'], /--ab-rounds goes with --ab REF/],
  [['--ab', 'HEAD~1', '--ab-rounds', '0'], /--ab-rounds must be a whole number of at least 1/],
] as const) {
  test(`rejects ${argv.join(' ')}`, () => {
    assert.throws(() => parseRunnerArgs(argv), (error: unknown) => error instanceof ArgsError && message.test(error.message));
  });
}
