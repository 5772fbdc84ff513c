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

export async function keysCommand(config: Config, args: readonly string[]): Promise<void> {
  const [action, ...rest] = args;
  const parsed = parseArgs(rest, ['user', 'scopes']);
  if (config.cluster.length > 0) return clusterKeys(config, action, parsed);
  const requests = await localRequests(config.dataDir);
  try {
    switch (action) {
      case 'create': {
        const { key, record } = newKey(requiredUser(parsed.options.get('user')), parseScopes(parsed.options.get('scopes')), Date.now());
        await requests.send({ kind: 'key.put', record });
        printCreated(key, record);
        return;
      }
      case 'list':
        printKeys((await requests.send({ kind: 'keys.list' })) as ApiKeyRecord[]);
        return;
      case 'revoke': {
        const keyId = requiredKeyId(parsed.positional[0]);
        if ((await requests.send({ kind: 'key.revoke', keyId, at: Date.now() })) !== true) throw new UsageError(`no key with id '${keyId}'`);
        process.stdout.write(`revoked ${keyId}\n`);
        return;
      }
      default:
        throw new UsageError(`usage:\n${formatUsages(KEYS_USAGE)}`);
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
async function clusterKeys(config: Config, action: string | undefined, parsed: ReturnType<typeof parseArgs>): Promise<void> {
  if (action !== 'create' && action !== 'list' && action !== 'revoke') throw new UsageError(`usage:\n${formatUsages(KEYS_USAGE)}`);
  await withClusterLog(config, async (log) => {
    switch (action) {
      case 'create': {
        const { key, record } = newKey(requiredUser(parsed.options.get('user')), parseScopes(parsed.options.get('scopes')), Date.now());
        await log.append({ kind: 'key.put', record });
        await log.readBackWrites();
        printCreated(key, record);
        return;
      }
      case 'list':
        printKeys(await clusterKeyRecords(log));
        return;
      case 'revoke': {
        const keyId = requiredKeyId(parsed.positional[0]);
        if (!(await clusterKeyRecords(log)).some((record) => record.keyId === keyId)) throw new UsageError(`no key with id '${keyId}'`);
        await log.append({ kind: 'key.revoke', keyId, at: Date.now() });
        await log.readBackWrites();
        process.stdout.write(`revoked ${keyId}\n`);
        return;
      }
    }
  });
}
