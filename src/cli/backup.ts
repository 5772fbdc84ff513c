// `jvmlens backup DIR`: a consistent copy of a data directory, also while its service runs, which then makes
// the copy itself (storage/copy.ts, through its inbox): no second process opens the store beside it.
import { existsSync, statSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Config } from '../config.ts';
import { UsageError } from './args.ts';
import { formatUsages } from './help.ts';
import type { Usage } from './help.ts';
import { localRequests, requireDataDir } from './local-store.ts';

export const BACKUP_USAGE: readonly Usage[] = [
  { call: 'jvmlens backup DIR', does: 'copy the data directory (--data-dir) to the new directory DIR, also while the service runs' },
];

export async function backupCommand(config: Config, args: readonly string[]): Promise<void> {
  if (args.length !== 1 || args[0].startsWith('-')) throw new UsageError(`expected the directory to copy to\nusage:\n${formatUsages(BACKUP_USAGE)}`);
  // Absolute: the service that makes the copy may run in another directory.
  const target = resolve(args[0]);
  requireDataDir(config.dataDir);
  if (existsSync(target) && !statSync(target).isDirectory()) throw new UsageError(`${args[0]} is a file: a backup goes to a new directory`);
  if (existsSync(target) && (await readdir(target)).length > 0) throw new UsageError(`${args[0]} is not empty: a backup goes to a new directory`);
  const requests = await localRequests(config.dataDir, { readsOnly: true });
  try {
    await requests.send({ kind: 'backup', target });
  } finally {
    await requests.close();
  }
  const by = requests.service === null ? '' : ` (made by the running service, pid ${requests.service})`;
  process.stdout.write(`copied ${config.dataDir} to ${target}${by}\n`);
}
