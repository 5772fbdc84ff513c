// With code groups, a node that read an odd history copies only a node of its own group (the others store other
// classes). The decision names the nodes that had recorded the window when it was made; its group's other node
// may record the window alike only later, and is then as good a source (log-checks.ts, `readersOfRight`): in a
// chaos run with two groups, the decision named the other group's two nodes, and the odd node found no peer.
// A node waiting for a copy takes it as soon as such a node runs, not at its next try a minute on.
// Real nodes b (which hashes other bytes than it read, `--test-faults misread-log`) and d, both of code group 0
// of 2, on one nats-server; a and c's readings (the decision's nodes, as if of group 1) are recorded by the test.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { ClusterLog } from '../../src/cluster/log.ts';
import { COPY_NOW, LogChecks, recordedWindows } from '../../src/cluster/log-checks.ts';
import { startNatsServers } from '../../src/cluster/nats-servers.ts';
import type { NatsServer } from '../../src/cluster/nats-servers.ts';
import type { Logger } from '../../src/log.ts';
import { newKey } from '../../src/storage/keys.ts';
import { openStore } from '../../src/storage/store.ts';
import type { Store } from '../../src/storage/store.ts';
import { natsMissing } from '../helpers/cluster.ts';
import { request, startService, tempDir, waitForHealth } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

const KEY = 'code_group_rebuild_test_key_0123';
let server: NatsServer | null = null;
let nc: NatsConnection | null = null;
let log: ClusterLog | null = null;
const stores: Store[] = [];
const nodes: RunningService[] = [];
const quiet: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };

after(async () => {
  await Promise.all(nodes.map((node) => node.stop()));
  await log?.close();
  await nc?.close();
  await Promise.all(stores.map((store) => store.close()));
  await server?.stop();
});

async function until(what: string, done: () => Promise<boolean> | boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    assert.ok(Date.now() < deadline, `not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const recorded = async (nodeId: string, to: number) => (await recordedWindows(nc!)).some((window) => window.nodeId === nodeId && window.to === to);

test('a node of a code group found odd copies its group\'s other node, which read the window as the decision\'s nodes did after it was made, as soon as it runs', { skip: natsMissing && 'nats-server is not installed' }, async () => {
  [server] = await startNatsServers(1, tempDir('jvmlens-code-group-rebuild-'));
  const args = (nodeId: string, ...faults: string[]) => ['--api-key', KEY, '--cluster', server!.url, '--node-id', nodeId, '--test-log-check-every', '4', '--code-groups', '2', '--code-group', '0', ...(faults.length > 0 ? ['--test-faults', faults.join(',')] : [])];
  const b = await startService({ noStaticKey: true, args: args('b', 'misread-log') });
  nodes.push(b);
  nc = await connect({ servers: server.url });
  log = await ClusterLog.open([server.url], 'jvmlens-code-group-rebuild-test', 'once');
  // Commands nobody's node wrote (keys, as `jvmlens keys create --cluster` writes them): b hands none over.
  const appendKeys = async (count: number) => {
    for (let k = 0; k < count; k++) await log!.append({ kind: 'key.put', record: newKey(`user-${k}`, ['read'], Date.now()).record });
  };
  await appendKeys(8);
  await until('b records windows 4 and 8', async () => (await recorded('b', 4)) && (await recorded('b', 8)));

  // a and c read the log as it is, so their reading is taken as right once both recorded; b hashed other bytes.
  const readings = await Promise.all(['a', 'c'].map((nodeId) => {
    const store = openStore(tempDir(`jvmlens-code-group-rebuild-${nodeId}-`));
    stores.push(store);
    return LogChecks.open(nc!, { nodeId, replicas: 1, logger: quiet, store, every: 4, live: async () => true });
  }));
  const [t4, t8] = [await log.hashOf(1, 4), await log.hashOf(5, 8)];
  for (const reading of readings) {
    await reading.record({ to: 4, crc: t4! });
    await reading.record({ to: 8, crc: t8! });
  }
  // b compares again at its next window: found odd, with no node of its group to copy, it stays DOWN.
  await appendKeys(4);
  await until('b finds no node of its group to copy', () => /no live node of this node's code group gave a copy of its data; this node starts as it is and stays DOWN/.test(b.stderr()));
  assert.match(b.stderr(), /"agreed":\["a","c"\],"peers":\[\]/);
  await waitForHealth(b, 503, 30_000);

  // d, of b's group, replays the log from its start and reads windows 4 and 8 as a and c did, after the decision.
  const d = await startService({ noStaticKey: true, args: args('d') });
  nodes.push(d);
  await until('d records window 8', () => recorded('d', 8));
  // b, waiting, sees within seconds that d could give a copy (not at its next try, a minute on), and copies it.
  await waitForHealth(b, 200, 30_000);
  // At once (its next try would have come up to a minute after its start): the copy began right after the look.
  const at = (message: string) => Date.parse((JSON.parse(b.stderr().split('\n').find((line) => line.includes(message)) ?? assert.fail(`b did not log ${message}`)) as { time: string }).time);
  const looked = at(`${COPY_NOW}","nodes":["d"]`);
  const copied = at('"message":"this node starts from a copy of a live node\'s data","from":"d"');
  assert.ok(copied >= looked && copied - looked < 20_000, `copied ${copied - looked} ms after the look`);
  assert.match(b.stderr(), /"agreed":\["a","c"\],"peers":\["d"\]/);
  assert.match(b.stderr(), /"message":"this node starts from a copy of a live node's data","from":"d"/);
  const key = await request(`${b.apiUrl}/public/instance/00000000-0000-4000-8000-000000000000`, { key: KEY });
  assert.equal(key.status, 404, 'b serves the copy');
});
