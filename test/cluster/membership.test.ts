// The membership on a real nats-server: a node's heartbeat outlives a crash by up to 15 s, but a crashed
// node no longer answers for its id. Report takeover relies on `connected()` to tell them apart at once,
// and a node restarted after a crash on `join` not to take its own leftover heartbeat for a live twin.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { LOG_FORMAT } from '../../src/cluster/commands.ts';
import { Membership, NodeIdInUseError } from '../../src/cluster/membership.ts';
import type { NodeInfo } from '../../src/cluster/membership.ts';
import { startNatsServers } from '../../src/cluster/nats-servers.ts';
import type { NatsServer } from '../../src/cluster/nats-servers.ts';
import type { Logger } from '../../src/log.ts';
import { tempDir } from '../helpers/service.ts';

const missing = spawnSync('nats-server', ['--version']).error !== undefined;
if (missing && process.env.CI === 'true') throw new Error('nats-server is not installed (apt-get install nats-server)');

let nats: NatsServer[] = [];
const connections: NatsConnection[] = [];
const logged: string[] = [];
const logger: Logger = { info: (message) => logged.push(message), warn: (message) => logged.push(message), error: (message) => logged.push(message) };

before(async () => {
  if (missing) return;
  nats = await startNatsServers(1, tempDir('jvmlens-membership-'));
});

after(async () => {
  await Promise.all(connections.map((nc) => nc.close()));
  await Promise.all(nats.map((server) => server.stop()));
});

async function join(nodeId: string): Promise<{ nc: NatsConnection; membership: Membership }> {
  const nc = await connect({ servers: nats[0].url });
  connections.push(nc);
  const info: NodeInfo = { nodeId, gatewayPort: 1, apiPort: 2, startedAt: Date.now(), codeGroup: 0, logFormat: LOG_FORMAT };
  return { nc, membership: await Membership.join(nc, info, 1, logger) };
}

test('a node whose process is gone is still live by its heartbeat but no longer connected; restarted, it joins without waiting', { skip: missing && 'nats-server is not installed' }, async () => {
  const a = await join('a');
  const b = await join('b');
  assert.deepEqual(await a.membership.live(), ['a', 'b']);
  assert.deepEqual(await a.membership.connected(), ['a', 'b']);

  // A crash: the connection goes, the heartbeat stays until it expires.
  await b.nc.close();
  assert.deepEqual(await a.membership.live(), ['a', 'b']);
  assert.deepEqual(await a.membership.connected(), ['a']);

  // Restarted: no process answers for 'b', so the heartbeat under it is its own.
  const again = await join('b');
  assert.ok(logged.includes('this node id\'s heartbeat was left by a process that is gone (no node answers for it); joining at once'));
  assert.deepEqual(await a.membership.connected(), ['a', 'b']);
  await again.membership.leave();
  assert.deepEqual(await a.membership.live(), ['a']);
});

test('a second process with a live node\'s id is refused, named by the live node\'s answer', { skip: missing && 'nats-server is not installed' }, async () => {
  await join('c');
  await assert.rejects(join('c'), (error: Error) => error instanceof NodeIdInUseError && /the node id 'c' is in use by a live node \(gateway port 1, started /.test(error.message));
});

test('every live node is listed while heartbeats are renewed meanwhile', { skip: missing && 'nats-server is not installed' }, async () => {
  const ids = ['d', 'e', 'f'];
  const ours = (listed: string[]) => listed.filter((nodeId) => ids.includes(nodeId));
  const nodes = await Promise.all(ids.map(join));
  const kv = await new Kvm(nodes[0].nc).open('jvmlens_nodes');
  const entries = await Promise.all(ids.map(async (nodeId) => (await kv.get(nodeId))!.string()));
  // Heartbeats renewed back to back: a listing of the bucket's keys by a consumer missed some of them.
  let renewing = true;
  const renewals = (async () => {
    while (renewing) await Promise.all(ids.map((nodeId, index) => kv.put(nodeId, entries[index])));
  })();
  try {
    for (let listing = 0; listing < 200; listing++) {
      assert.deepEqual(ours(await nodes[0].membership.live()), ids, `listing ${listing}`);
      assert.deepEqual(ours((await nodes[1].membership.members()).map((node) => node.nodeId)), ids, `listing ${listing}`);
    }
  } finally {
    renewing = false;
    await renewals;
    await Promise.all(nodes.map((node) => node.membership.leave()));
  }
  assert.deepEqual(ours(await nodes[0].membership.live()), []);
});
