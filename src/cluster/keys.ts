// The cluster's API keys as `jvmlens keys list|revoke --cluster` read them: the records saved by the node that
// truncated the log past key commands, with the key commands the log still holds folded over them.
import type { KV } from '@nats-io/kv';
import { firstRevocation } from '../storage/keys.ts';
import type { ApiKeyRecord } from '../storage/records.ts';
import { bucketEntries, keptBucket, readBucket } from './buckets.ts';
import { KEYS_SUBJECT } from './commands.ts';
import type { ClusterLog } from './log.ts';

const KEYS_BUCKET = 'jvmlens_keys';

export function openKeyRecords(log: ClusterLog, replicas: number): Promise<KV> {
  return keptBucket(log.nc, KEYS_BUCKET, { replicas });
}

/**
 * Before the log drops key commands: saves the keys as the truncating node holds them (it applied the log
 * at least up to where it truncates), each record that differs from the saved one.
 */
export async function saveKeyRecords(kv: KV, records: readonly ApiKeyRecord[]): Promise<void> {
  const saved = new Map((await bucketEntries(kv)).map((entry) => [entry.key, entry.string()]));
  for (const record of records) {
    const json = JSON.stringify(record);
    if (saved.get(record.keyId) !== json) await kv.put(record.keyId, json);
  }
}

/**
 * Every key of the cluster. The log is read before the saved records: the key commands a truncation drops
 * in between were saved before it dropped them. The commands read, folded over records at least as new,
 * give what the last of them says for each key, but a revocation is final, as on the nodes (putKey).
 */
export async function clusterKeyRecords(log: ClusterLog): Promise<ApiKeyRecord[]> {
  const commands = await log.read(KEYS_SUBJECT);
  const saved = await log.untilAnswered(() => readBucket(log.nc, KEYS_BUCKET, async (kv) => (await bucketEntries(kv)).map((entry) => entry.json<ApiKeyRecord>()), []));
  const keys = new Map(saved.map((record) => [record.keyId, record]));
  const revokedBeforePut = new Map<string, number>();
  for (const command of commands) {
    if (command.kind === 'key.put') {
      const { keyId } = command.record;
      keys.set(keyId, { ...command.record, revokedAt: firstRevocation(keys.get(keyId)?.revokedAt, revokedBeforePut.get(keyId), command.record.revokedAt) });
    } else if (command.kind === 'key.revoke') {
      const record = keys.get(command.keyId);
      if (record === undefined) revokedBeforePut.set(command.keyId, revokedBeforePut.get(command.keyId) ?? command.at);
      else if (record.revokedAt === null) keys.set(command.keyId, { ...record, revokedAt: command.at });
    }
  }
  return [...keys.values()];
}
