// The service's version, as package.json states it: found by walking up from this module, which works
// from the source (src/) and from the build (dist/src/) alike.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function packageVersion(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) return String((JSON.parse(readFileSync(file, 'utf8')) as { version?: string }).version ?? 'unknown');
    if (dirname(dir) === dir) return 'unknown';
  }
}

export const SERVICE_VERSION = packageVersion();
