// The log never sends one message id twice (src/cluster/log.ts): a write's retries, and every attempt at a
// write whose id may be sent again (a report's pages and claims), carry ids of their own. JetStream then never
// rejects one as a duplicate, which nats-server 2.9.10 counts per server and does not keep in step across a
// change of leader (a chaos row's servers then gave the nodes histories shifted by 6 or 7 commands). A write
// that landed twice is applied once (applied-ids.ts). Real nats-server, paused with SIGSTOP while a write is sent.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { firstIdOf } from '../../src/cluster/applied-ids.ts';
import { ClusterLog } from '../../src/cluster/log.ts';
import { startNatsServers } from '../../src/cluster/nats-servers.ts';
import type { NatsServer } from '../../src/cluster/nats-servers.ts';
import { newKey } from '../../src/storage/keys.ts';
import { natsMissing } from '../helpers/cluster.ts';
import { tempDir } from '../helpers/service.ts';

let server: NatsServer | null = null;
let log: ClusterLog | null = null;

after(async () => {
  if (server?.pid !== undefined) process.kill(server.pid, 'SIGCONT');
  await log?.close();
  await server?.stop();
});

test('a write retried while its server did not answer is acknowledged under an id of its own, and the log holds both attempts; one named by its caller and sent again is stored again under another', { skip: natsMissing && 'nats-server is not installed' }, async () => {
  [server] = await startNatsServers(1, tempDir('jvmlens-publish-retries-'));
  log = await ClusterLog.open([server.url], 'publish-retries-test', 'once');
  const key = (name: string) => ({ kind: 'key.put' as const, record: newKey(name, ['read'], Date.now()).record });
  const fresh = await log.append(key('fresh'));
  assert.match((await log.commandAt(fresh))?.msgId ?? '', /^[0-9a-f-]{36}$/, 'a write without an id: answered at once under the id made for it');
  // A write named by its caller, sent again (a coordinator retrying a page, a claim asked again next round).
  const first = await log.append(key('first'), 'first-write');
  const again = await log.append(key('first'), 'first-write');
  const [firstId, againId] = [(await log.commandAt(first))?.msgId, (await log.commandAt(again))?.msgId];
  assert.ok(again > first, 'sent again: stored again, not rejected as a duplicate');
  assert.notEqual(firstId, againId);
  assert.deepEqual([firstId, againId].map((id) => firstIdOf(id ?? '')), ['first-write', 'first-write']);

  // The server stops answering for longer than one attempt (1.5 s); the first attempt lands once it goes on.
  process.kill(server.pid!, 'SIGSTOP');
  const appended = log.append(key('second'), 'second-write');
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  process.kill(server.pid!, 'SIGCONT');
  const seq = await appended;
  const acknowledged = (await log.commandAt(seq))?.msgId ?? assert.fail('no command at the acknowledged sequence');
  assert.match(acknowledged, /^second-write\.retry\d+$/);
  assert.equal(firstIdOf(acknowledged), 'second-write');
  const ids = [];
  for (let at = again + 1; at < seq; at++) ids.push((await log.commandAt(at))?.msgId);
  assert.deepEqual(ids.map((id) => (id === undefined || id === null ? id : firstIdOf(id))), ids.map(() => 'second-write'), 'the attempts before it landed too, each under its own id');
  assert.equal(new Set(ids).size, ids.length);
});
