// With code groups, a node that read an odd history copies only a node of its own group (the others store other
// classes). The decision names the nodes that had recorded the window when it was made; its group's other node
// may record the window alike only later, and is then as good a source (log-checks.ts, `readersOfRight`): in a
// chaos run with two groups, the decision named the other group's two nodes, and the odd node found no peer.
// A node waiting for a copy takes it as soon as such a node runs, not at its next try a minute on.
// Where every other node of its group read the window otherwise too, no copy can come: it serves its own data
// at once, its health saying so, rather than after 10 minutes DOWN (as both nodes of a group did in a chaos run).
// Real nodes b (which hashes other bytes than it read, `--test-faults misread-log`) and d, both of code group 0
// of 2, on one nats-server; a and c's readings (the decision's nodes, as if of group 1) are recorded by the test.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { LOG_FORMAT } from '../../src/cluster/commands.ts';
import { ClusterLog } from '../../src/cluster/log.ts';
import { COPY_NOW, LogChecks, NO_COPY_CAN_COME, recordedWindows } from '../../src/cluster/log-checks.ts';
import { Membership } from '../../src/cluster/membership.ts';
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
const servers: NatsServer[] = [];
const connections: NatsConnection[] = [];
const logs: ClusterLog[] = [];
const members: Membership[] = [];
const stores: Store[] = [];
const nodes: RunningService[] = [];
const quiet: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };

after(async () => {
  await Promise.all(nodes.map((node) => node.stop()));
  await Promise.all(members.map((member) => member.leave()));
  await Promise.all(logs.map((log) => log.close()));
  await Promise.all(connections.map((nc) => nc.close()));
  await Promise.all(stores.map((store) => store.close()));
  await Promise.all(servers.map((server) => server.stop()));
});

async function until(what: string, done: () => Promise<boolean> | boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    assert.ok(Date.now() < deadline, `not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * A nats-server, a connection and a log writer for one test, and what the test needs: `start` starts a node on
 * it (code group 0 of 2, with test faults); `appendKeys` writes commands nobody's node wrote (keys, as `jvmlens
 * keys create --cluster` writes them), so b hands none over; `recordRight` records a and c's readings of windows
 * 4 and 8 as the log holds them, so theirs is taken as right once both recorded.
 */
async function cluster(name: string) {
  const [server] = await startNatsServers(1, tempDir(`jvmlens-${name}-`));
  servers.push(server);
  const nc = await connect({ servers: server.url });
  connections.push(nc);
  const log = await ClusterLog.open([server.url], `jvmlens-${name}-test`, 'once');
  logs.push(log);
  const start = async (nodeId: string, ...faults: string[]) => {
    const node = await startService({ noStaticKey: true, args: ['--api-key', KEY, '--cluster', server.url, '--node-id', nodeId, '--test-log-check-every', '4', '--code-groups', '2', '--code-group', '0', ...(faults.length > 0 ? ['--test-faults', faults.join(',')] : [])] });
    nodes.push(node);
    return node;
  };
  const appendKeys = async (count: number) => {
    for (let k = 0; k < count; k++) await log.append({ kind: 'key.put', record: newKey(`user-${k}`, ['read'], Date.now()).record });
  };
  const recorded = async (nodeId: string, to: number) => (await recordedWindows(nc)).some((window) => window.nodeId === nodeId && window.to === to);
  const recordRight = async () => {
    const [t4, t8] = [await log.hashOf(1, 4), await log.hashOf(5, 8)];
    for (const nodeId of ['a', 'c']) {
      const store = openStore(tempDir(`jvmlens-${name}-${nodeId}-`));
      stores.push(store);
      const reading = await LogChecks.open(nc, { nodeId, replicas: 1, logger: quiet, store, every: 4, live: async () => true });
      await reading.record({ to: 4, crc: t4! });
      await reading.record({ to: 8, crc: t8! });
    }
  };
  return { nc, start, appendKeys, recorded, recordRight };
}

test('a node of a code group found odd copies its group\'s other node, which read the window as the decision\'s nodes did after it was made, as soon as it runs', { skip: natsMissing && 'nats-server is not installed' }, async () => {
  const { start, appendKeys, recorded, recordRight } = await cluster('code-group-rebuild');
  const b = await start('b', 'misread-log');
  await appendKeys(8);
  await until('b records windows 4 and 8', async () => (await recorded('b', 4)) && (await recorded('b', 8)));
  // a and c read the log as it is; b hashed other bytes.
  await recordRight();
  // b compares again at its next window: found odd, with no node of its group to copy, it stays DOWN.
  await appendKeys(4);
  await until('b finds no node of its group to copy', () => /no live node of this node's code group gave a copy of its data; this node starts as it is and stays DOWN/.test(b.stderr()));
  assert.match(b.stderr(), /"agreed":\["a","c"\],"peers":\[\]/);
  await waitForHealth(b, 503, 30_000);

  // d, of b's group, replays the log from its start and reads windows 4 and 8 as a and c did, after the decision.
  const d = await start('d');
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

test('two nodes of a code group that each read a window their own way, the other group running, serve their own data within seconds, their health saying so', { skip: natsMissing && 'nats-server is not installed' }, async () => {
  const { nc, start, appendKeys, recordRight } = await cluster('code-group-own-reading');
  // a and c, of group 1, run (they answer for their ids), so their reading stands for their group.
  for (const nodeId of ['a', 'c']) members.push(await Membership.join(nc, { nodeId, gatewayPort: 0, apiPort: 0, startedAt: Date.now(), codeGroup: 1, logFormat: LOG_FORMAT }, 1, quiet));
  // a and c's readings come first, so that each of b and d is found odd as it records window 4.
  await appendKeys(8);
  await recordRight();
  const b = await start('b', 'misread-log');
  const d = await start('d', 'misread-log-otherwise');
  for (const node of [b, d]) {
    await until('the node is found odd, with no node of its group to copy', () => node.stderr().includes('no live node of this node\'s code group gave a copy of its data; this node starts as it is and stays DOWN'));
    // Within seconds of its start: the 10 minutes' wait is for a node of its group that may yet read the window right.
    await waitForHealth(node, 200, 30_000);
    assert.ok(node.stderr().includes(NO_COPY_CAN_COME), node.stderr());
    const health = await request<{ note: string }>(`${node.gatewayUrl}/opthub-health`);
    assert.match(health.body.note, /degraded: this node serves its own reading of the cluster log from its commands 1 to 4 on, which a and c read otherwise/);
  }
});
