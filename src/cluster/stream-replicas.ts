// A stream of the cluster (the log, a KV bucket's) found with fewer replicas than the cluster's servers:
// an earlier version, started through one server's URL, made it so, or a node made it while the servers'
// cluster still formed; lost with one server's disk, or stopped by one server down (two replicas).
import type { JetStreamManager, StreamConfig } from '@nats-io/jetstream';
import { STREAM } from './commands.ts';

/** The streams of the cluster's KV buckets: every bucket's name starts with `jvmlens_` (buckets.ts). */
const BUCKET_STREAMS = 'KV_jvmlens_';

/**
 * Updates stream `name` to `replicas` if it has fewer (JetStream copies its data to the new ones), and to
 * `settings` where it lacks them; a stream that has both is left alone.
 */
export async function keepReplicas(jsm: JetStreamManager, name: string, replicas: number, settings: Partial<StreamConfig> = {}): Promise<void> {
  const { config } = await jsm.streams.info(name);
  const lacking = Object.entries(settings).some(([key, value]) => config[key as keyof StreamConfig] !== value);
  if (config.num_replicas < replicas || lacking) await jsm.streams.update(name, { ...config, ...settings, num_replicas: Math.max(config.num_replicas, replicas) });
}

/** The log's stream and every bucket's, each updated to `replicas` if it has fewer. */
export async function keepClusterReplicas(jsm: JetStreamManager, replicas: number): Promise<void> {
  await keepReplicas(jsm, STREAM, replicas);
  for await (const name of jsm.streams.names()) if (name.startsWith(BUCKET_STREAMS)) await keepReplicas(jsm, name, replicas);
}
