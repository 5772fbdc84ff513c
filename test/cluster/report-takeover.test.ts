// A report's coordinator that stops answering without dying (a long pause, a network cut) is given up for
// gone once its heartbeat expires: another node takes its report over and generates it again. When the first
// one comes back, its own run goes on for a moment. What a user relies on: every node then serves the one
// report the log says was generated, the same items through each, none twice; not the paused node's older
// answer, nor a mix of both runs' pages. Real processes: one nats-server and three nodes; the coordinator's
// partitions take 300 ms each (`--test-faults slow-partition`), and it is paused with SIGSTOP mid-report.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { startNatsServers } from '../../src/cluster/nats-servers.ts';
import type { NatsServer } from '../../src/cluster/nats-servers.ts';
import { startEvent } from '../helpers/cve.ts';
import { ingest } from '../helpers/events.ts';
import { createReport, readPages, waitFinal } from '../helpers/reports.ts';
import { startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

const missing = spawnSync('nats-server', ['--version']).error !== undefined;
if (missing && process.env.CI === 'true') throw new Error('nats-server is not installed (apt-get install nats-server)');
const KEY = 'takeover_test_key_0123456789';

let nats: NatsServer[] = [];
let nodes: RunningService[] = [];

before(async () => {
  if (missing) return;
  const dir = tempDir('jvmlens-report-takeover-');
  nats = await startNatsServers(1, dir);
  // Every report runs on its coordinator; one item per page, so a mix of two runs' pages shows.
  const start = async (index: number, extra: string[] = []) => ({
    ...(await startService({ noStaticKey: true, dataDir: `${dir}/n${index}`, args: ['--api-key', KEY, '--cluster', nats[0].url, '--node-id', `n${index}`, '--report-fan-out-vms', '1000000', '--page-bytes', '1024', ...extra] })),
    apiKey: KEY,
  });
  // n1's report runs 8 partitions of 5 VMs at 300 ms more each.
  nodes = [await start(1, ['--test-faults', 'slow-partition', '--test-partition-size', '5']), await start(2), await start(3)];
});

after(async () => {
  for (const node of nodes) process.kill(node.child.pid!, 'SIGCONT');
  await Promise.all(nodes.map((node) => node.stop()));
  await Promise.all(nats.map((server) => server.stop()));
});

async function ingestVm(node: RunningService, index: number): Promise<void> {
  const vmId = `7a0e0e00-0000-4000-8000-${String(index).padStart(12, '0')}`;
  const result = await ingest(node.gatewayUrl, KEY, [startEvent(vmId, Date.now() - 60_000 + index, `host-${index}`)]);
  assert.equal(result.status, 200, JSON.stringify(result.body));
}

test('a coordinator paused past its heartbeat and then back: every node serves the report the node that took it over generated', { skip: missing && 'nats-server is not installed' }, async (t) => {
  for (let index = 0; index < 40; index++) await ingestVm(nodes[index % 3], index);
  const report = await createReport(nodes[0], 'jvmInventory', {});
  assert.equal(report.status, 202, report.text);
  await new Promise((resolve) => setTimeout(resolve, 400));
  process.kill(nodes[0].child.pid!, 'SIGSTOP');
  const pausedAt = Date.now();
  // Written while it is paused: the run that takes the report over counts them, the paused one does not.
  for (let index = 40; index < 50; index++) await ingestVm(nodes[1], index);

  // n2, the lowest live node, takes the report over once n1's heartbeat expired (15 s).
  const takenOver = await waitFinal(nodes[1], 'jvmInventory', report.body.reportId, 60_000);
  t.diagnostic(`taken over and generated again by n2 ${Date.now() - pausedAt} ms after n1 was paused`);
  assert.equal(takenOver.body.state, 'SUCCEEDED', takenOver.text.slice(0, 300));
  assert.equal(takenOver.body.totalCount, 50);
  assert.match(nodes[1].stderr(), /taking over a report whose coordinator left/);

  // n1 goes on with its run, which the log's takeover stops; whatever of it reached the log is not applied.
  process.kill(nodes[0].child.pid!, 'SIGCONT');
  await waitFinal(nodes[0], 'jvmInventory', report.body.reportId, 30_000);
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  const served = await Promise.all(nodes.map(async (node) => {
    const pages = await readPages(node, 'jvmInventory', report.body.reportId);
    return { totalCount: pages[0].body.totalCount as number, vmIds: pages.flatMap((page) => (page.body.data as { vmId: string }[]).map((item) => item.vmId)) };
  }));
  for (const [index, { totalCount, vmIds }] of served.entries()) {
    assert.equal(totalCount, 50, `n${index + 1}'s record is the takeover's`);
    assert.equal(new Set(vmIds).size, 50, `n${index + 1} serves each of the 50 VMs once (${vmIds.length} items)`);
    assert.deepEqual(vmIds, served[1].vmIds, `n${index + 1} serves n2's pages`);
  }
});
