// The curated OSV set shipped with jvmlens (src/vuln/curated/*.json), loaded on first start (decisions §11).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { validateOsvRecord } from './osv.ts';
import type { Vulnerability } from './osv.ts';

/**
 * tsc does not copy JSON into dist/, so the folder is always the one in the source tree: beside this file
 * when it runs from source (Deno), three levels up and back into src/ when it runs from dist/src/vuln.
 */
function curatedFolder(): string {
  for (const relative of ['./curated/', '../../../src/vuln/curated/']) {
    const folder = fileURLToPath(new URL(relative, import.meta.url));
    if (existsSync(folder)) return folder;
  }
  throw new Error(`curated OSV folder not found next to ${fileURLToPath(import.meta.url)}`);
}

/** Every curated record, validated; a record that does not validate is a bug in the shipped data. */
export function loadCuratedVulnerabilities(): Vulnerability[] {
  const folder = curatedFolder();
  return readdirSync(folder)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => {
      const result = validateOsvRecord(JSON.parse(readFileSync(folder + name, 'utf8')));
      if (!result.ok) throw new Error(`curated OSV record ${name} is invalid: ${result.error}`);
      return result.vulnerability;
    });
}
