// Truncating the cluster's log (src/cluster/compaction.ts) against a real nats-server: what a node relies on
// is that truncation never costs it a command it has not applied, even while its consumer is behind (a node
// replaying a backlog after a restart, or one that fell behind during a start-up storm), and what an
// operator relies on is that `keys list --cluster` still lists every key once the log dropped their commands.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { STREAM } from '../../src/cluster/commands.ts';
import type { Command } from '../../src/cluster/commands.ts';
import { LogCompaction } from '../../src/cluster/compaction.ts';
import { clusterKeyRecords } from '../../src/cluster/keys.ts';
import { ClusterLog } from '../../src/cluster/log.ts';
import { startNatsServers } from '../../src/cluster/nats-servers.ts';
import type { NatsServer } from '../../src/cluster/nats-servers.ts';
import { newKey } from '../../src/storage/keys.ts';
import type { ApiKeyRecord } from '../../src/storage/records.ts';
import { tempDir } from '../helpers/service.ts';

const missing = spawnSync('nats-server', ['--version']).error !== undefined;
if (missing && process.env.CI === 'true') throw new Error('nats-server is not installed (apt-get install nats-server)');

let nats: NatsServer[] = [];
let log: ClusterLog;

before(async () => {
  if (missing) return;
  nats = await startNatsServers(1, tempDir('jvmlens-compaction-'));
});

after(async () => {
  await log?.close();
  await Promise.all(nats.map((server) => server.stop()));
});

/** A fresh log for each test: the stream is deleted and made again. */
async function freshLog(): Promise<ClusterLog> {
  await log?.jsm.streams.delete(STREAM).catch(() => undefined);
  await log?.close();
  log = await ClusterLog.open([nats[0].url], 'compaction-test', 'once');
  return log;
}

function tagEdit(index: number): Command {
  return { kind: 'tags', edit: { vmId: `vm-${index}`, op: 'remove', key: 'env' } };
}

/** Truncation once the retention (1 ms here) has passed: a round needs the mark an earlier round left. */
async function truncate(compaction: LogCompaction, keys: readonly ApiKeyRecord[] = []): Promise<void> {
  await compaction.truncate(Date.now(), () => keys);
  await new Promise((resolve) => setTimeout(resolve, 20));
  await compaction.truncate(Date.now(), () => keys);
}

test('a node whose consumer is behind when the log is truncated still gets every command after its own, in order', { skip: missing && 'nats-server is not installed' }, async () => {
  const log = await freshLog();
  // More commands than a consumer asks for ahead (32): the server still holds most of them for it.
  for (let index = 0; index < 150; index++) await log.append(tagEdit(index));
  // The lagging node applied 20 commands; its consumer has delivered a few more and waits.
  const compaction = await LogCompaction.open(log, 1, 1);
  await compaction.record('lagging', 20);
  const messages = await log.follow(21);
  const seen: number[] = [];
  const iterator = messages[Symbol.asyncIterator]();
  for (let k = 0; k < 3; k++) seen.push((await iterator.next()).value!.seq);
  // Truncation below 21 while it waits; new commands meanwhile.
  await truncate(compaction);
  assert.equal((await log.jsm.streams.info(STREAM)).state.first_seq, 21, 'the commands every node applied are gone');
  for (let index = 150; index < 155; index++) await log.append(tagEdit(index));
  while (seen.at(-1)! < 155) seen.push((await iterator.next()).value!.seq);
  messages.stop();
  assert.deepEqual(seen, Array.from({ length: 135 }, (_, k) => 21 + k), 'no command skipped');
});

test('keys stay listable, revocations included, once the log dropped their commands', { skip: missing && 'nats-server is not installed' }, async () => {
  const log = await freshLog();
  const kept = newKey('ops', ['read'], 1_000).record;
  const revoked = newKey('ci', ['ingest'], 2_000).record;
  const later = newKey('late', ['write'], 3_000).record;
  await log.append({ kind: 'key.put', record: kept });
  await log.append({ kind: 'key.put', record: revoked });
  await log.append({ kind: 'key.revoke', keyId: revoked.keyId, at: 2_500 });
  for (let index = 0; index < 5; index++) await log.append(tagEdit(index));
  const compaction = await LogCompaction.open(log, 1, 1);
  await compaction.record('n1', 8);
  // The truncating node's keys as its store holds them, having applied the log up to 8.
  await truncate(compaction, [kept, { ...revoked, revokedAt: 2_500 }]);
  assert.equal((await log.jsm.streams.info(STREAM)).state.messages, 0, 'the key commands are truncated too');
  // A key command after the truncation point folds over the saved records.
  await log.append({ kind: 'key.put', record: later });
  await log.append({ kind: 'key.revoke', keyId: kept.keyId, at: 4_000 });
  const listed = new Map((await clusterKeyRecords(log)).map((record) => [record.keyId, record]));
  assert.deepEqual([...listed.keys()].sort(), [kept.keyId, revoked.keyId, later.keyId].sort());
  assert.equal(listed.get(kept.keyId)!.revokedAt, 4_000);
  assert.equal(listed.get(revoked.keyId)!.revokedAt, 2_500);
  assert.equal(listed.get(later.keyId)!.revokedAt, null);
  assert.equal(listed.get(kept.keyId)!.hash, kept.hash, 'the saved record is the whole record');
});

test('keys list --cluster shows a key revoked whose put the log holds again after the revocation, or only after it', { skip: missing && 'nats-server is not installed' }, async () => {
  const log = await freshLog();
  const appendedAgain = newKey('again', ['read'], 1_000).record;
  const revokedFirst = newKey('first', ['ingest'], 1_000).record;
  await log.append({ kind: 'key.put', record: appendedAgain });
  await log.append({ kind: 'key.revoke', keyId: appendedAgain.keyId, at: 2_000 });
  await log.append({ kind: 'key.put', record: appendedAgain });
  await log.append({ kind: 'key.revoke', keyId: revokedFirst.keyId, at: 3_000 });
  await log.append({ kind: 'key.put', record: revokedFirst });
  const listed = new Map((await clusterKeyRecords(log)).map((record) => [record.keyId, record]));
  assert.equal(listed.get(appendedAgain.keyId)?.revokedAt, 2_000);
  assert.equal(listed.get(revokedFirst.keyId)?.revokedAt, 3_000);
});
