// The error registry (src/errors.ts) is the one list of codes: the README documents exactly it, and
// every code in it is raised somewhere in the source.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ERROR_CODES } from '../../src/errors.ts';
import { ROOT } from '../helpers/service.ts';

test("the README's table of error codes is the registry's, status for status", () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### Errors'), readme.indexOf('### Health'));
  const documented = Object.fromEntries([...section.matchAll(/^\| `([A-Z_]+)` \| (\d{3}) \|/gm)].map((match) => [match[1], Number(match[2])]));
  const registered = Object.fromEntries(Object.entries(ERROR_CODES).map(([code, { status }]) => [code, status]));
  assert.deepEqual(documented, registered);
});

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

test('every registered code is raised somewhere in the source', () => {
  const source = sourceFiles(join(ROOT, 'src')).filter((path) => !path.endsWith('errors.ts')).map((path) => readFileSync(path, 'utf8')).join('\n');
  for (const code of Object.keys(ERROR_CODES)) assert.match(source, new RegExp(`'${code}'`), `${code} is never raised`);
});
