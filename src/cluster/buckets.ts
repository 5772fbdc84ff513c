// The cluster's KV buckets. `keptBucket`: for the code that keeps one. `readBucket`: from outside it (a node
// before it joins, `jvmlens cluster status`), where a bucket no node has made yet reads as empty.
// `bucketEntries`: what a bucket holds, for every reader.
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import { Bucket, Kvm } from '@nats-io/kv';
import type { KV, KvEntry } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { keepReplicas } from './stream-replicas.ts';

/**
 * Opens a bucket, created with `replicas` if there is none yet; one created with fewer gets `replicas` now.
 * Every bucket's name starts with `jvmlens_`: a node raises their replicas as the servers name more (stream-replicas.ts).
 */
export async function keptBucket(nc: NatsConnection, name: string, options: { replicas: number; ttl?: number }): Promise<KV> {
  const kv = await new Kvm(nc).create(name, { ...options, history: 1 });
  // Kvm gives Buckets; the interface hides their stream.
  if (!(kv instanceof Bucket)) throw new TypeError('keptBucket keeps a bucket that Kvm opened');
  await keepReplicas(kv.jsm, kv.stream, options.replicas);
  return kv;
}

export async function readBucket<T>(nc: NatsConnection, bucket: string, read: (kv: KV) => Promise<T>, empty: T): Promise<T> {
  try {
    return await read(await new Kvm(nc).open(bucket));
  } catch (error) {
    if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound) return empty;
    throw error;
  }
}

/**
 * The entries a bucket holds now (of `keys`, a NATS subject filter), sorted by key, without deleted ones.
 * Not listed by `kv.keys()`: its consumer misses a key whose entry is replaced while it lists, as heartbeats
 * and positions are every few seconds (a code report then found no live node of a group, and truncation could
 * pass a node's position). The stream's count of messages per subject is one answer of its leader, a replaced
 * entry still counted.
 */
export async function bucketEntries(kv: KV, keys = '>'): Promise<KvEntry[]> {
  // Kvm gives Buckets; the interface hides their stream.
  if (!(kv instanceof Bucket)) throw new TypeError('bucketEntries reads a bucket that Kvm opened');
  const subjectPrefix = `${kv.prefix}.`;
  const info = await kv.jsm.streams.info(kv.stream, { subjects_filter: `${subjectPrefix}${keys}` });
  const found = Object.keys(info.state.subjects ?? {}).map((subject) => subject.slice(subjectPrefix.length)).sort();
  const entries = await Promise.all(found.map((key) => kv.get(key)));
  return entries.filter((entry): entry is KvEntry => entry !== null && entry.operation === 'PUT');
}
