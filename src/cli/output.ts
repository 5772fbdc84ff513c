// Where a client command writes: standard output, or a file named by --output (written synchronously,
// so that the file is whole when the command exits).
import { accessSync, closeSync, constants, existsSync, openSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ParsedArgs } from './args.ts';
import { UsageError } from './args.ts';
import { FORMATS } from './formats.ts';
import type { Format } from './formats.ts';

export interface Output {
  write(text: string): void;
  /** True once the reader closed the pipe (`| head`): whatever is left would be dropped, so is not worth fetching. */
  readonly readerGone: boolean;
  /** Called once everything is written, never after an error: the file then holds what was written, empty if nothing was. */
  close(): void;
}

/**
 * The command's output. A file is checked now, before any request (a report is not scheduled for a path that
 * cannot take it), and opened at the first write: a request that fails leaves an existing file as it was.
 */
export function openOutput(parsed: ParsedArgs): Output {
  const file = parsed.options.get('output');
  if (file === undefined) {
    // A reader that stops early (`| head`) closes the pipe: the rest is dropped and the command ends with its own
    // exit status (a report's state), as any CLI does.
    let readerGone = false;
    process.stdout.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      readerGone = true;
    });
    return {
      write: (text) => {
        if (!readerGone) process.stdout.write(text);
      },
      get readerGone() {
        return readerGone;
      },
      close: () => undefined,
    };
  }
  checkWritable(file);
  let fd: number | null = null;
  const open = (): number => {
    try {
      fd ??= openSync(file, 'w');
    } catch (error) {
      throw new UsageError(`cannot write --output ${file}: ${(error as Error).message}`);
    }
    return fd;
  };
  return {
    write: (text) => writeSync(open(), text),
    readerGone: false,
    close: () => closeSync(open()),
  };
}

/** A usage error unless `file` can be written: an existing writable file, or a new one in a writable directory. */
function checkWritable(file: string): void {
  const exists = existsSync(file);
  const target = exists ? file : dirname(file);
  let reason: string | null = null;
  try {
    const isDirectory = statSync(target).isDirectory();
    if (exists && isDirectory) reason = 'it is a directory';
    else if (!exists && !isDirectory) reason = `${target} is not a directory`;
    else accessSync(target, constants.W_OK);
  } catch (error) {
    reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? `no directory ${target}` : (error as Error).message;
  }
  if (reason !== null) throw new UsageError(`cannot write --output ${file}: ${reason}`);
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
