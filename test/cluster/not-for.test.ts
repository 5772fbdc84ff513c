// A command logged as not for one node (src/cluster/log.ts, notFor: a report's pages, which their
// coordinator wrote itself) against a real nats-server: that node records it as applied without applying
// it, every other node applies it, and both go on with the commands after it. Also the log read again
// (ClusterLog.hashOf), which must hash a window as the nodes that read it do, and a node that reads the log
// command by command, as it does while JetStream makes no consumer (electing its leaders after a server died).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import type { Command } from '../../src/cluster/commands.ts';
import { ClusterLog } from '../../src/cluster/log.ts';
import { startNatsServers } from '../../src/cluster/nats-servers.ts';
import type { NatsServer } from '../../src/cluster/nats-servers.ts';
import { appliedWindows } from '../../src/cluster/applied-windows.ts';
import type { WindowHash } from '../../src/cluster/applied-windows.ts';
import { appliedSeq, READ_ONE_BY_ONE, Replica } from '../../src/cluster/replica.ts';
import type { Logger } from '../../src/log.ts';
import { Dictionary } from '../../src/storage/dictionary.ts';
import { Ingestor } from '../../src/storage/ingest.ts';
import { Liveness } from '../../src/storage/liveness.ts';
import { openStore } from '../../src/storage/store.ts';
import type { Store } from '../../src/storage/store.ts';
import { localWrites } from '../../src/writes.ts';
import { tempDir } from '../helpers/service.ts';

const missing = spawnSync('nats-server', ['--version']).error !== undefined;
if (missing && process.env.CI === 'true') throw new Error('nats-server is not installed (apt-get install nats-server)');

let nats: NatsServer[] = [];
const closers: (() => Promise<void>)[] = [];
/** What the nodes logged, by node. */
const logged: { nodeId: string; message: string; fields?: Record<string, unknown> }[] = [];

before(async () => {
  if (missing) return;
  nats = await startNatsServers(1, tempDir('jvmlens-not-for-'));
});

after(async () => {
  for (const close of closers.reverse()) await close();
  await Promise.all(nats.map((server) => server.stop()));
});

/**
 * A node's replica of the log on its own store (or `restarted` on the store of one stopped), with the report
 * commands it applied and the hashes of the windows of three it applied.
 */
async function node(nodeId: string, restarted?: Store, { noConsumer = false } = {}): Promise<{ store: Store; replica: Replica; reportCommands: Command[]; windows: () => WindowHash[] }> {
  const log = await ClusterLog.open([nats[0].url], nodeId);
  // What JetStream answers a consumer's creation while it elects its meta leader.
  if (noConsumer) log.follow = () => Promise.reject(new Error('JetStream system temporarily unavailable'));
  const logTo = (message: string, fields?: Record<string, unknown>) => void logged.push({ nodeId, message, fields });
  const logger: Logger = { info: logTo, warn: logTo, error: logTo };
  const store = restarted ?? openStore(tempDir(`jvmlens-not-for-${nodeId}-`));
  const dict = new Dictionary(store);
  const writes = localWrites({
    store, dict, ingestor: new Ingestor(store, dict), liveness: new Liveness(store),
    countEvents: () => undefined, afterIngest: () => undefined, afterTagsChange: () => undefined,
  });
  const reportCommands: Command[] = [];
  const replica = new Replica({
    nodeId, log, store, dict, writes, codeGroup: 0, logger, rematch: async () => undefined,
    applyReport: async (command) => void reportCommands.push(command),
    // The log's three commands make one window: its hash covers the command not for n1 as well.
    windowEvery: 3,
  });
  replica.start();
  closers.push(async () => {
    await replica.stop();
    await log.close();
    if (restarted === undefined) await store.close();
  });
  return { store, replica, reportCommands, windows: () => appliedWindows(store) };
}

test('a command not for a node is recorded as applied there, unread, and applied by every other node', { skip: missing && 'nats-server is not installed' }, async () => {
  const writer = await ClusterLog.open([nats[0].url], 'writer', 'once');
  closers.push(() => writer.close());
  const coordinator = await node('n1');
  const other = await node('n2', undefined, { noConsumer: true });
  await writer.append({ kind: 'report.delete', reportId: 'before' });
  const notForN1 = await writer.append({ kind: 'report.delete', reportId: 'pages-of-n1' }, 'page-msg-id', 'n1');
  const last = await writer.append({ kind: 'report.delete', reportId: 'after' });
  assert.equal(notForN1, 2);
  await Promise.all([coordinator.replica.waitFor(last), other.replica.waitFor(last)]);
  const ids = (commands: Command[]) => commands.map((command) => (command as { reportId: string }).reportId);
  assert.deepEqual(ids(coordinator.reportCommands), ['before', 'after'], 'n1 skips the command not for it');
  assert.deepEqual(ids(other.reportCommands), ['before', 'pages-of-n1', 'after']);
  // Both stores have applied the log up to its end: a restart resumes after it.
  assert.equal(appliedSeq(coordinator.store), last);
  assert.equal(appliedSeq(other.store), last);
  // Both applied every command, the one n1 skips too, in order: one whole window, hashed alike.
  assert.equal(coordinator.windows().length, 1);
  assert.deepEqual(coordinator.windows(), other.windows());
  // n2 read them command by command, and says which once a read finds no next command (within 500 ms).
  const readUpTo = () => logged.filter((line) => line.nodeId === 'n2' && line.message === READ_ONE_BY_ONE).at(-1)?.fields?.to;
  for (let waited = 0; readUpTo() !== last && waited < 5_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
  const readOneByOne = logged.filter((line) => line.nodeId === 'n2' && line.message === READ_ONE_BY_ONE).map((line) => line.fields as { from: number; to: number });
  assert.deepEqual(readOneByOne.flatMap(({ from, to }) => Array.from({ length: to - from + 1 }, (_, index) => from + index)), [1, 2, last]);
  // A node reading the log so skips a command not for it too (Replica: its direct reads say whom a command is not for).
  assert.equal((await writer.commandAt(notForN1))?.notFor, 'n1');
  assert.equal((await writer.commandAt(last))?.notFor, null);
});

test('a node started again in the middle of a window applies nothing twice, and hashes the window whole, as applied', { skip: missing && 'nats-server is not installed' }, async () => {
  const writer = await ClusterLog.open([nats[0].url], 'restart-writer', 'once');
  closers.push(() => writer.close());
  const steady = await node('n4');
  const first = await node('n5');
  let last = 0;
  for (const reportId of ['r4', 'r5']) last = await writer.append({ kind: 'report.delete', reportId });
  await first.replica.waitFor(last);
  await first.replica.stop();
  // Applied up to 5, in the middle of the window 4-6: started again, it applies 6, and its store had the hash of 4 and 5.
  const again = await node('n5', first.store);
  last = await writer.append({ kind: 'report.delete', reportId: 'r6' });
  assert.equal(last, 6, 'after the first test\'s three commands');
  await Promise.all([again.replica.waitFor(last), steady.replica.waitFor(last)]);
  const ids = (commands: Command[]) => commands.map((command) => (command as { reportId: string }).reportId);
  assert.deepEqual(ids(first.reportCommands), ['before', 'pages-of-n1', 'after', 'r4', 'r5']);
  assert.deepEqual(ids(again.reportCommands), ['r6'], 'what it had applied is not applied again');
  assert.deepEqual(again.windows().map((window) => window.to), [3, 6]);
  assert.deepEqual(again.windows(), steady.windows(), 'the window 4-6 hashed whole, as a node that applied it in one go');
});

test('the log read again (ClusterLog.hashOf) hashes a window as a node that read it did; a truncated one has no hash', { skip: missing && 'nats-server is not installed' }, async () => {
  const writer = await ClusterLog.open([nats[0].url], 'hash-writer', 'once');
  closers.push(() => writer.close());
  const reader = await node('n3');
  let last = 0;
  for (const reportId of ['h1', 'h2', 'h3']) last = await writer.append({ kind: 'report.delete', reportId });
  await reader.replica.waitFor(last);
  assert.equal(last, 9, 'after the two tests\' six commands');
  assert.equal(reader.windows().length, 3);
  assert.equal(await writer.hashOf(1, 3), reader.windows()[0].crc);
  assert.equal(await writer.hashOf(7, 9), reader.windows()[2].crc);
  await writer.purgeBelow(4);
  assert.equal(await writer.hashOf(1, 3), null);
  assert.equal(await writer.hashOf(7, 9), reader.windows()[2].crc);
});
