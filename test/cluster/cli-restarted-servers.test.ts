// The NATS servers restarted (an upgrade, a reboot of the three machines) and an operator's command run as
// soon as they listen: what a user relies on is the command waiting for JetStream to elect its leaders, as a
// write does, rather than failing with a timeout's stack trace. Real processes: three nats-servers, the CLI.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { startNatsServers } from '../../src/cluster/nats-servers.ts';
import type { NatsServer } from '../../src/cluster/nats-servers.ts';
import { natsMissing } from '../helpers/cluster.ts';
import { runCli, tempDir } from '../helpers/service.ts';

const skip = natsMissing && 'nats-server is not installed';
let servers: NatsServer[] = [];

after(async () => {
  await Promise.all(servers.map((server) => server.stop('SIGKILL')));
});

test('keys list --cluster, run as soon as restarted servers listen, waits for JetStream and lists every key', { skip, timeout: 180_000 }, async () => {
  servers = await startNatsServers(3, tempDir('jvmlens-cli-restart-'));
  const urls = servers.map((server) => server.url).join(',');
  const created = await runCli(['keys', 'create', '--cluster', urls, '--user', 'operator']);
  assert.equal(created.code, 0, created.stderr);
  const keyId = /^key id: (\S+)$/m.exec(created.stdout)![1];
  for (let round = 1; round <= 3; round++) {
    await Promise.all(servers.map((server) => server.stop()));
    await Promise.all(servers.map((server) => server.start()));
    // Several at once: one of them is likelier to ask while JetStream still elects its meta leader.
    const lists = await Promise.all([1, 2, 3].map(() => runCli(['keys', 'list', '--cluster', urls])));
    for (const list of lists) {
      assert.equal(list.code, 0, `round ${round}: ${list.stderr}`);
      assert.match(list.stdout, new RegExp(`^${keyId}\\s+operator\\s`, 'm'));
    }
  }
});
