// `jvmlens keys create|list|revoke`: API key management on the data directory (decisions §2).
import type { Config } from '../config.ts';
import { withClusterLog } from './cluster.ts';
import { clusterKeyRecords } from '../cluster/keys.ts';
import { newKey } from '../storage/keys.ts';
import { SCOPES } from '../storage/records.ts';
import type { ApiKeyRecord, Scope } from '../storage/records.ts';
import { localRequests } from './local-store.ts';
import { parseArgs, UsageError } from './args.ts';
import { formatUsages } from './help.ts';
import type { Usage } from './help.ts';

export const KEYS_USAGE: readonly Usage[] = [
  { call: 'jvmlens keys create --user ID [--scopes read,write,ingest]', does: 'create a key (printed once)' },
  { call: 'jvmlens keys list', does: 'list keys (never the keys themselves)' },
  { call: 'jvmlens keys revoke KEY_ID', does: 'revoke a key (effective within 10 s)', notes: ['with --cluster URLS instead of --data-dir: on every node of a cluster'] },
];

function parseScopes(raw: string | undefined): Scope[] {
  const scopes = (raw ?? 'read').split(',').map((s) => s.trim()).filter(Boolean);
  // A key with no scope opens nothing.
  if (scopes.length === 0) throw new UsageError(`--scopes needs at least one of ${SCOPES.join(', ')}`);
  for (const scope of scopes) {
    if (!(SCOPES as readonly string[]).includes(scope)) throw new UsageError(`unknown scope '${scope}'; scopes: ${SCOPES.join(', ')}`);
  }
  return scopes as Scope[];
}

function printCreated(key: string, record: ApiKeyRecord): void {
  process.stdout.write(`key id: ${record.keyId}\nuser:   ${record.userId}\nscopes: ${record.scopes.join(',')}\nkey:    ${key}\n(the key is shown only now; keep it)\n`);
}

function printKeys(keys: readonly ApiKeyRecord[]): void {
  process.stdout.write('KEY ID        USER                 SCOPES               CREATED                   REVOKED\n');
  for (const key of keys) {
    const revoked = key.revokedAt === null ? '-' : new Date(key.revokedAt).toISOString();
    process.stdout.write(`${key.keyId.padEnd(13)} ${key.userId.padEnd(20)} ${key.scopes.join(',').padEnd(20)} ${new Date(key.createdAt).toISOString()}  ${revoked}\n`);
  }
}

/** A keys command, its arguments checked: before any store is opened (or started), so a refused one changes nothing. */
type KeysAction = { kind: 'create'; key: string; record: ApiKeyRecord } | { kind: 'list' } | { kind: 'revoke'; keyId: string };

function keysAction(action: string | undefined, parsed: ReturnType<typeof parseArgs>): KeysAction {
  switch (action) {
    case 'create':
      return { kind: 'create', ...newKey(requiredUser(parsed.options.get('user')), parseScopes(parsed.options.get('scopes')), Date.now()) };
    case 'list':
      return { kind: 'list' };
    case 'revoke':
      return { kind: 'revoke', keyId: requiredKeyId(parsed.positional[0]) };
    default:
      throw new UsageError(`usage:\n${formatUsages(KEYS_USAGE)}`);
  }
}

export async function keysCommand(config: Config, args: readonly string[]): Promise<void> {
  const [action, ...rest] = args;
  const command = keysAction(action, parseArgs(rest, ['user', 'scopes']));
  if (config.cluster.length > 0) return clusterKeys(config, command);
  // A key created for a data directory before its service's first start is one it knows; a list or revocation needs its keys.
  const requests = await localRequests(config.dataDir, { startsStore: command.kind === 'create', lists: command.kind === 'list' });
  try {
    switch (command.kind) {
      case 'create':
        await requests.send({ kind: 'key.put', record: command.record });
        printCreated(command.key, command.record);
        return;
      case 'list':
        printKeys((await requests.send({ kind: 'keys.list' })) as ApiKeyRecord[]);
        return;
      case 'revoke':
        if ((await requests.send({ kind: 'key.revoke', keyId: command.keyId, at: Date.now() })) !== true) throw new UsageError(`no key with id '${command.keyId}'`);
        process.stdout.write(`revoked ${command.keyId}\n`);
        return;
    }
  } finally {
    await requests.close();
  }
}

function requiredUser(userId: string | undefined): string {
  if (userId === undefined || userId === '') throw new UsageError('keys create needs --user ID');
  return userId;
}

function requiredKeyId(keyId: string | undefined): string {
  if (keyId === undefined) throw new UsageError('keys revoke needs a KEY_ID (see keys list)');
  return keyId;
}

/** The same actions on a cluster: through its log, so every node applies them (within seconds). */
async function clusterKeys(config: Config, command: KeysAction): Promise<void> {
  await withClusterLog(config, async (log) => {
    switch (command.kind) {
      case 'create':
        await log.append({ kind: 'key.put', record: command.record });
        await log.readBackWrites();
        printCreated(command.key, command.record);
        return;
      case 'list':
        printKeys(await clusterKeyRecords(log));
        return;
      case 'revoke':
        if (!(await clusterKeyRecords(log)).some((record) => record.keyId === command.keyId)) throw new UsageError(`no key with id '${command.keyId}'`);
        await log.append({ kind: 'key.revoke', keyId: command.keyId, at: Date.now() });
        await log.readBackWrites();
        process.stdout.write(`revoked ${command.keyId}\n`);
        return;
    }
  });
}
