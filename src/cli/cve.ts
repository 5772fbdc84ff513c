// `jvmlens cve import PATH…`: OSV files, folders and zip archives into the data directory (decisions §11).
import { withClusterLog } from './cluster.ts';
import type { Config } from '../config.ts';
import { localRequests } from './local-store.ts';
import { validateOsvRecord } from '../vuln/osv.ts';
import type { Vulnerability } from '../vuln/osv.ts';
import { readOsvSources } from '../vuln/sources.ts';
import { UsageError } from './args.ts';
import { cveEventsCommand, CVE_EVENTS_USAGE } from './cve-events.ts';
import { formatUsages } from './help.ts';
import type { Usage } from './help.ts';
import { writeProgress } from './output.ts';

export const CVE_USAGE: readonly Usage[] = [
  { call: 'jvmlens cve import PATH...', does: 'import OSV JSON files, folders or zip archives', notes: ['with --cluster URLS instead of --data-dir: into a cluster'] },
  CVE_EVENTS_USAGE,
];

const BATCH = 2_000;

export async function cveCommand(config: Config, args: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  const [action, ...paths] = args;
  if (action === 'events') return cveEventsCommand(paths, env);
  if (action !== 'import' || paths.length === 0) throw new UsageError(`usage:\n${formatUsages(CVE_USAGE)}`);
  const started = Date.now();
  if (config.cluster.length > 0) {
    // A cluster's import goes through its log: every node applies it.
    const counts = await withClusterLog(config, (log) => importOsv(paths, async (records) => {
      await log.appendSplit(records, (part) => ({ kind: 'vulns', records: [...part], at: started }));
      await log.readBackWrites();
      return 0;
    }));
    report(counts, started, 'into the cluster\'s log', 'every node applies them');
    return;
  }
  // Vulnerability data may be imported before a service's first start on the directory.
  const requests = await localRequests(config.dataDir, { startsStore: true });
  try {
    const counts = await importOsv(paths, async (records) => (await requests.send({ kind: 'vulns', records, at: started })) as number);
    report(counts, started, `(${counts.replaced} replaced stored ones)`, requests.service === null ? 'a service started on this directory uses them' : `the running service (pid ${requests.service}) uses them`);
  } finally {
    await requests.close();
  }
}

interface ImportCounts {
  imported: number;
  replaced: number;
  skipped: number;
}

/** Reads the OSV records of `paths` and gives the valid ones to `write`, BATCH at a time; `write` says how many it replaced. */
async function importOsv(paths: string[], write: (records: Vulnerability[]) => Promise<number>): Promise<ImportCounts> {
  const counts: ImportCounts = { imported: 0, replaced: 0, skipped: 0 };
  let pending: Vulnerability[] = [];
  let lastProgress = 0;
  const flush = async () => {
    if (pending.length === 0) return;
    counts.replaced += await write(pending);
    counts.imported += pending.length;
    pending = [];
  };
  for await (const item of readOsvSources(paths)) {
    const result = item.error !== undefined ? { ok: false as const, error: item.error } : validateOsvRecord(item.json);
    if (!result.ok) {
      counts.skipped++;
      process.stderr.write(`skipped ${item.file}: ${result.error}\n`);
      continue;
    }
    pending.push(result.vulnerability);
    if (pending.length >= BATCH) await flush();
    if (Date.now() - lastProgress > 1000) {
      lastProgress = Date.now();
      writeProgress(`cve import: ${counts.imported + pending.length} records…`);
    }
  }
  await flush();
  return counts;
}

function report({ imported, skipped }: ImportCounts, started: number, where: string, applied: string): void {
  const seconds = (Date.now() - started) / 1000;
  process.stdout.write(
    `imported ${imported} OSV records ${where}, skipped ${skipped}, in ${seconds.toFixed(1)} s (${Math.round(imported / Math.max(seconds, 0.001))} records/s)\n` +
      `${applied} within 10 seconds\n`,
  );
}
