// Local nats-servers (src/cluster/nats-servers.ts), as `npm run cluster:local` starts them again on its
// directory: an attempt that fails (a port taken in between, here a configuration the server refuses) removes
// the stores it made, never those an earlier start left, which hold the cluster's log.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startNatsServers } from '../../src/cluster/nats-servers.ts';
import { natsMissing } from '../helpers/cluster.ts';
import { tempDir } from '../helpers/service.ts';

test('servers that fail to start keep the stores an earlier start left, and remove their own', { skip: natsMissing && 'nats-server is not installed' }, async () => {
  const dir = tempDir('jvmlens-nats-servers-');
  mkdirSync(join(dir, 's1', 'jetstream'), { recursive: true });
  writeFileSync(join(dir, 's1', 'jetstream', 'kept'), 'the log of an earlier start');
  // nats-server refuses a max_payload above its max_pending (64 MiB) and exits: every attempt fails.
  await assert.rejects(startNatsServers(3, dir, { maxPayload: 100_000_000 }), /nats-server s\d exited: .*max_payload/);
  assert.ok(existsSync(join(dir, 's1', 'jetstream', 'kept')), 'the earlier store stays');
  for (const made of ['s2', 's3']) assert.equal(existsSync(join(dir, made)), false, `${made}'s store, made by the attempts, is gone`);
});
