// OSV records from the paths `jvmlens cve import` is given: JSON files, directories of them, zip archives.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseJson } from '../json-text.ts';
import type { JsonSyntaxError } from '../json-text.ts';
import { readZip } from './zip.ts';

/** One record (parsed JSON, not yet validated), or why a file or entry gave none. */
export interface OsvSourceItem {
  /** Where it came from: a path, `archive.zip!entry.json`, with `[i]` for an element of a JSON array. */
  file: string;
  json?: unknown;
  error?: string;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A JSON document holds one record or an array of them. */
function* recordsOf(file: string, text: string): Generator<OsvSourceItem> {
  let json: unknown;
  try {
    json = parseJson(text);
  } catch (error) {
    const { line, column } = error as JsonSyntaxError;
    yield { file, error: `invalid JSON at line ${line}, column ${column}: ${message(error)}` };
    return;
  }
  if (Array.isArray(json)) {
    for (let i = 0; i < json.length; i++) yield { file: `${file}[${i}]`, json: json[i] };
  } else {
    yield { file, json };
  }
}

async function* fromZip(path: string): AsyncGenerator<OsvSourceItem> {
  try {
    for await (const entry of readZip(path)) {
      if (!entry.name.toLowerCase().endsWith('.json')) continue;
      const file = `${path}!${entry.name}`;
      if ('error' in entry) yield { file, error: entry.error };
      else yield* recordsOf(file, entry.data.toString('utf8'));
    }
  } catch (error) {
    yield { file: path, error: message(error) };
  }
}

type FileRead = { text: string } | { error: string };

function readText(path: string): Promise<FileRead> {
  return readFile(path, 'utf8').then(
    (text): FileRead => ({ text }),
    (error: unknown): FileRead => ({ error: message(error) }),
  );
}

function* itemsOf(path: string, read: FileRead): Generator<OsvSourceItem> {
  if ('error' in read) yield { file: path, error: read.error };
  else yield* recordsOf(path, read.text);
}

/** Files of a directory read this many ahead of the one parsed: each read is a thread-pool round trip. */
const READ_AHEAD = 16;

/** Files below a directory, depth first in name order; symbolic links are not followed. */
async function* walk(directory: string): AsyncGenerator<string> {
  const entries = await readdir(directory, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else if (entry.isFile()) yield path;
  }
}

async function* fromPath(path: string): AsyncGenerator<OsvSourceItem> {
  let isDirectory: boolean;
  try {
    isDirectory = (await stat(path)).isDirectory();
  } catch (error) {
    yield { file: path, error: message(error) };
    return;
  }
  if (!isDirectory) {
    if (path.toLowerCase().endsWith('.zip')) yield* fromZip(path);
    else yield* itemsOf(path, await readText(path));
    return;
  }
  const reads: [string, Promise<FileRead>][] = [];
  let walkError: unknown = null;
  try {
    for await (const file of walk(path)) {
      if (!file.toLowerCase().endsWith('.json')) continue;
      reads.push([file, readText(file)]);
      if (reads.length >= READ_AHEAD) {
        const [next, read] = reads.shift()!;
        yield* itemsOf(next, await read);
      }
    }
  } catch (error) {
    walkError = error;
  }
  for (const [file, read] of reads) yield* itemsOf(file, await read);
  if (walkError !== null) yield { file: path, error: message(walkError) };
}

/**
 * Every OSV record under the given paths, one at a time, so that an export of tens of thousands of
 * records never sits in memory whole. A file that cannot be read or parsed is reported and skipped.
 */
export async function* readOsvSources(paths: string[]): AsyncGenerator<OsvSourceItem> {
  for (const path of paths) yield* fromPath(path);
}
