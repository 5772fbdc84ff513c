// `jvmlens keys create|list|revoke`: API key management on the data directory (decisions §2).
import type { Config } from '../config.ts';
import { createKey, listKeys, revokeKey } from '../storage/keys.ts';
import { SCOPES } from '../storage/records.ts';
import type { Scope } from '../storage/records.ts';
import { openStore } from '../storage/store.ts';
import { parseArgs, UsageError } from './args.ts';

export const KEYS_USAGE = `jvmlens keys create --user ID [--scopes read,write,ingest]   create a key (printed once)
jvmlens keys list                                            list keys (never the keys themselves)
jvmlens keys revoke KEY_ID                                   revoke a key (effective within 10 s)`;

export async function keysCommand(config: Config, args: readonly string[]): Promise<void> {
  const [action, ...rest] = args;
  const parsed = parseArgs(rest, ['user', 'scopes']);
  const store = openStore(config.dataDir);
  try {
    switch (action) {
      case 'create': {
        const userId = parsed.options.get('user');
        if (userId === undefined || userId === '') throw new UsageError('keys create needs --user ID');
        const scopes = (parsed.options.get('scopes') ?? 'read').split(',').map((s) => s.trim()).filter(Boolean);
        for (const scope of scopes) {
          if (!(SCOPES as readonly string[]).includes(scope)) throw new UsageError(`unknown scope '${scope}'; scopes: ${SCOPES.join(', ')}`);
        }
        const { key, record } = await createKey(store, userId, scopes as Scope[], Date.now());
        process.stdout.write(`key id: ${record.keyId}\nuser:   ${record.userId}\nscopes: ${record.scopes.join(',')}\nkey:    ${key}\n(the key is shown only now; keep it)\n`);
        return;
      }
      case 'list': {
        const keys = listKeys(store);
        process.stdout.write('KEY ID        USER                 SCOPES               CREATED                   REVOKED\n');
        for (const key of keys) {
          const revoked = key.revokedAt === null ? '-' : new Date(key.revokedAt).toISOString();
          process.stdout.write(`${key.keyId.padEnd(13)} ${key.userId.padEnd(20)} ${key.scopes.join(',').padEnd(20)} ${new Date(key.createdAt).toISOString()}  ${revoked}\n`);
        }
        return;
      }
      case 'revoke': {
        const keyId = parsed.positional[0];
        if (keyId === undefined) throw new UsageError('keys revoke needs a KEY_ID (see keys list)');
        if (!(await revokeKey(store, keyId, Date.now()))) throw new UsageError(`no key with id '${keyId}'`);
        process.stdout.write(`revoked ${keyId}\n`);
        return;
      }
      default:
        throw new UsageError(`usage:\n${KEYS_USAGE}`);
    }
  } finally {
    await store.close();
  }
}
