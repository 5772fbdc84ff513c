// OSV records from the paths `jvmlens cve import` is given: JSON files, directories of them, zip archives.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
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
    json = JSON.parse(text);
  } catch (error) {
    yield { file, error: `invalid JSON: ${message(error)}` };
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

async function* fromJsonFile(path: string): AsyncGenerator<OsvSourceItem> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    yield { file: path, error: message(error) };
    return;
  }
  yield* recordsOf(path, text);
}

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
    yield* path.toLowerCase().endsWith('.zip') ? fromZip(path) : fromJsonFile(path);
    return;
  }
  try {
    for await (const file of walk(path)) {
      if (file.toLowerCase().endsWith('.json')) yield* fromJsonFile(file);
    }
  } catch (error) {
    yield { file: path, error: message(error) };
  }
}

/**
 * Every OSV record under the given paths, one at a time, so that an export of tens of thousands of
 * records never sits in memory whole. A file that cannot be read or parsed is reported and skipped.
 */
export async function* readOsvSources(paths: string[]): AsyncGenerator<OsvSourceItem> {
  for (const path of paths) yield* fromPath(path);
}
