// The layout of `jvmlens --help` and each command's usage: every description in one column, every line
// wrapped to the terminal's width (100 columns when the output is not a terminal).

/** One way to call a command and what it does; `notes`: lines under it (more options, exit statuses). */
export interface Usage {
  call: string;
  does: string;
  /** A command line, never wrapped, so that it can be copied. */
  example?: string;
  notes?: readonly string[];
}

/** Where every command's description starts: calls longer than this put theirs on the next line. */
const DOES_COLUMN = 50;
const NOTE_INDENT = 6;
const NARROWEST = 72;

export function helpWidth(): number {
  return process.stdout.isTTY && process.stdout.columns > 0 ? Math.max(NARROWEST, process.stdout.columns) : 100;
}

/**
 * `text` in lines of at most `width` characters, the first starting at `first` (the caller wrote what comes
 * before it) and the others indented by `indent`. Plain ASCII text: a word longer than a line stands alone.
 */
export function wrap(text: string, width: number, first: number, indent: number): string {
  const lines: string[] = [];
  let line = '';
  let column = first;
  for (const word of text.split(' ').filter((part) => part !== '')) {
    const room = line === '' ? column : column + line.length + 1;
    if (line !== '' && room + word.length > width) {
      lines.push(line);
      line = word;
      column = indent;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  lines.push(line);
  return lines.join(`\n${' '.repeat(indent)}`);
}

/** `notes: false` for the list of every command, which leaves each command's details to its own help. */
export function formatUsages(usages: readonly Usage[], { width = helpWidth(), notes: withNotes = true } = {}): string {
  return usages.map(({ call, does, example, notes = [] }) => {
    const head = call.length < DOES_COLUMN - 1
      ? `${call.padEnd(DOES_COLUMN)}${wrap(does, width, DOES_COLUMN, DOES_COLUMN)}`
      : `${wrap(call, width, 0, 4)}\n${' '.repeat(DOES_COLUMN)}${wrap(does, width, DOES_COLUMN, DOES_COLUMN)}`;
    if (!withNotes) return head;
    const indent = ' '.repeat(NOTE_INDENT);
    const lines = notes.map((note) => `${indent}${wrap(note, width, NOTE_INDENT, NOTE_INDENT + 2)}`);
    if (example !== undefined) lines.push(`${indent}e.g. ${example}`);
    return [head, ...lines].join('\n');
  }).join('\n');
}

/** The service's settings: flag, environment variable, what it sets. */
export function formatSettings(settings: readonly { flag: string; env: string; describe: string }[], { width = helpWidth() } = {}): string {
  const flagWidth = Math.max(...settings.map((setting) => setting.flag.length)) + 2;
  const envWidth = Math.max(...settings.map((setting) => setting.env.length)) + 2;
  const column = 2 + flagWidth + envWidth;
  return settings.map((setting) => `  ${setting.flag.padEnd(flagWidth)}${setting.env.padEnd(envWidth)}${wrap(setting.describe, width, column, column)}`).join('\n');
}
