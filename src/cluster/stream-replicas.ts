// A stream of the cluster (the log, a KV bucket's) found with fewer replicas than the cluster's servers:
// an earlier version, started through one server's URL, made it so, lost with that server's disk.
import type { JetStreamManager, StreamConfig } from '@nats-io/jetstream';

/**
 * Updates stream `name` to `replicas` if it has fewer (JetStream copies its data to the new ones), and to
 * `settings` where it lacks them; a stream that has both is left alone.
 */
export async function keepReplicas(jsm: JetStreamManager, name: string, replicas: number, settings: Partial<StreamConfig> = {}): Promise<void> {
  const { config } = await jsm.streams.info(name);
  const lacking = Object.entries(settings).some(([key, value]) => config[key as keyof StreamConfig] !== value);
  if (config.num_replicas < replicas || lacking) await jsm.streams.update(name, { ...config, ...settings, num_replicas: Math.max(config.num_replicas, replicas) });
}
