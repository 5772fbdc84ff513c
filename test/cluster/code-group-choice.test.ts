// A node started without --code-group (src/cluster/code-group-choice.ts) takes the group with the fewest live
// nodes at its first start and keeps it: nodes started at once spread over the groups, a node started in
// place of a stopped one fills its group, and a restarted node keeps the group its data directory records.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { STREAM } from '../../src/cluster/commands.ts';
import { jetstreamManager } from '@nats-io/jetstream';
import { chooseCodeGroup, dropClaim, leastHeldGroup } from '../../src/cluster/code-group-choice.ts';
import { goneNode, liveNodes } from '../../src/cluster/membership.ts';
import { startNatsServers } from '../../src/cluster/nats-servers.ts';
import type { NatsServer } from '../../src/cluster/nats-servers.ts';
import type { Logger } from '../../src/log.ts';
import { natsMissing } from '../helpers/cluster.ts';
import { ingest, vmStart } from '../helpers/events.ts';
import { request, runCli, startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

const skip = natsMissing && 'nats-server is not installed';
const quiet: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };
const KEY = 'code-group-choice-key';
let dir = '';
let nats: NatsServer[] = [];
let nc: NatsConnection | null = null;

before(async () => {
  if (natsMissing) return;
  dir = tempDir('jvmlens-code-group-choice-');
  nats = await startNatsServers(1, dir);
  nc = await connect({ servers: nats[0].url });
});

after(async () => {
  await Promise.all([...running.values()].map((service) => service.stop()));
  await nc?.close();
  await Promise.all(nats.map((server) => server.stop()));
});

test('the least held group: live nodes and claims of nodes not live yet count, a claim for a minute; ties go to the lowest', () => {
  const now = 1_000_000;
  assert.equal(leastHeldGroup(3, [], {}, now), 0);
  assert.equal(leastHeldGroup(3, [{ nodeId: 'a', codeGroup: 0 }], {}, now), 1);
  assert.equal(leastHeldGroup(3, [{ nodeId: 'a', codeGroup: 0 }], { b: { codeGroup: 1, at: now - 1_000 } }, now), 2);
  assert.equal(leastHeldGroup(3, [{ nodeId: 'a', codeGroup: 0 }], { a: { codeGroup: 0, at: now }, b: { codeGroup: 1, at: now - 61_000 } }, now), 1, 'a counted once; b\'s claim lapsed');
  assert.equal(leastHeldGroup(2, [{ nodeId: 'a', codeGroup: 1 }, { nodeId: 'b', codeGroup: 1 }, { nodeId: 'c', codeGroup: 0 }], {}, now), 0);
  // A node that must copy a live node's data first takes a group a live node stores.
  const twoInOne = [{ nodeId: 'a', codeGroup: 1 }, { nodeId: 'b', codeGroup: 1 }, { nodeId: 'c', codeGroup: 2 }];
  assert.equal(leastHeldGroup(3, twoInOne, {}, now), 0);
  assert.equal(leastHeldGroup(3, twoInOne, {}, now, true), 2);
  assert.equal(leastHeldGroup(3, [], { b: { codeGroup: 0, at: now } }, now, true), 1, 'no live node: any group');
});

test('six nodes choosing at once over one nats-server take two of each of three groups; a node asking again gets its claim until it drops it', { skip }, async () => {
  const ids = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'];
  const chosen = await Promise.all(ids.map((nodeId) => chooseCodeGroup(nc!, nodeId, 3, 1, quiet)));
  assert.deepEqual([...chosen].sort(), [0, 0, 1, 1, 2, 2]);
  assert.equal(await chooseCodeGroup(nc!, 'p4', 3, 1, quiet), chosen[3]);
  for (const nodeId of ids) await dropClaim(nc!, nodeId, 1);
  assert.equal(await chooseCodeGroup(nc!, 'p7', 3, 1, quiet), 0, 'no claim counts after they were dropped');
  await dropClaim(nc!, 'p7', 1);
});

/** The group of each node whose process runs (a killed node's heartbeat outlives it by up to 15 s). */
async function groupsOfLiveNodes(): Promise<Record<string, number>> {
  const alive = [];
  for (const node of await liveNodes(nc!)) if (!(await goneNode(nc!, node.nodeId))) alive.push(node);
  return Object.fromEntries(alive.map((node) => [node.nodeId, node.codeGroup]));
}

const running = new Map<string, RunningService>();

async function node(nodeId: string): Promise<void> {
  // A retention of a second: the last test's node finds the log truncated.
  const args = ['--api-key', KEY, '--cluster', nats[0].url, '--node-id', nodeId, '--code-groups', '3', '--log-retention-ms', '1000'];
  running.set(nodeId, await startService({ noStaticKey: true, dataDir: `${dir}/${nodeId}`, args }));
}

async function stop(nodeId: string, keepData = false): Promise<void> {
  await running.get(nodeId)!.stop({ keepData });
  running.delete(nodeId);
}

test('nodes started at once without --code-group spread over the groups; one started in place of a killed node takes its group; a restarted node keeps its own', { skip }, async () => {
  await Promise.all(['a', 'b', 'c'].map(node));
  const first = await groupsOfLiveNodes();
  assert.deepEqual(Object.values(first).sort(), [0, 1, 2], JSON.stringify(first));
  // The operator sees which group each took.
  const byGroup = ['a', 'b', 'c'].sort((x, y) => first[x] - first[y]);
  const shown = await runCli(['cluster', 'status', '--cluster', nats[0].url]);
  assert.match(shown.stdout, new RegExp(`^groups +0: ${byGroup[0]}; 1: ${byGroup[1]}; 2: ${byGroup[2]}$`, 'm'), shown.stdout);

  // The node of group 1 is killed; d, started in its place at once (the killed node's heartbeat not expired
  // yet), takes group 1, where counting that heartbeat it would take group 0.
  const [killed, others] = [byGroup[1], [byGroup[0], byGroup[2]]];
  await running.get(killed)!.stop({ signal: 'SIGKILL' });
  running.delete(killed);
  await node('d');
  const second = await groupsOfLiveNodes();
  assert.deepEqual(second, { ...Object.fromEntries(others.map((nodeId) => [nodeId, first[nodeId]])), d: 1 });

  // The node of group 1 stops; the node of group 2 restarts on its data directory and stores group 2 still,
  // where a node choosing now would take group 1.
  const holder = (group: number) => Object.entries(second).find(([, held]) => held === group)![0];
  const [one, two] = [holder(1), holder(2)];
  await stop(one);
  await stop(two, true);
  await node(two);
  assert.equal((await groupsOfLiveNodes())[two], 2);
  // Once the killed node's heartbeat expired (status lists the nodes whose heartbeats are live).
  const wanted = new RegExp(`^groups +0: ${holder(0)}; 1: no live node; 2: ${two}$`, 'm');
  let left = '';
  for (const deadline = Date.now() + 30_000; !wanted.test(left); await new Promise((resolve) => setTimeout(resolve, 500))) {
    assert.ok(Date.now() < deadline, left);
    left = (await runCli(['cluster', 'status', '--cluster', nats[0].url])).stdout;
  }
});

test('a new node that must copy a live node\'s data first takes the least held group a live node stores', { skip }, async () => {
  // Group 1 has no live node now: its data is nowhere to copy.
  const live = await groupsOfLiveNodes();
  assert.deepEqual(Object.values(live).sort(), [0, 2], JSON.stringify(live));
  for (const gone of ['a', 'b', 'c', 'd'].filter((nodeId) => !(nodeId in live))) {
    // Their places would hold the log for them (one stopped before it recorded a place has none).
    const forgot = await runCli(['cluster', 'forget', gone, '--cluster', nats[0].url]);
    assert.ok(forgot.code === 0 || /holds no place in the cluster log/.test(forgot.stderr), forgot.stderr);
  }
  const [through] = [...running.values()];
  const batch = await ingest(through.gatewayUrl, KEY, [vmStart('vm-before-copy', Date.now() - 1_000)]);
  assert.equal(batch.status, 200, JSON.stringify(batch.body));
  const jsm = await jetstreamManager(nc!);
  const deadline = Date.now() + 30_000;
  while ((await jsm.streams.info(STREAM)).state.messages > 0) {
    assert.ok(Date.now() < deadline, 'the log is truncated');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }

  await node('e');
  assert.match(running.get('e')!.stderr(), /this node starts from a copy of a live node's data/);
  assert.equal((await groupsOfLiveNodes()).e, 0, 'a node choosing without a copy to take would store group 1');
  assert.equal((await request(`${running.get('e')!.apiUrl}/public/instance/vm-before-copy`, { key: KEY })).status, 200);
});
