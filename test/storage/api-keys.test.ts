// API keys in a store (src/storage/keys.ts). What an operator relies on: a revoked key never works again. A
// cluster node applies key commands in the order its history gives them, which nats-server 2.9.10 can shift
// (a key's put after its revoke), and a node that missed its own write appends it again (its put once more,
// after the revoke): either way the key stays revoked.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { findKeyByHash, hashKey, listKeys, newKey, putKey, revokeKey } from '../../src/storage/keys.ts';
import { openStore } from '../../src/storage/store.ts';
import { tempDir } from '../helpers/service.ts';

const store = openStore(tempDir());
after(() => store.close());

test('a key put again after its revocation stays revoked', async () => {
  const { key, record } = newKey('ci', ['ingest'], 1_000);
  await putKey(store, record);
  assert.equal(await revokeKey(store, record.keyId, 2_000), true);
  await putKey(store, record);
  assert.equal(findKeyByHash(store, hashKey(key))?.revokedAt, 2_000);
});

test('a revocation applied before its key\'s put revokes the key when the put comes', async () => {
  const { key, record } = newKey('ops', ['read'], 1_000);
  assert.equal(await revokeKey(store, record.keyId, 3_000, true), false, 'no such key yet');
  await putKey(store, record);
  assert.equal(findKeyByHash(store, hashKey(key))?.revokedAt, 3_000);
  // The put again (a write appended again) changes nothing.
  await putKey(store, record);
  assert.equal(findKeyByHash(store, hashKey(key))?.revokedAt, 3_000);
});

test('revoking an unknown key on a single node\'s store remembers nothing: a key created with that id later works', async () => {
  const { key, record } = newKey('late', ['write'], 1_000);
  assert.equal(await revokeKey(store, record.keyId, 4_000), false);
  await putKey(store, record);
  assert.equal(findKeyByHash(store, hashKey(key))?.revokedAt, null);
  assert.ok(listKeys(store).some((listed) => listed.keyId === record.keyId && listed.revokedAt === null));
});

test('the first revocation is kept: a second one, or a put carrying another, does not move it', async () => {
  const { key, record } = newKey('twice', ['read'], 1_000);
  await putKey(store, record);
  await revokeKey(store, record.keyId, 5_000);
  await revokeKey(store, record.keyId, 6_000, true);
  await putKey(store, { ...record, revokedAt: 7_000 });
  assert.equal(findKeyByHash(store, hashKey(key))?.revokedAt, 5_000);
});
