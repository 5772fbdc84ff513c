// A node found odd by a reading taken as right waits DOWN for a copy of the data of the node that read it
// (src/cluster/log-checks.ts). When that reading no longer counts, it serves its own data again within seconds:
// it asks every few seconds rather than at its next try for a copy a minute later. The reading no longer counts
// once its node turns out to have read an odd history of an earlier window (`voided`), or once it has been gone
// for long (GONE_FOR_GOOD_MS; 3 s here): no copy would ever come. One real node (b) on a real nats-server; the
// readings of a and c are recorded by the test through LogChecks, as their nodes would record them, in the
// order of events a chaos run met.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { ClusterLog } from '../../src/cluster/log.ts';
import { FINDING_GONE, FINDING_VOIDED, LogChecks, recordedWindows } from '../../src/cluster/log-checks.ts';
import type { WindowHash } from '../../src/cluster/applied-windows.ts';
import { startNatsServers } from '../../src/cluster/nats-servers.ts';
import type { NatsServer } from '../../src/cluster/nats-servers.ts';
import type { Logger } from '../../src/log.ts';
import { newKey } from '../../src/storage/keys.ts';
import { openStore } from '../../src/storage/store.ts';
import type { Store } from '../../src/storage/store.ts';
import { natsMissing } from '../helpers/cluster.ts';
import { request, startService, tempDir, waitForHealth } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

const KEY = 'voided_finding_test_key_0123456';
const servers: NatsServer[] = [];
const connections: NatsConnection[] = [];
const stores: Store[] = [];
const nodes: RunningService[] = [];
const quiet: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };

after(async () => {
  await Promise.all(nodes.map((node) => node.stop()));
  await Promise.all(connections.map((nc) => nc.close()));
  await Promise.all(stores.map((store) => store.close()));
  await Promise.all(servers.map((server) => server.stop()));
});

/** Another node's readings, recorded as its LogChecks records them (every node counts as live). */
async function readingsOf(nc: NatsConnection, nodeId: string): Promise<LogChecks> {
  const store = openStore(tempDir(`jvmlens-voided-finding-${nodeId}-`));
  stores.push(store);
  return LogChecks.open(nc, { nodeId, replicas: 1, logger: quiet, store, every: 4, live: async () => true });
}

async function untilRecorded(nc: NatsConnection, nodeId: string, to: number): Promise<WindowHash> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const window = (await recordedWindows(nc)).find((recorded) => recorded.nodeId === nodeId && recorded.to === to);
    if (window !== undefined) return window;
    assert.ok(Date.now() < deadline, `${nodeId} did not record window ${to}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Node b, started again after a's reading of window 8 was taken as right (a, b and c read it three ways, so
 * the first by id; as n1's in the chaos run at dfdae36), DOWN and waiting for a copy that no node gives (a is
 * no node that runs); a's readings, to record more; b's hash of window 4, which c read alike; and a key the log gave b.
 */
async function oddNodeWaiting(faults: string[]) {
  const [server] = await startNatsServers(1, tempDir('jvmlens-voided-finding-'));
  servers.push(server);
  const dataDir = tempDir('jvmlens-voided-finding-b-');
  const args = ['--api-key', KEY, '--cluster', server.url, '--node-id', 'b', '--test-log-check-every', '4', ...(faults.length > 0 ? ['--test-faults', faults.join(',')] : [])];
  const first = await startService({ noStaticKey: true, dataDir, args });
  nodes.push(first);
  const nc = await connect({ servers: server.url });
  connections.push(nc);
  // Eight commands nobody's node wrote (keys created as `jvmlens keys create --cluster` does): b hands none over.
  const created = Array.from({ length: 8 }, (_, k) => newKey(`user-${k}`, ['read'], Date.now()));
  const log = await ClusterLog.open([server.url], 'jvmlens-voided-finding-test', 'once');
  try {
    for (const { record } of created) await log.append({ kind: 'key.put', record });
  } finally {
    await log.close();
  }
  const [b4, b8] = [await untilRecorded(nc, 'b', 4), await untilRecorded(nc, 'b', 8)];
  await first.stop({ keepData: true });

  const [a, c] = [await readingsOf(nc, 'a'), await readingsOf(nc, 'c')];
  await c.record({ to: 4, crc: b4.crc });
  await a.record({ to: 8, crc: b8.crc + 1 });
  await c.record({ to: 8, crc: b8.crc + 2 });
  assert.match(c.problem!, /otherwise than a, whose reading is taken as right/);

  // b starts again, records its windows again and is found odd by a's reading: no node gives it a copy, so
  // it stays DOWN on its own data.
  const b = await startService({ noStaticKey: true, dataDir, args, waitReady: false });
  nodes.push(b);
  const deadline = Date.now() + 60_000;
  while (!/no live node of this node's code group gave a copy of its data; this node starts as it is and stays DOWN/.test(b.stderr())) {
    assert.ok(Date.now() < deadline, `b did not find itself odd:\n${b.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await waitForHealth(b, 503, 30_000);
  return { b, a, b4, key: created[7].key };
}

/** b serves its own data: the keys the log gave it (a VM it does not know, rather than a key it does not know). */
async function servesItsData(b: RunningService, key: string): Promise<void> {
  const unknownVm = await request(`${b.apiUrl}/public/instance/00000000-0000-4000-8000-000000000000`, { key });
  assert.equal(unknownVm.status, 404, JSON.stringify(unknownVm.body));
}

test('a node waiting for a copy serves its own data again within seconds once the node whose reading it was found odd by turns out odd before it', { skip: natsMissing && 'nats-server is not installed' }, async () => {
  const { b, a, b4, key } = await oddNodeWaiting([]);
  assert.doesNotMatch(b.stderr(), new RegExp(FINDING_VOIDED));
  // a's window 4 at last: b and c read it alike, so a read an odd history before window 8. b's finding no
  // longer counts; b notices within seconds and serves again.
  await a.record({ to: 4, crc: b4.crc + 1 });
  assert.match(a.problem!, /commands 1 to 4 otherwise than b and c, which agree/);
  await waitForHealth(b, 200, 30_000);
  assert.match(b.stderr(), new RegExp(FINDING_VOIDED));
  await servesItsData(b, key);
});

test('a node waiting for a copy serves its own data again once the node whose reading it was found odd by has been gone long enough', { skip: natsMissing && 'nats-server is not installed' }, async () => {
  const { b, key } = await oddNodeWaiting(['soon-gone-for-good']);
  // a runs nowhere: 3 s on (in this test), at b's next look, its reading no longer counts.
  await waitForHealth(b, 200, 30_000);
  assert.match(b.stderr(), new RegExp(FINDING_GONE));
  assert.doesNotMatch(b.stderr(), new RegExp(FINDING_VOIDED));
  await servesItsData(b, key);
  // Its windows compared again, window 8 is decided without a: b's reading, b being the only node that runs.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  assert.equal((await request(`${b.gatewayUrl}/opthub-health`)).status, 200, 'b is not found odd again');
});
