// The bench runner's command line: `npm run bench -- [--quick] [--filter NAME]... [--vms N] ... [--compare FILE | --ab REF] [--out FILE]`.
import { parseArgs } from 'node:util';
import type { BenchOptions } from './harness.ts';
import { METHOD_NAMES } from '../src/seed/fleet.ts';
import type { MethodNames } from '../src/seed/fleet.ts';

export interface RunnerArgs {
  options: BenchOptions;
  /** A saved result file to print each figure beside. */
  compare?: string;
  /** Where to write the result file instead of bench/results/<timestamp>-<mode>.json. */
  out?: string;
  /** A git commit (or branch, tag) whose bench runs in turn with this checkout's (bench/ab.ts). */
  ab?: string;
  /** Runs of each side with --ab. */
  abRounds: number;
  /** The options that choose what runs and on what data, as given: what each run of --ab is given. */
  runArgs: string[];
  help: boolean;
}

export const USAGE = `npm run bench -- [options]

  --quick                  every suite on small data, in about a minute (CI runs this)
  --filter NAME            run only rows whose suite or row name contains NAME (case-insensitive);
                           a NAME that is a suite's whole name selects that suite alone (--filter
                           reports: not the chaos rows that mention reports); repeat it or separate
                           names with commas (a comma followed by a space or between digits is part
                           of a name, as in 'cluster: ingestion, NDJSON batches of 10,000')
  --vms N                  fleet size the suites seed, instead of their default
  --components-per-vm N    components per VM of the seeded fleet
  --methods N              distinct application methods of the seeded fleet
  --method-names NAMES     how its methods are named: repeated (ten names, the default, as every
                           recorded figure before it) or realistic (mostly distinct, as real classes')
  --runs N                 timed runs per engine after the first in the peers suite, the best counting
                           (default 3: reports of a fresh service warm up over their first few runs)
  --compare FILE           print each figure beside the one in a saved result file, with new/old
  --ab REF                 run the same rows with the git commit, branch or tag REF (A, built in a
                           temporary worktree) and with this checkout (B), each in processes of its
                           own, in turn A B B A; print B/A of each pair of runs next to each other
  --ab-rounds N            runs of each side with --ab (default 2)
  --out FILE               write the result JSON here instead of bench/results/<timestamp>-<mode>.json
  --help                   this text`;

export class ArgsError extends Error {}

/** A comma that separates --filter names: not one of a row name's own (followed by a space, or in a number). */
const FILTER_SEPARATOR = /(?<!\d),(?! )|,(?![\d ])/;

function count(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new ArgsError(`--${name} must be a whole number of at least 1, got '${raw}'`);
  return Number(raw);
}

function choice(name: string, raw: string, choices: readonly MethodNames[]): MethodNames {
  const found = choices.find((candidate) => candidate === raw);
  if (found === undefined) throw new ArgsError(`--${name} must be one of ${choices.join(', ')}, got '${raw}'`);
  return found;
}

export function parseRunnerArgs(argv: readonly string[]): RunnerArgs {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        quick: { type: 'boolean', default: false },
        filter: { type: 'string', multiple: true, default: [] },
        vms: { type: 'string' },
        'components-per-vm': { type: 'string' },
        methods: { type: 'string' },
        'method-names': { type: 'string' },
        runs: { type: 'string' },
        compare: { type: 'string' },
        ab: { type: 'string' },
        'ab-rounds': { type: 'string' },
        out: { type: 'string' },
        help: { type: 'boolean', default: false },
      },
    }));
  } catch (error) {
    throw new ArgsError((error as Error).message);
  }
  const filter = values.filter.flatMap((value) => value.split(FILTER_SEPARATOR)).map((term) => term.trim()).filter((term) => term !== '');
  const options: BenchOptions = { quick: values.quick };
  const vms = count('vms', values.vms);
  const componentsPerVm = count('components-per-vm', values['components-per-vm']);
  const methods = count('methods', values.methods);
  const runs = count('runs', values.runs);
  if (vms !== undefined) options.vms = vms;
  if (componentsPerVm !== undefined) options.componentsPerVm = componentsPerVm;
  if (methods !== undefined) options.methods = methods;
  if (runs !== undefined) options.runs = runs;
  const methodNames = values['method-names'];
  if (methodNames !== undefined) options.methodNames = choice('method-names', methodNames, METHOD_NAMES);
  if (filter.length > 0) options.filter = filter;
  if (values.ab !== undefined && values.compare !== undefined) throw new ArgsError('--ab compares two commits run in turn; --compare a saved run: give one of them');
  if (values['ab-rounds'] !== undefined && values.ab === undefined) throw new ArgsError('--ab-rounds goes with --ab REF');
  const runArgs = [
    ...(values.quick ? ['--quick'] : []),
    ...values.filter.flatMap((value) => ['--filter', value]),
    ...(['vms', 'components-per-vm', 'methods', 'method-names', 'runs'] as const).flatMap((name) => (values[name] === undefined ? [] : [`--${name}`, values[name]])),
  ];
  const args: RunnerArgs = { options, abRounds: count('ab-rounds', values['ab-rounds']) ?? 2, runArgs, help: values.help };
  if (values.compare !== undefined) args.compare = values.compare;
  if (values.ab !== undefined) args.ab = values.ab;
  if (values.out !== undefined) args.out = values.out;
  return args;
}
