// Small argument reader for sub-commands: `--name value`, `--name=value` and positional words.
import { SETTINGS } from '../config.ts';
import { nearest } from '../nearest.ts';

export class UsageError extends Error {}

export interface ParsedArgs {
  /** The last value of each option. */
  options: Map<string, string>;
  /** Every value of each option, in order: for options that may repeat. */
  repeated: Map<string, string[]>;
  positional: string[];
}

/** The settings' names: a command that takes them had them taken out before (config.ts), so one that reaches it is mistyped. */
const SETTING_NAMES = SETTINGS.map((setting) => setting.flag.slice(2));

/**
 * `flags` take no value: present, their option is 'true'. `alsoSuggest`: names a typo may be meant for, though
 * not known here (by default the settings; none for the API clients, which take none).
 */
export function parseArgs(args: readonly string[], known: readonly string[], flags: readonly string[] = [], alsoSuggest: readonly string[] = SETTING_NAMES): ParsedArgs {
  const options = new Map<string, string>();
  const repeated = new Map<string, string[]>();
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
    if (flags.includes(name)) {
      if (eq > 0) throw new UsageError(`--${name} takes no value: give --${name} alone`);
      options.set(name, 'true');
      continue;
    }
    if (!known.includes(name)) {
      const suggestion = nearest(name, [...known, ...flags, ...alsoSuggest]);
      throw new UsageError(`unknown option --${name}${suggestion === null ? '' : `; did you mean --${suggestion}?`} (known: ${[...known, ...flags].map((k) => `--${k}`).join(', ')})`);
    }
    const value = eq > 0 ? arg.slice(eq + 1) : args[++i];
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    options.set(name, value);
    repeated.set(name, [...(repeated.get(name) ?? []), value]);
  }
  return { options, repeated, positional };
}

/** The option's value, one of `choices`; `fallback` when it is not given. */
export function choiceOption<T extends string>(args: ParsedArgs, name: string, choices: readonly T[], fallback: T): T {
  const raw = args.options.get(name);
  if (raw === undefined) return fallback;
  const choice = choices.find((candidate) => candidate === raw);
  if (choice === undefined) throw new UsageError(`--${name} must be one of ${choices.join(', ')}, not '${raw}'`);
  return choice;
}

export function integerOption(args: ParsedArgs, name: string, fallback: number, min = 0): number {
  const raw = args.options.get(name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min) throw new UsageError(`--${name} must be a whole number of at least ${min}`);
  return Number(raw);
}

