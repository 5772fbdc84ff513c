// `jvmlens cve import PATH…`: OSV files, folders and zip archives into the data directory (decisions §11).
import { openClusterLog } from './cluster.ts';
import type { Config } from '../config.ts';
import { openLocalStore } from './local-store.ts';
import { putVulnerabilities } from '../storage/vulns.ts';
import { validateOsvRecord } from '../vuln/osv.ts';
import type { Vulnerability } from '../vuln/osv.ts';
import { readOsvSources } from '../vuln/sources.ts';
import { UsageError } from './args.ts';
import { cveEventsCommand, CVE_EVENTS_USAGE } from './cve-events.ts';

export const CVE_USAGE = `jvmlens cve import PATH...                                   import OSV JSON files, folders or zip archives
  (with --cluster URLS instead of --data-dir: into a cluster)
${CVE_EVENTS_USAGE}`;

const BATCH = 2_000;

export async function cveCommand(config: Config, args: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  const [action, ...paths] = args;
  if (action === 'events') return cveEventsCommand(paths, env);
  if (action !== 'import' || paths.length === 0) throw new UsageError(`usage:\n${CVE_USAGE}`);
  // A cluster's import goes through its log: every node applies it.
  const log = config.cluster.length > 0 ? await openClusterLog(config) : null;
  const store = log === null ? await openLocalStore(config.dataDir) : null;
  const started = Date.now();
  let imported = 0;
  let replaced = 0;
  let skipped = 0;
  let pending: Vulnerability[] = [];
  let lastProgress = 0;
  const flush = async () => {
    if (pending.length === 0) return;
    if (store !== null) replaced += await putVulnerabilities(store, pending, started);
    else {
      await log!.appendSplit(pending, (records) => ({ kind: 'vulns', records: [...records], at: started }));
      await log!.readBackWrites();
    }
    imported += pending.length;
    pending = [];
  };
  try {
    for await (const item of readOsvSources(paths)) {
      const result = item.error !== undefined ? { ok: false as const, error: item.error } : validateOsvRecord(item.json);
      if (!result.ok) {
        skipped++;
        process.stderr.write(`skipped ${item.file}: ${result.error}\n`);
        continue;
      }
      pending.push(result.vulnerability);
      if (pending.length >= BATCH) await flush();
      if (Date.now() - lastProgress > 1000) {
        lastProgress = Date.now();
        process.stderr.write(`cve import: ${imported + pending.length} records…\r`);
      }
    }
    await flush();
  } finally {
    await store?.close();
    await log?.close();
  }
  const seconds = (Date.now() - started) / 1000;
  process.stdout.write(
    `imported ${imported} OSV records${store === null ? ' into the cluster\'s log' : ` (${replaced} replaced stored ones)`}, skipped ${skipped}, in ${seconds.toFixed(1)} s (${Math.round(imported / Math.max(seconds, 0.001))} records/s)\n` +
      `${store === null ? 'every node applies them' : 'a running service applies them'} within 10 seconds\n`,
  );
}
