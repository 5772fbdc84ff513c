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

/**
 * A revocation is final. A cluster node can get a key's put again after its revoke (the put appended again
 * by a node that missed it in the log: src/cluster/acknowledged-writes.ts) or only after it (a history
 * nats-server 2.9.10 shifted), and the key must stay revoked on every node either way: the meta key that
 * holds a revocation which came before its key.
 */
const REVOKED_BEFORE_PUT = 'revokedBeforePut.';

/** The revocation a key keeps: the first one known, in the order given (null: not revoked). */
export function firstRevocation(...revocations: (number | null | undefined)[]): number | null {
  return revocations.find((at) => at !== null && at !== undefined) ?? null;
}

/** Stores a key record (a cluster node applies the ones other nodes created), revoked if its key was. */
export async function putKey(store: Store, record: ApiKeyRecord): Promise<void> {
  await store.env.transaction(() => {
    const keyId = record.keyId;
    const early = store.meta.get(REVOKED_BEFORE_PUT + keyId) as number | undefined;
    const revokedAt = firstRevocation(store.keys.get(keyId)?.revokedAt, early, record.revokedAt);
    store.keys.put(keyId, { ...record, revokedAt });
    store.keyHashes.put(record.hash, keyId);
    if (early !== undefined) store.meta.remove(REVOKED_BEFORE_PUT + keyId);
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

/**
 * Marks a key revoked; false when no such key. `beforePut`: a key not stored yet is revoked when its put
 * comes (a cluster node applying the log), rather than unknown (the command line on a single node's store).
 */
export async function revokeKey(store: Store, keyId: string, now: number, beforePut = false): Promise<boolean> {
  const revoked = await store.env.transaction(() => {
    const record = store.keys.get(keyId);
    if (record === undefined) {
      if (beforePut && store.meta.get(REVOKED_BEFORE_PUT + keyId) === undefined) store.meta.put(REVOKED_BEFORE_PUT + keyId, now);
      return false;
    }
    if (record.revokedAt === null) store.keys.put(keyId, { ...record, revokedAt: now });
    return true;
  });
  await store.env.flushed;
  return revoked;
}
