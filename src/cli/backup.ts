// `jvmlens backup DIR`: a consistent copy of a data directory while its service runs (LMDB's copy of one
// read transaction, then the report pages). A cluster node runs it to give a node the log was truncated
// past a copy of its data (src/cluster/snapshot.ts).
import { existsSync } from 'node:fs';
import { cp, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../config.ts';
import { openStore, STORE_FILE } from '../storage/store.ts';
import { UsageError } from './args.ts';
import { formatUsages } from './help.ts';
import type { Usage } from './help.ts';

export const BACKUP_USAGE: readonly Usage[] = [
  { call: 'jvmlens backup DIR', does: 'copy the data directory (--data-dir) to the new directory DIR, also while the service runs' },
];

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT';
}

export async function backupCommand(config: Config, args: readonly string[]): Promise<void> {
  if (args.length !== 1 || args[0].startsWith('-')) throw new UsageError(`expected the directory to copy to\nusage:\n${formatUsages(BACKUP_USAGE)}`);
  const [target] = args;
  if (!existsSync(join(config.dataDir, STORE_FILE))) throw new UsageError(`no jvmlens data directory at ${config.dataDir} (give --data-dir)`);
  if (existsSync(target) && (await readdir(target)).length > 0) throw new UsageError(`${target} is not empty: a backup goes to a new directory`);
  await mkdir(target, { recursive: true });
  const store = openStore(config.dataDir, { readOnly: true, wholeMap: true });
  try {
    await store.env.backup(join(target, STORE_FILE), false);
  } finally {
    await store.close();
  }
  // After LMDB's copy, so that every page of a report it holds as finished is there: a page is on disk
  // before its report's final record. A report deleted meanwhile may be missing or half copied; the node
  // started on the copy applies that delete from the log.
  for (const reportId of await readdir(store.pageFiles.dir).catch((error: unknown) => (isMissing(error) ? [] : Promise.reject(error)))) {
    await cp(join(store.pageFiles.dir, reportId), join(target, 'pages', reportId), { recursive: true }).catch((error: unknown) => {
      if (!isMissing(error)) throw error;
    });
  }
  process.stdout.write(`copied ${config.dataDir} to ${target}\n`);
}
