// API keys (decisions §2): only a hash is stored; keys are looked up by hash and can be revoked.
import { createHash, randomBytes } from 'node:crypto';
import type { ApiKeyRecord, Scope } from './records.ts';
import type { Store } from './store.ts';

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** A new key in clear text (the only time it is ever seen) and the record that stores its hash. */
export function newKey(userId: string, scopes: readonly Scope[], now: number): { key: string; record: ApiKeyRecord } {
  const keyId = randomBytes(6).toString('hex');
  const key = `jvl_${randomBytes(24).toString('base64url')}`;
  return { key, record: { keyId, userId, scopes: [...scopes], hash: hashKey(key), createdAt: now, revokedAt: null } };
}

/** Creates a key and returns it in clear text: the only time it is ever seen. */
export async function createKey(store: Store, userId: string, scopes: readonly Scope[], now: number): Promise<{ key: string; record: ApiKeyRecord }> {
  const created = newKey(userId, scopes, now);
  await putKey(store, created.record);
  return created;
}

/** Stores a key record (a cluster node applies the ones other nodes created). */
export async function putKey(store: Store, record: ApiKeyRecord): Promise<void> {
  await store.env.transaction(() => {
    const keyId = record.keyId;
    store.keys.put(keyId, record);
    store.keyHashes.put(record.hash, keyId);
  });
  await store.env.flushed;
}

export function listKeys(store: Store): ApiKeyRecord[] {
  return [...store.keys.getRange()].map(({ value }) => value);
}

export function findKeyByHash(store: Store, hash: string): ApiKeyRecord | undefined {
  const keyId = store.keyHashes.get(hash);
  return keyId === undefined ? undefined : store.keys.get(keyId);
}

/** Marks a key revoked; false when no such key. */
export async function revokeKey(store: Store, keyId: string, now: number): Promise<boolean> {
  const revoked = await store.env.transaction(() => {
    const record = store.keys.get(keyId);
    if (record === undefined) return false;
    if (record.revokedAt === null) store.keys.put(keyId, { ...record, revokedAt: now });
    return true;
  });
  await store.env.flushed;
  return revoked;
}
