// A service shut down while its start-up still reads the store closes the store only after that read ends, and the
// process goes on. A cluster node that restarts to rebuild itself shuts its service down and starts another in the
// same process: in runs of a cluster test, the first one's start-up went on rebuilding the CVE events index from the
// closed store, and lmdb-js threw from a timer, which ended the process (its health never answered again).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../src/config.ts';
import type { Logger } from '../../src/log.ts';
import { startService } from '../../src/service.ts';
import type { RunningService } from '../../src/service.ts';
import { openStore } from '../../src/storage/store.ts';
import { runCli, tempDir } from '../helpers/service.ts';

/** Enough VMs that the CVE index rebuild outlasts the shutdown that begins with it (the code before failed on it twice of twice). */
const VMS = 20_000;

test('a service shut down while its start-up reads the CVE data closes its store after that read, and the process goes on', async () => {
  const dataDir = tempDir('jvmlens-shutdown-while-starting-');
  const seeded = await runCli(['seed', '--vms', String(VMS), '--components-per-vm', '1', '--methods', '1', '--data-dir', dataDir]);
  assert.equal(seeded.code, 0, seeded.stderr);
  const { config } = parseConfig(['--data-dir', dataDir, '--gateway-port', '0', '--api-port', '0', '--workers', '1', '--shutdown-grace-ms', '0'], {});
  // A first start matches the fleet against the curated vulnerabilities, then rebuilds the CVE events index
  // from the store: the shutdown begins between the two.
  let service: RunningService | null = null;
  let stopped: Promise<void> | null = null;
  const problems: string[] = [];
  const logger: Logger = {
    info: (message) => {
      if (message.startsWith('re-matched the fleet')) stopped = service?.shutdown() ?? null;
    },
    warn: (message) => problems.push(message),
    error: (message) => problems.push(message),
  };
  service = await startService(config, logger);
  await assert.rejects(service.ready, /shut down while it started/, 'the shutdown cut the start-up short');
  assert.notEqual(stopped, null, 'the shutdown began once the fleet was matched');
  await stopped;
  // lmdb-js's timer that ended the process runs within a few ms of a read of the closed store.
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.deepEqual(problems, []);
  const store = openStore(dataDir);
  try {
    assert.equal(store.vmRows.getCount(), VMS, 'the data is whole');
  } finally {
    await store.close();
  }
});
