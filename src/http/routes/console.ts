// The web console (src/console): GET / and /console give its page, /console/:file its own scripts and styles,
// /console/vendor/:file the libraries it runs on, read from their npm packages (no CDN, no build step).
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiError } from '../../errors.ts';
import type { Route } from '../types.ts';

// Maps, not plain objects: a name from the URL such as `constructor` must find nothing, not Object's members.
const TYPES = new Map([
  ['.html', 'text/html; charset=utf-8'],
  ['.js', 'text/javascript; charset=utf-8'],
  ['.mjs', 'text/javascript; charset=utf-8'],
  ['.css', 'text/css; charset=utf-8'],
  ['.svg', 'image/svg+xml'],
]);

/**
 * The libraries, by the name the page's import map gives them: a module their package exports, and the
 * browser build that sits beside it (packages need not export every file).
 */
const VENDOR = new Map<string, [specifier: string, file: string]>([
  ['preact.mjs', ['preact', 'preact.mjs']],
  ['hooks.mjs', ['preact/hooks', 'hooks.mjs']],
  ['htm.mjs', ['htm', 'htm.module.js']],
  ['chart.umd.js', ['chart.js', 'chart.umd.min.js']],
]);

/** tsc copies no JavaScript into dist/: the folder is src/console in the source tree, from src/ or dist/src/. */
function consoleFolder(): string {
  for (const relative of ['../../console/', '../../../../src/console/']) {
    const folder = fileURLToPath(new URL(relative, import.meta.url));
    if (existsSync(join(folder, 'index.html'))) return folder;
  }
  throw new Error(`console folder not found from ${fileURLToPath(import.meta.url)}`);
}

function typeOf(file: string): string | undefined {
  const dot = file.lastIndexOf('.');
  return dot < 0 ? undefined : TYPES.get(file.slice(dot));
}

export function consoleRoutes(): Route[] {
  const folder = consoleFolder();
  const require = createRequire(import.meta.url);
  const files = new Map<string, Buffer>();
  const read = (path: string): Buffer => {
    let bytes = files.get(path);
    if (bytes === undefined) files.set(path, (bytes = readFileSync(path)));
    return bytes;
  };
  const page = read(join(folder, 'index.html'));
  // The page is small and names its scripts: never cached, so a new version is picked up at once.
  const pageResponse = () => ({ status: 200, contentType: TYPES.get('.html'), raw: page, headers: { 'cache-control': 'no-cache' } });
  return [
    { method: 'GET', pattern: '/', handler: () => ({ status: 302, raw: '', headers: { location: '/console/' } }) },
    { method: 'GET', pattern: '/console', handler: pageResponse },
    {
      method: 'GET',
      pattern: '/console/:file',
      handler: (request) => {
        const { file } = request.params;
        const type = typeOf(file);
        // Only plain file names of the folder: no path separators, no hidden files.
        if (type === undefined || !/^[a-z][a-z0-9-]*\.[a-z]+$/.test(file) || !existsSync(join(folder, file))) throw new ApiError('NOT_FOUND', `no console file '${file}'`);
        return { status: 200, contentType: type, raw: read(join(folder, file)), headers: { 'cache-control': 'no-cache' } };
      },
    },
    {
      method: 'GET',
      pattern: '/console/vendor/:file',
      handler: (request) => {
        const { file } = request.params;
        const source = VENDOR.get(file);
        if (source === undefined) throw new ApiError('NOT_FOUND', `no console library '${file}'; libraries: ${[...VENDOR.keys()].join(', ')}`);
        const path = join(dirname(require.resolve(source[0])), source[1]);
        // A library changes only with its package version, which is in no URL: a day, then revalidated.
        return { status: 200, contentType: typeOf(file)!, raw: read(path), headers: { 'cache-control': 'public, max-age=86400' } };
      },
    },
  ];
}
