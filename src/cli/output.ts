// Where a client command writes: standard output, or a file named by --output (written synchronously,
// so that the file is whole when the command exits).
import { closeSync, openSync, writeSync } from 'node:fs';
import type { ParsedArgs } from './args.ts';
import { UsageError } from './args.ts';
import { FORMATS } from './formats.ts';
import type { Format } from './formats.ts';

export interface Output {
  write(text: string): void;
  close(): void;
}

export function openOutput(parsed: ParsedArgs): Output {
  const file = parsed.options.get('output');
  if (file === undefined) {
    // A reader that stops early (`| head`) closes the pipe: that ends the command quietly, as it does for any CLI.
    process.stdout.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      process.exit(0);
    });
    return { write: (text) => process.stdout.write(text), close: () => undefined };
  }
  const fd = openSync(file, 'w');
  return { write: (text) => writeSync(fd, text), close: () => closeSync(fd) };
}

export function formatOption(parsed: ParsedArgs): Format {
  const format = parsed.options.get('format') ?? 'json';
  if (!(FORMATS as readonly string[]).includes(format)) throw new UsageError(`--format takes ${FORMATS.join(', ')}, not '${format}'`);
  return format as Format;
}

/**
 * A progress line on standard error: rewritten in place on a terminal; on a pipe or in a log file each on a
 * line of its own (carriage returns there glue every update, and the final line, into one).
 */
export function writeProgress(text: string): void {
  process.stderr.write(`${text}${process.stderr.isTTY ? '\r' : '\n'}`);
}
