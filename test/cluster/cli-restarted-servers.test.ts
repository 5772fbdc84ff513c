// The NATS servers restarted (an upgrade, a reboot of the three machines) and an operator's commands run as
// soon as they listen: what a user relies on is each command waiting for JetStream to elect its leaders, as a
// write does, rather than failing with a timeout's stack trace (for a key it had created, at that). Real
// processes: three nats-servers, the CLI.
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

test('keys list and keys create --cluster, run as soon as restarted servers listen, wait for JetStream: every key listed, every one created', { skip, timeout: 300_000 }, async () => {
  servers = await startNatsServers(3, tempDir('jvmlens-cli-restart-'));
  const urls = servers.map((server) => server.url).join(',');
  const keyIdOf = (created: { code: number | null; stdout: string; stderr: string }): string => {
    assert.equal(created.code, 0, created.stderr);
    return /^key id: (\S+)$/m.exec(created.stdout)![1];
  };
  const keyIds = [keyIdOf(await runCli(['keys', 'create', '--cluster', urls, '--user', 'operator']))];
  for (let round = 1; round <= 3; round++) {
    await Promise.all(servers.map((server) => server.stop()));
    await Promise.all(servers.map((server) => server.start()));
    // Several at once: one of them is likelier to ask while JetStream still elects its meta leader.
    const [created, ...lists] = await Promise.all([
      runCli(['keys', 'create', '--cluster', urls, '--user', `round-${round}`]),
      ...[1, 2].map(() => runCli(['keys', 'list', '--cluster', urls])),
    ]);
    for (const list of lists) {
      assert.equal(list.code, 0, `round ${round}: ${list.stderr}`);
      assert.match(list.stdout, new RegExp(`^${keyIds[0]}\\s+operator\\s`, 'm'));
    }
    keyIds.push(keyIdOf(created));
  }
  const listed = await runCli(['keys', 'list', '--cluster', urls]);
  assert.equal(listed.code, 0, listed.stderr);
  for (const keyId of keyIds) assert.match(listed.stdout, new RegExp(`^${keyId}\\s`, 'm'));
});
