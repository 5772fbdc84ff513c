// `jvmlens cluster detach`: a stopped cluster node's data directory made a single node's. What a user relies
// on: it detaches only what a single node can run on without losing the cluster's writes: not a directory
// with writes journaled and not read back (the cluster's to append again), nor one code group of several,
// nor one a running process has open.
// The real CLI on real LMDB directories, set up as a cluster node leaves them.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { appliedCommands, appliedTail, appliedWindows, foldApplied } from '../../src/cluster/applied-windows.ts';
import { followedLog } from '../../src/cluster/log-identity.ts';
import { appliedSeq, recordAppliedSeq } from '../../src/cluster/replica.ts';
import { JOURNAL_FILE, WriteJournal } from '../../src/cluster/write-journal.ts';
import { recordCodeGroup } from '../../src/storage/code-groups.ts';
import { openStore } from '../../src/storage/store.ts';
import { runCli, startService, tempDir } from '../helpers/service.ts';

const CREATED = '2026-11-28T12:00:00.000000000Z';

/** A data directory as a cluster node of `group` leaves it, having applied the log up to 7. */
async function clusterNodeDir(group = { of: 0, count: 1 }): Promise<string> {
  const dir = tempDir('jvmlens-detach-');
  const store = openStore(dir);
  await store.meta.put('clusterLogCreated', CREATED);
  await recordAppliedSeq(store, 7);
  await recordCodeGroup(store, group);
  await store.close();
  return dir;
}

async function followed(dir: string): Promise<{ log: string | undefined; applied: number }> {
  const store = openStore(dir, { readOnly: true });
  try {
    return { log: followedLog(store), applied: appliedSeq(store) };
  } finally {
    await store.close();
  }
}

test('a node\'s directory with writes it has not read back is not detached until they are', async () => {
  const dir = await clusterNodeDir();
  const journal = WriteJournal.open(dir);
  await journal.hold({ seq: 6, msgId: 'n1-6', subject: 'jvmlens.events', bytes: new Uint8Array([1, 2, 3]) }, 0);
  await journal.close();
  const refused = await runCli(['cluster', 'detach', '--data-dir', dir]);
  assert.equal(refused.code, 2, refused.stdout + refused.stderr);
  assert.match(refused.stderr, /^jvmlens: cannot detach .*: this node journaled 1 write\(s\) it has not read back in the cluster log .*start it once with --cluster/);
  assert.deepEqual(await followed(dir), { log: CREATED, applied: 7 }, 'nothing forgotten');

  const reopened = WriteJournal.open(dir);
  await reopened.release('n1-6');
  await reopened.close();
  const detached = await runCli(['cluster', 'detach', '--data-dir', dir]);
  assert.equal(detached.code, 0, detached.stderr);
  assert.match(detached.stdout, new RegExp(`detached: it had applied commands up to 7 of the cluster log created at ${CREATED.replaceAll('.', '\\.')}`));
  assert.deepEqual(await followed(dir), { log: undefined, applied: 0 });
  assert.equal(existsSync(join(dir, JOURNAL_FILE)), false, 'the journal is gone with the cluster');
  const again = await runCli(['cluster', 'detach', '--data-dir', dir]);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /followed no cluster log: a single node's already/);
});

/** The hashes of the log the node at `dir` applied, as its log checks read them (windows of `every` commands). */
async function appliedHashes(dir: string, every: number, last: number) {
  const store = openStore(dir, { readOnly: true });
  try {
    return { windows: appliedWindows(store), tail: appliedTail(store, every), commands: [...appliedCommands(store, 1, last)].filter((crc) => crc !== 0).length };
  } finally {
    await store.close();
  }
}

test('a detached directory forgets the hashes of the log it applied: adopted by a new cluster, they would stand for the new log\'s windows', async () => {
  const dir = await clusterNodeDir();
  const every = 4;
  const store = openStore(dir);
  await store.env.transaction(() => {
    for (let seq = 1; seq <= 10; seq++) foldApplied(store, seq, new Uint8Array([seq, 1, 2]), every);
  });
  await store.close();
  const before = await appliedHashes(dir, every, 10);
  assert.deepEqual(before.windows.map((window) => window.to), [4, 8]);
  assert.equal(before.tail?.to, 10);
  assert.equal(before.commands, 10);

  const detached = await runCli(['cluster', 'detach', '--data-dir', dir]);
  assert.equal(detached.code, 0, detached.stderr);
  assert.deepEqual(await appliedHashes(dir, every, 10), { windows: [], tail: null, commands: 0 });
});

test('one code group of several is not detached: a single node on it would miss the other groups\' classes', async () => {
  const dir = await clusterNodeDir({ of: 1, count: 3 });
  const refused = await runCli(['cluster', 'detach', '--data-dir', dir]);
  assert.equal(refused.code, 2, refused.stdout + refused.stderr);
  assert.match(refused.stderr, /cannot detach .*: this data directory stores code group 1 of 3/);
  assert.deepEqual(await followed(dir), { log: CREATED, applied: 7 });
});

test('a directory a running service has open is not detached: the service would go on as it was', async () => {
  const service = await startService();
  try {
    const refused = await runCli(['cluster', 'detach', '--data-dir', service.dataDir]);
    assert.equal(refused.code, 2, refused.stdout + refused.stderr);
    assert.match(refused.stderr, new RegExp(`cannot detach .*: this data directory is open in process ${service.child.pid} \\(a node running on it\\?\\): stop it, then detach it`));
  } finally {
    await service.stop({ keepData: true });
  }
  const detached = await runCli(['cluster', 'detach', '--data-dir', service.dataDir]);
  assert.equal(detached.code, 0, detached.stderr);
  assert.match(detached.stdout, /followed no cluster log: a single node's already/);
});
