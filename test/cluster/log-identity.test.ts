// The NATS servers lose their data (a new, empty log under the same name) while the nodes keep theirs, on
// real processes: one nats-server and two nodes. What a user relies on: a node does not follow a log other
// than the one its data came from (it would skip the new log's first commands, acknowledged writes, without
// a word); it refuses and says what to do; started once with --adopt-cluster-log true it keeps its data and
// goes on with the new log; a node without its data then starts from a copy of it; every write is seen; and
// nodes running when their log is replaced under them stop applying it and say so.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { startNatsServers } from '../../src/cluster/nats-servers.ts';
import type { NatsServer } from '../../src/cluster/nats-servers.ts';
import { codeEvent, startEvent } from '../helpers/cve.ts';
import { ingest } from '../helpers/events.ts';
import { request, runCli, startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

const missing = spawnSync('nats-server', ['--version']).error !== undefined;
if (missing && process.env.CI === 'true') throw new Error('nats-server is not installed (apt-get install nats-server)');
const KEY = 'log_identity_test_key_0123456789';

let nats: NatsServer | null = null;
const running: RunningService[] = [];
after(async () => {
  await Promise.all(running.map((node) => node.stop()));
  await nats?.stop();
});

function vmId(index: number): string {
  return `1d000000-0000-4000-8000-${String(index).padStart(12, '0')}`;
}

async function startNode(dir: string, nodeId: string, extra: string[] = [], waitReady = true): Promise<RunningService> {
  const node = await startService({ noStaticKey: true, dataDir: join(dir, nodeId), waitReady, args: ['--api-key', KEY, '--cluster', nats!.url, '--node-id', nodeId, ...extra] });
  running.push(node);
  return node;
}

async function ingestVm(node: RunningService, index: number): Promise<void> {
  const time = Date.now() - 60_000;
  const result = await ingest(node.gatewayUrl, KEY, [startEvent(vmId(index), time, 'host-1'), codeEvent(vmId(index), time + 1, ['app.jar'])]);
  assert.equal(result.status, 200, JSON.stringify(result.body));
}

async function seesVm(node: RunningService, index: number): Promise<boolean> {
  return (await request(`${node.apiUrl}/public/instance/${vmId(index)}`, { key: KEY })).status === 200;
}

/** Starts a node that should refuse to start: its exit code and what it said. */
async function refusal(dir: string, nodeId: string): Promise<{ code: unknown; stderr: string }> {
  const node = await startNode(dir, nodeId, [], false);
  const exited = node.child.exitCode !== null ? Promise.resolve([node.child.exitCode]) : once(node.child, 'exit');
  const [code] = (await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve(['still running after 30 s']), 30_000))])) as unknown[];
  await node.stop({ keepData: true });
  return { code, stderr: node.stderr() };
}

test('a node refuses a log other than its data\'s, adopts a new empty one when told, and the other nodes copy its data', { skip: missing && 'nats-server is not installed', timeout: 240_000 }, async () => {
  const dir = tempDir('jvmlens-log-identity-');
  [nats] = await startNatsServers(1, dir);
  const first = await startNode(dir, 'n1');
  const second = await startNode(dir, 'n2');
  for (let index = 0; index < 5; index++) await ingestVm(index % 2 === 0 ? first : second, index);
  const created = await runCli(['keys', 'create', '--cluster', nats.url, '--user', 'ops', '--scopes', 'read']);
  assert.equal(created.code, 0, created.stderr);
  const keyId = /key id: +(\S+)/.exec(created.stdout)![1];
  for (let index = 0; index < 5; index++) assert.ok(await seesVm(second, index));
  await first.stop({ keepData: true });
  await second.stop({ keepData: true });

  // The server loses its data: the same server, an empty store.
  await nats.stop();
  rmSync(join(dir, 's1'), { recursive: true, force: true });
  mkdirSync(join(dir, 's1'));
  await nats.start();

  const refused = await refusal(dir, 'n1');
  assert.equal(refused.code, 1, refused.stderr);
  assert.match(refused.stderr, /cannot start: this data directory applied commands 1 to \d+ of the log created at \S+, but the cluster log on these NATS servers was created at \S+ and holds 0 command\(s\) up to 0: .*--adopt-cluster-log true/);

  // Adopted: n1 keeps its data, and takes writes and reads on the new log.
  const adopter = await startNode(dir, 'n1', ['--adopt-cluster-log', 'true']);
  assert.match(adopter.stderr(), /adopted the cluster log/);
  for (let index = 0; index < 5; index++) assert.ok(await seesVm(adopter, index), `VM ${index} kept through the adoption`);
  await ingestVm(adopter, 5);
  assert.ok(await seesVm(adopter, 5));
  // The cluster's key, lost with the old log, is listed again from the adopting node's store.
  assert.match((await runCli(['keys', 'list', '--cluster', nats.url])).stdout, new RegExp(`${keyId} +ops`));

  // n2 had applied as much of the old log as n1: it cannot tell its data is the same, and refuses.
  const stale = await refusal(dir, 'n2');
  assert.equal(stale.code, 1, stale.stderr);
  assert.match(stale.stderr, /if another node adopted this log already, give this node an empty --data-dir/);

  // Given an empty data directory, it finds the log's beginning gone and copies n1's data, old and new.
  rmSync(join(dir, 'n2'), { recursive: true, force: true });
  const copied = await startNode(dir, 'n2');
  assert.match(copied.stderr(), /this node starts from a copy of a live node's data/);
  for (let index = 0; index <= 5; index++) assert.ok(await seesVm(copied, index), `VM ${index} through the node that copied`);
  await ingestVm(copied, 6);
  assert.ok(await seesVm(adopter, 6), 'a write through the copy reaches the adopter');

  // Adopted once, the log is n1's: a restart with or without the flag follows it as before.
  await adopter.stop({ keepData: true });
  const restarted = await startNode(dir, 'n1');
  assert.ok(await seesVm(restarted, 6));
  assert.doesNotMatch(restarted.stderr(), /adopted the cluster log/);

  // The server loses its data while the nodes run, and a node started meanwhile makes a new log: the running
  // nodes stop applying (from their old position they would skip its first commands) and are DOWN, saying why.
  await nats.stop();
  rmSync(join(dir, 's1'), { recursive: true, force: true });
  mkdirSync(join(dir, 's1'));
  await nats.start();
  await startNode(dir, 'n3');
  for (const node of [restarted, copied]) {
    const deadline = Date.now() + 30_000;
    let health = await request(`${node.gatewayUrl}/opthub-health`);
    while (!/^the cluster log was replaced/.test(health.body.note) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      health = await request(`${node.gatewayUrl}/opthub-health`);
    }
    assert.equal(health.status, 503, health.text);
    assert.match(health.body.note, /^the cluster log was replaced: this node's data follows the log created at \S+, the NATS servers now hold one created at \S+ .*restart it, and it says what to do$/);
  }
});

test('a single node\'s data directory is refused as a cluster node\'s and adopted when told; a cluster node\'s is refused by a single node until detached', { skip: missing && 'nats-server is not installed', timeout: 240_000 }, async () => {
  // The first test's nodes would reconnect to a server started on their old port.
  await Promise.all(running.splice(0).map((node) => node.stop()));
  await nats?.stop();
  const dir = tempDir('jvmlens-single-adopted-');
  const single = await startService({ noStaticKey: true, dataDir: join(dir, 'n1'), args: ['--api-key', KEY] });
  for (let index = 10; index < 13; index++) await ingestVm(single, index);
  await single.stop({ keepData: true });
  const created = await runCli(['keys', 'create', '--data-dir', join(dir, 'n1'), '--user', 'ops', '--scopes', 'read']);
  assert.equal(created.code, 0, created.stderr);
  const keyId = /key id: +(\S+)/.exec(created.stdout)![1];
  [nats] = await startNatsServers(1, dir);

  // Joined as it is, its VMs would be on this node only: reads would differ from node to node.
  const refused = await refusal(dir, 'n1');
  assert.equal(refused.code, 1, refused.stderr);
  assert.match(refused.stderr, /cannot start: this data directory holds a single node's data \(3 VM\(s\), 1 API key\(s\)\), which the cluster log does not: a node joins a cluster with an empty --data-dir .* with --adopt-cluster-log true once/);
  assert.equal((await refusal(dir, 'n1')).code, 1, 'refused again: the refusal wrote nothing that lets it in');

  const adopter = await startNode(dir, 'n1', ['--adopt-cluster-log', 'true']);
  assert.match(adopter.stderr(), /adopted the cluster log.*"previous":"a single node"/);
  for (let index = 10; index < 13; index++) assert.ok(await seesVm(adopter, index), `VM ${index} kept through the adoption`);
  assert.match((await runCli(['keys', 'list', '--cluster', nats.url])).stdout, new RegExp(`${keyId} +ops`));

  // A second node copies the adopted data, and writes through either reach both.
  const copied = await startNode(dir, 'n2');
  assert.match(copied.stderr(), /this node starts from a copy of a live node's data/);
  for (let index = 10; index < 13; index++) assert.ok(await seesVm(copied, index), `VM ${index} through the node that copied`);
  await ingestVm(copied, 13);
  await ingestVm(adopter, 14);
  for (const node of [adopter, copied]) for (const index of [13, 14]) assert.ok(await seesVm(node, index), `VM ${index} on every node`);
  // A command on a running node's directory is refused as well: it would not hand its key to the node either.
  const besideNode = await runCli(['keys', 'create', '--data-dir', join(dir, 'n2'), '--user', 'ops', '--scopes', 'read']);
  assert.equal(besideNode.code, 2, besideNode.stdout + besideNode.stderr);
  assert.match(besideNode.stderr, /^jvmlens: this data directory is a cluster node's \(pid \d+ runs it\): what this command writes there would reach that node alone; give it --cluster URLS instead of --data-dir/);
  // A list, which writes nothing, is refused for what it would read: that node's keys, not the cluster's.
  const listBeside = await runCli(['keys', 'list', '--data-dir', join(dir, 'n2')]);
  assert.equal(listBeside.code, 2, listBeside.stdout + listBeside.stderr);
  assert.match(listBeside.stderr, /^jvmlens: this data directory is a cluster node's \(pid \d+ runs it\): what this command lists there is what that node applied alone, which can lag the cluster's log; give it --cluster URLS instead of --data-dir/);

  // Another single node's data, on the cluster whose log now begins past where it could follow: refused as
  // well, not replaced by a copy of a live node's data.
  const other = await startService({ noStaticKey: true, dataDir: join(dir, 'n3'), args: ['--api-key', KEY] });
  await ingestVm(other, 20);
  await other.stop({ keepData: true });
  for (let attempt = 0; attempt < 2; attempt++) {
    const kept = await refusal(dir, 'n3');
    assert.equal(kept.code, 1, kept.stderr);
    assert.match(kept.stderr, /cannot start: this data directory holds a single node's data \(1 VM\(s\), 0 API key\(s\)\)/);
    assert.doesNotMatch(kept.stderr, /copying a live node's data/);
  }

  // The other way: a cluster node's directory started without --cluster (a unit file that lost the
  // variable, say) would take writes the cluster never sees. Refused, until detached.
  await copied.stop({ keepData: true });
  const alone = await runCli(['serve', '--data-dir', join(dir, 'n2'), '--gateway-port', '0', '--api-port', '0', '--api-key', KEY], {}, 30_000);
  assert.equal(alone.code, 2, alone.stdout + alone.stderr);
  assert.match(alone.stderr, /^jvmlens: cannot start: this data directory is a cluster node's \(it applied commands up to \d+ of the cluster log created at \S+\): .*jvmlens cluster detach --data-dir DIR/);
  // So is a command that writes to the directory itself: that node alone would hold its key.
  const localKey = await runCli(['keys', 'create', '--data-dir', join(dir, 'n2'), '--user', 'ops', '--scopes', 'read']);
  assert.equal(localKey.code, 2, localKey.stdout + localKey.stderr);
  assert.match(localKey.stderr, /^jvmlens: this data directory is a cluster node's \(.*\): what this command writes there would reach that node alone; give it --cluster URLS instead of --data-dir/);
  const detached = await runCli(['cluster', 'detach', '--data-dir', join(dir, 'n2')]);
  assert.equal(detached.code, 0, detached.stderr);
  assert.match(detached.stdout, /detached: it had applied commands up to \d+ of the cluster log created at /);
  const single2 = await startService({ noStaticKey: true, dataDir: join(dir, 'n2'), args: ['--api-key', KEY] });
  for (const index of [10, 13, 14]) assert.ok(await seesVm(single2, index), `VM ${index} on the detached node`);
  await single2.stop({ keepData: true });
  // Detached, it is a single node's to a cluster: refused, or adopted by an empty log.
  const again = await refusal(dir, 'n2');
  assert.equal(again.code, 1, again.stderr);
  assert.match(again.stderr, /holds a single node's data \(5 VM\(s\), 1 API key\(s\)\)/);
});
