// A node that finds it read an odd history rebuilds itself even when JetStream refuses the mark that tells
// the other nodes so (a chaos run's node hit "jetstream is not enabled" there, never rebuilt, and stayed
// DOWN). Real nats-server: the odd node's user may not publish to the marks' subjects.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { after, before, test } from 'node:test';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { LogChecks, storedOddWindow } from '../../src/cluster/log-checks.ts';
import { freePort } from '../../src/free-port.ts';
import type { Logger } from '../../src/log.ts';
import { openStore } from '../../src/storage/store.ts';
import type { Store } from '../../src/storage/store.ts';
import { natsMissing, startNatsServer } from '../helpers/cluster.ts';
import { tempDir } from '../helpers/service.ts';

if (natsMissing && process.env.CI === 'true') throw new Error('nats-server is not installed (apt-get install nats-server)');
const skip = natsMissing && 'nats-server is not installed';

let natsServer: ChildProcess | undefined;
let port = 0;
const connections: NatsConnection[] = [];
const stores: Store[] = [];
const warned: string[] = [];
const logger: Logger = { info: () => undefined, warn: (message) => warned.push(message), error: () => undefined };

before(async () => {
  if (skip) return;
  const dir = tempDir('jvmlens-log-checks-unmarked-');
  port = await freePort();
  writeFileSync(join(dir, 'nats.conf'), `listen: "127.0.0.1:${port}"
jetstream { store_dir: "${join(dir, 'js')}" }
authorization {
  users: [
    { user: node, password: node-password }
    { user: unmarked, password: unmarked-password, permissions: { publish: { deny: ["$KV.jvmlens_log_checks.odd.>"] } } }
  ]
}
`);
  natsServer = await startNatsServer(['-c', join(dir, 'nats.conf')], port);
});

after(async () => {
  await Promise.all(connections.map((nc) => nc.close()));
  await Promise.all(stores.map((store) => store.close()));
  natsServer?.kill();
});

async function checksOf(nodeId: string, user: 'node' | 'unmarked', foundOdd: () => void = () => undefined): Promise<{ checks: LogChecks; store: Store }> {
  const nc = await connect({ servers: `nats://127.0.0.1:${port}`, user, pass: `${user}-password` });
  connections.push(nc);
  const store = openStore(tempDir(`jvmlens-log-checks-unmarked-${nodeId}-`));
  stores.push(store);
  return { checks: await LogChecks.open(nc, { nodeId, replicas: 1, logger, store, every: 4, foundOdd, live: async () => true }), store };
}

test('a node whose odd reading cannot be marked in the bucket still rebuilds itself, and its store says why', { skip }, async () => {
  const [n1, n2] = [await checksOf('n1', 'node'), await checksOf('n2', 'node')];
  let rebuilds = 0;
  const n3 = await checksOf('n3', 'unmarked', () => rebuilds++);
  await n1.checks.record({ to: 4, crc: 1 });
  await n2.checks.record({ to: 4, crc: 1 });
  await n3.checks.record({ to: 4, crc: 2 });
  assert.equal(rebuilds, 1, 'told to rebuild itself');
  assert.deepEqual(storedOddWindow(n3.store), { to: 4, nodes: ['n1', 'n2'] });
  assert.match(n3.checks.problem!, /commands 1 to 4 otherwise than n1 and n2, which agree/);
  assert.ok(warned.includes('marking this node as having read an odd history failed; it is marked at the next window it records'), warned.join('\n'));
});
