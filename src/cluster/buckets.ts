// Reading one of the cluster's KV buckets from outside the code that keeps it (a node before it joins,
// `jvmlens cluster status`): a bucket no node has made yet reads as empty; any other failure is thrown.
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';

export async function readBucket<T>(nc: NatsConnection, bucket: string, read: (kv: KV) => Promise<T>, empty: T): Promise<T> {
  try {
    return await read(await new Kvm(nc).open(bucket));
  } catch (error) {
    if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound) return empty;
    throw error;
  }
}
