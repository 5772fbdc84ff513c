// A node found odd by a reading taken as right that then turns out to be of a node that read an odd history of
// an earlier window (src/cluster/log-checks.ts, `voided`) serves its own data again within seconds: while it waits
// for a copy that no node gives, it asks every few seconds whether its finding still counts, rather than at its
// next try a minute later. One real node (b) on a real nats-server; the readings of a and c are recorded by the
// test through LogChecks, as their nodes would record them, in the order of events a chaos run met.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { ClusterLog } from '../../src/cluster/log.ts';
import { FINDING_VOIDED, LogChecks, recordedWindows } from '../../src/cluster/log-checks.ts';
import type { WindowHash } from '../../src/cluster/log-checks.ts';
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
let nats: NatsServer[] = [];
let nc: NatsConnection | null = null;
const stores: Store[] = [];
const nodes: RunningService[] = [];
const quiet: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };

before(async () => {
  if (!natsMissing) nats = await startNatsServers(1, tempDir('jvmlens-voided-finding-'));
});

after(async () => {
  await Promise.all(nodes.map((node) => node.stop()));
  await nc?.close();
  await Promise.all(stores.map((store) => store.close()));
  await Promise.all(nats.map((server) => server.stop()));
});

/** Another node's readings, recorded as its LogChecks records them (every node counts as live). */
async function readingsOf(nodeId: string): Promise<LogChecks> {
  const store = openStore(tempDir(`jvmlens-voided-finding-${nodeId}-`));
  stores.push(store);
  return LogChecks.open(nc!, { nodeId, replicas: 1, logger: quiet, store, every: 4, live: async () => true });
}

async function untilRecorded(nodeId: string, to: number): Promise<WindowHash> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const window = (await recordedWindows(nc!)).find((recorded) => recorded.nodeId === nodeId && recorded.to === to);
    if (window !== undefined) return window;
    assert.ok(Date.now() < deadline, `${nodeId} did not record window ${to}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('a node waiting for a copy serves its own data again within seconds once the reading it was found odd by no longer counts', { skip: natsMissing && 'nats-server is not installed' }, async () => {
  const url = nats[0].url;
  const dataDir = tempDir('jvmlens-voided-finding-b-');
  const args = ['--api-key', KEY, '--cluster', url, '--node-id', 'b', '--test-log-check-every', '4'];
  nodes.push(await startService({ noStaticKey: true, dataDir, args }));
  nc = await connect({ servers: url });
  // Eight commands nobody's node wrote (keys created as `jvmlens keys create --cluster` does): b hands none over.
  const created = Array.from({ length: 8 }, (_, k) => newKey(`user-${k}`, ['read'], Date.now()));
  const log = await ClusterLog.open([url], 'jvmlens-voided-finding-test', 'once');
  try {
    for (const { record } of created) await log.append({ kind: 'key.put', record });
  } finally {
    await log.close();
  }
  const [b4, b8] = [await untilRecorded('b', 4), await untilRecorded('b', 8)];
  await nodes[0].stop({ keepData: true });

  // While b is stopped: c reads window 4 as b did; a, b and c read window 8 three ways, so a's reading is
  // taken as right (the first by id), as n1's was in the chaos run at dfdae36, before a's window 4 is known.
  const [a, c] = [await readingsOf('a'), await readingsOf('c')];
  await c.record({ to: 4, crc: b4.crc });
  await a.record({ to: 8, crc: b8.crc + 1 });
  await c.record({ to: 8, crc: b8.crc + 2 });
  assert.match(c.problem!, /otherwise than a, whose reading is taken as right/);

  // b starts again, records its windows again and is found odd by a's reading: no node gives it a copy (a is
  // no node that runs), so it stays DOWN on its own data.
  const b = await startService({ noStaticKey: true, dataDir, args, waitReady: false });
  nodes.push(b);
  const deadline = Date.now() + 60_000;
  while (!/no live node of this node's code group gave a copy of its data; this node starts as it is and stays DOWN/.test(b.stderr())) {
    assert.ok(Date.now() < deadline, `b did not find itself odd:\n${b.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await waitForHealth(b, 503, 30_000);
  assert.doesNotMatch(b.stderr(), new RegExp(FINDING_VOIDED));

  // a's window 4 at last: b and c read it alike, so a read an odd history before window 8. b's finding no
  // longer counts; b notices within seconds (its next try for a copy would be a minute away) and serves again.
  await a.record({ to: 4, crc: b4.crc + 1 });
  assert.match(a.problem!, /commands 1 to 4 otherwise than b and c, which agree/);
  await waitForHealth(b, 200, 30_000);
  assert.match(b.stderr(), new RegExp(FINDING_VOIDED));
  // Its own data: the keys the log gave it (a VM it does not know, rather than a key it does not know).
  const unknownVm = await request(`${b.apiUrl}/public/instance/00000000-0000-4000-8000-000000000000`, { key: created[7].key });
  assert.equal(unknownVm.status, 404, JSON.stringify(unknownVm.body));
});
