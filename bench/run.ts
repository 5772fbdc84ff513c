// `npm run bench`: runs every suite in bench/suites, prints a table, saves the run as JSON, optionally compares with a
// saved run; or, with --ab REF, runs them in turn with another commit (bench/ab.ts).
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runAb } from './ab.ts';
import { ArgsError, parseRunnerArgs, USAGE } from './args.ts';
import type { RunnerArgs } from './args.ts';
import { compareRows, formatComparison } from './compare.ts';
import { progress, wanted, withFilterSuites } from './harness.ts';
import type { BenchRow, Suite } from './harness.ts';
import { gitState, loadAverage, loadResult, machine, repositoryRoot, resultFileName, saveResult } from './results.ts';
import type { ResultDocument, SuiteError } from './results.ts';
import { formatExtras, formatRows } from './table.ts';

/** Every suite file next to the runner, so a suite added later runs without touching this file. */
async function discoverSuites(errors: SuiteError[]): Promise<Suite[]> {
  const folder = new URL('./suites/', import.meta.url);
  const files = readdirSync(folder).filter((file) => /\.(js|ts)$/.test(file) && !file.endsWith('.d.ts')).sort();
  const suites: Suite[] = [];
  for (const file of files) {
    try {
      const module = (await import(new URL(file, folder).href)) as { suite?: Suite };
      if (module.suite === undefined) throw new Error(`${file} exports no 'suite'`);
      suites.push(module.suite);
    } catch (error) {
      errors.push({ suite: file, message: (error as Error).stack ?? String(error) });
    }
  }
  return suites;
}

/** A suite that lists its rows is skipped when --filter selects none of them. */
function selected(suite: Suite, args: RunnerArgs): boolean {
  if (suite.rows === undefined) return true;
  return suite.rows.some((row) => wanted(args.options, suite.name, row));
}

async function main(argv: readonly string[]): Promise<number> {
  let args: RunnerArgs;
  try {
    args = parseRunnerArgs(argv);
  } catch (error) {
    if (!(error instanceof ArgsError)) throw error;
    process.stderr.write(`bench: ${error.message}\n\n${USAGE}\n`);
    return 2;
  }
  if (args.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  // Read the saved run first: a typo in --compare should not cost a full run.
  let saved: ResultDocument | null = null;
  try {
    if (args.compare !== undefined) saved = loadResult(resolve(args.compare));
  } catch (error) {
    process.stderr.write(`bench: --compare: ${(error as Error).message}\n`);
    return 2;
  }
  const root = repositoryRoot();
  if (args.ab !== undefined) {
    try {
      return await runAb({ ...args, ab: args.ab }, root, fileURLToPath(import.meta.url));
    } catch (error) {
      process.stderr.write(`bench: ${(error as Error).message}\n`);
      return 1;
    }
  }
  const startedAt = new Date();
  const { commit, dirty } = gitState(root);
  const host = machine();
  const errors: SuiteError[] = [];
  const rows: BenchRow[] = [];
  const suites = await discoverSuites(errors);
  args.options = withFilterSuites(args.options, suites.map((suite) => suite.name));
  for (const suite of suites) {
    if (!selected(suite, args)) continue;
    const started = performance.now();
    progress(`${suite.name}: running${args.options.quick ? ' (quick)' : ''}`);
    try {
      const suiteRows = await suite.run(args.options);
      rows.push(...suiteRows.filter((row) => wanted(args.options, row.suite, row.name)));
      progress(`${suite.name}: done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    } catch (error) {
      errors.push({ suite: suite.name, message: (error as Error).stack ?? String(error) });
      progress(`${suite.name}: FAILED: ${(error as Error).message}`);
    }
  }
  const mode = args.options.quick ? 'quick' : 'full';
  const document: ResultDocument = {
    format: 1, mode, startedAt: startedAt.toISOString(), finishedAt: new Date().toISOString(),
    commit, dirty, machine: { ...host, loadAverageAtEnd: loadAverage() }, options: args.options, rows, errors,
  };
  const file = args.out === undefined ? join(root, 'bench', 'results', resultFileName(startedAt, mode)) : resolve(args.out);
  saveResult(document, file);

  const { cpuModel, cores, memoryMb, node, loadAverageAtEnd } = document.machine;
  process.stdout.write(`\njvmlens bench (${mode}) on ${cpuModel}, ${cores} cores, ${memoryMb} MB, Node ${node}; commit ${commit?.slice(0, 12) ?? 'unknown'}${dirty ? ' + changes' : ''}\n`);
  process.stdout.write(`load average ${host.loadAverage} at start, ${loadAverageAtEnd} at end`);
  // At the start only the build has run: a load above the cores means other work competes for them (the end counts our own).
  const busy = host.loadAverage > cores;
  process.stdout.write(busy ? ': other processes competed for the CPUs, figures are noisy\n\n' : '\n\n');
  process.stdout.write(`${formatRows(rows)}\n`);
  const extras = formatExtras(rows);
  if (extras !== '') process.stdout.write(`\n${extras}\n`);
  if (saved !== null) {
    process.stdout.write(`\nCompared with ${args.compare} (${saved.mode}, ${saved.startedAt}, commit ${saved.commit?.slice(0, 12) ?? 'unknown'}):\n\n`);
    process.stdout.write(`${formatComparison(compareRows(rows, saved.rows))}\n`);
  }
  process.stdout.write(`\nsaved ${file}\n`);
  for (const error of errors) process.stderr.write(`\nbench: suite ${error.suite} failed:\n${error.message}\n`);
  return errors.length > 0 ? 1 : 0;
}

// Ctrl-C: exit normally so 'exit' handlers stop child services and remove temporary data directories.
process.once('SIGINT', () => process.exit(130));
// exit() rather than exitCode: a suite's leftover keep-alive socket must not hold the run open.
process.exit(await main(process.argv.slice(2)));
