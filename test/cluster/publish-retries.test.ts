// A write's retries carry ids of their own (src/cluster/log.ts): JetStream then never rejects a retry as a
// duplicate, which nats-server 2.9.10 counts per server and does not keep in step across a change of leader
// (a chaos row's servers then gave the nodes histories shifted by 6 or 7 commands). A write that landed twice
// is applied once (applied-ids.ts). Real nats-server, paused with SIGSTOP while a write is sent.
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

test('a write retried while its server did not answer is acknowledged under an id of its own, and the log holds both attempts', { skip: natsMissing && 'nats-server is not installed' }, async () => {
  [server] = await startNatsServers(1, tempDir('jvmlens-publish-retries-'));
  log = await ClusterLog.open([server.url], 'publish-retries-test', 'once');
  const key = (name: string) => ({ kind: 'key.put' as const, record: newKey(name, ['read'], Date.now()).record });
  const first = await log.append(key('first'), 'first-write');
  assert.equal((await log.commandAt(first))?.msgId, 'first-write', 'answered at once: its own id');

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
  for (let at = first + 1; at < seq; at++) ids.push((await log.commandAt(at))?.msgId);
  assert.deepEqual(ids.map((id) => (id === undefined || id === null ? id : firstIdOf(id))), ids.map(() => 'second-write'), 'the attempts before it landed too, each under its own id');
  assert.equal(new Set(ids).size, ids.length);
});
