// Commands on the data directory of a running service (decisions §3: keys and imports take effect while it
// runs). What users rely on: every batch the service acknowledged stays stored while commands run beside it,
// and what a command did is in effect when it returns. A command opening the store beside the service made
// the service lose committed transactions now and then (lmdb-js 3.5.6, two processes writing one store:
// acknowledged VMs vanished), so commands hand their writes to the service (src/storage/inbox.ts) and
// commands that would write the store themselves are refused (src/storage/writer-lock.ts).
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { CVSS, GROUP, writeAdvisories } from '../helpers/cve.ts';
import { ingestUntilStopped } from '../helpers/events.ts';
import { request, runCli, startService } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';
import { openStore } from '../../src/storage/store.ts';

/** Rounds of commands per command loop, and the loops: enough commands to have lost a batch before the fix. */
const ROUNDS = 6;
const COMMAND_LOOPS = 2;
const WRITERS = 3;

const services: RunningService[] = [];
after(() => Promise.all(services.map((service) => service.stop())));

test('batches acknowledged while commands import vulnerability data and manage keys all stay stored; each command is in effect when it returns', async () => {
  const service = await startService();
  services.push(service);
  const writers = ingestUntilStopped(service.gatewayUrl, service.apiKey, WRITERS);
  const { acknowledged } = writers;
  const commands = Array.from({ length: COMMAND_LOOPS }, async (_, loop) => {
    for (let round = 0; round < ROUNDS; round++) {
      const folder = writeAdvisories([{ osvId: `GHSA-jvml-${loop}${round}00-xxxx`, cveId: `CVE-2099-${loop}${round}01`, groupId: GROUP, artifactId: 'no-such-lib', versions: ['1.0'], severity: CVSS.score33 }]);
      const imported = await runCli(['cve', 'import', folder, '--data-dir', service.dataDir]);
      assert.equal(imported.code, 0, imported.stderr);
      assert.match(imported.stdout, new RegExp(`the running service \\(pid ${service.child.pid}\\) uses them`));
      const created = await runCli(['keys', 'create', '--user', `user-${loop}-${round}`, '--scopes', 'read', '--data-dir', service.dataDir]);
      assert.equal(created.code, 0, created.stderr);
      const key = /key: +(\S+)/.exec(created.stdout)![1];
      // In effect as the command returns: the service stored it before answering the command.
      assert.equal((await request(`${service.apiUrl}/public/me`, { key })).status, 200);
      const listed = await runCli(['keys', 'list', '--data-dir', service.dataDir]);
      assert.match(listed.stdout, new RegExp(`user-${loop}-${round}`));
    }
  });
  await Promise.all(commands).finally(() => writers.stop());
  assert.ok(acknowledged.length > COMMAND_LOOPS * ROUNDS, `batches were taken while the commands ran: ${acknowledged.length}`);

  await service.stop({ keepData: true });
  const store = openStore(service.dataDir, { readOnly: true });
  try {
    const missing = acknowledged.filter((vmId) => store.vmRows.get(vmId) === undefined);
    assert.deepEqual(missing.slice(0, 10), [], `${missing.length} of ${acknowledged.length} acknowledged batches lost`);
    assert.equal(store.vmRows.getCount(), acknowledged.length);
  } finally {
    await store.close();
  }
});

test('a command that writes the store itself, and a second service, are refused while a service runs on the directory; an unknown key is told as before', async () => {
  const service = await startService();
  services.push(service);
  const seeded = await runCli(['seed', '--vms', '10', '--data-dir', service.dataDir]);
  assert.notEqual(seeded.code, 0);
  assert.match(seeded.stderr, new RegExp(`a jvmlens service \\(pid ${service.child.pid}\\) is running on .*: seed it through its gateway`));
  // What the service answers comes back to the command: a key it does not know.
  const revoked = await runCli(['keys', 'revoke', 'no-such-key', '--data-dir', service.dataDir]);
  assert.equal(revoked.code, 2, revoked.stderr);
  assert.match(revoked.stderr, /^jvmlens: no key with id 'no-such-key'\n$/);
  const second = await runCli(['serve', '--data-dir', service.dataDir, '--gateway-port', '0', '--api-port', '0'], {}, 30_000);
  assert.equal(second.code, 2, 'a configuration error');
  assert.match(second.stderr, new RegExp(`cannot start: another jvmlens service \\(pid ${service.child.pid}\\) has .* open: one service per data directory`));
});
