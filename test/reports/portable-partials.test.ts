// Partitions by VM shard, carried between nodes: each shard set's partial, made portable on one store, sent as
// a cluster message and read back into another store whose component ids differ, merges into exactly the
// items of a report over the whole fleet on that other store.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { decodeMessage, encodeMessage } from '../../src/cluster/commands.ts';
import { assignShards } from '../../src/cluster/shards.ts';
import { componentFinalize, componentPartition } from '../../src/engine/reports/kernels/component.ts';
import { ComponentNames } from '../../src/engine/reports/kernels/component-names.ts';
import { jvmFinalize, jvmPartition } from '../../src/engine/reports/kernels/jvm.ts';
import type { JvmPartial } from '../../src/engine/reports/kernels/jvm.ts';
import type { KernelContext } from '../../src/engine/reports/kernels/kernel-context.ts';
import { RowOrder } from '../../src/engine/reports/kernels/row-order.ts';
import { fromPortable, hasPortablePartials, toPortable } from '../../src/engine/reports/portable-partials.ts';
import type { PortablePartial } from '../../src/engine/reports/portable-partials.ts';
import { parseReportRequest } from '../../src/engine/reports/report-request.ts';
import type { ReportFamily, ReportRequest } from '../../src/engine/reports/report-types.ts';
import type { ComponentPartial } from '../../src/engine/reports/kernels/component.ts';
import type { PartialResult } from '../../src/engine/reports/tasks.ts';
import { RowShards, vmShard } from '../../src/engine/reports/vm-shards.ts';
import { validateEvents } from '../../src/ingest/events.ts';
import { Dictionary } from '../../src/storage/dictionary.ts';
import { FleetColumns } from '../../src/storage/fleet-columns.ts';
import { Ingestor } from '../../src/storage/ingest.ts';
import { openStore } from '../../src/storage/store.ts';
import type { Store } from '../../src/storage/store.ts';
import { tempDir } from '../helpers/service.ts';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 26, 12, 0, 0);
const VMS = 60;
const SHARDS = 8;
const NODES = ['n1', 'n2', 'n3'];

/** Two stores of the same fleet: the second got the VMs in reverse order, so its component ids differ. */
let here: KernelContext;
let there: KernelContext;
const stores: Store[] = [];

function fleetEvents(): unknown[][] {
  return Array.from({ length: VMS }, (_, v) => {
    const vmId = `0b1e55ed-0000-4000-8000-${String(v).padStart(12, '0')}`;
    const time = NOW - (v % 5) * DAY - 3_600_000;
    const items = Array.from({ length: 9 }, (_, k) => k).filter((k) => (v + k) % 3 !== 0).map((k) => ({ componentName: `lib-${k}`, componentVersion: `1.${(v + 2 * k) % 4}` }));
    return [
      { type: 'vm.start', vmId, time, agentVersion: '1', agentRevision: 'r', inventory: { hostName: `host-${v % 7}` }, tags: { team: `team-${v % 4}`, env: v % 2 === 0 ? 'prod' : 'test' } },
      { type: 'components', vmId, time: time + 1, items },
    ];
  });
}

async function contextOf(perVm: unknown[][]): Promise<KernelContext> {
  const store = openStore(tempDir());
  stores.push(store);
  const dict = new Dictionary(store);
  await new Ingestor(store, dict).ingest(() => validateEvents(perVm.flat(), NOW));
  const columns = new FleetColumns(store);
  columns.reload();
  return { store, dict, fleet: columns.view(), rowOrder: new RowOrder() };
}

before(async () => {
  const perVm = fleetEvents();
  here = await contextOf(perVm);
  there = await contextOf([...perVm].reverse());
  const ids = (context: KernelContext) => Object.fromEntries([...context.store.componentIds.getRange()].map(({ key, value }) => [key, value]));
  assert.notDeepEqual(ids(here), ids(there), 'the two stores number components differently');
});
after(() => stores.forEach((store) => store.close()));

function partition(context: KernelContext, request: ReportRequest): PartialResult {
  return request.family === 'component' ? componentPartition(context, request, 0, VMS) : jvmPartition(context, request, 0, VMS);
}

/** The report's items as JSON text, in order. */
async function items(context: KernelContext, request: ReportRequest, partials: PartialResult[]): Promise<string[]> {
  if (request.family === 'jvmInventory') return jvmFinalize(request, partials as JvmPartial[]).map((item) => JSON.stringify(item));
  const written: string[] = [];
  const result = componentFinalize(context.store, new ComponentNames(), request, partials as ComponentPartial[]);
  await result.write({
    add: (item) => written.push(JSON.stringify(item)),
    addBytes: (json) => written.push(Buffer.from(json).toString('utf8')),
    mustSettle: false,
    settle: () => Promise.resolve(),
  });
  written.push(JSON.stringify(result.summary));
  return written;
}

const REQUESTS: [ReportFamily, Record<string, unknown>][] = [
  ['component', { groupBy: ['tags.team'] }],
  ['component', { filter: ["tags.env = 'prod'"] }],
  ['component', { groupBy: ['hostName'], detail: true }],
  ['component', { filter: ["componentName = 'lib-4'"], groupBy: ['hostName', 'componentVersion'], sortBy: ['count=DESC'] }],
  ['jvmInventory', { from: '30d', groupBy: ['tags.team', 'day'] }],
];

for (const [family, body] of REQUESTS) {
  test(`shard partitions made portable here and read there merge into the whole fleet's report there: ${family} ${JSON.stringify(body)}`, async () => {
    const request = parseReportRequest(family, body, NOW, 7 * DAY).request;
    assert.ok(hasPortablePartials(request));
    const shardSets = [...assignShards(SHARDS, NODES).values()];
    assert.equal(shardSets.length, NODES.length, 'every node owns shards');
    const partials = shardSets.map((of) => {
      const portable = toPortable(here.store, request, partition({ ...here, shards: new RowShards().filter({ count: SHARDS, of }, here.fleet, here.dict) }, request));
      return fromPortable(there.store, decodeMessage(encodeMessage(portable)) as PortablePartial);
    });
    const expected = await items(there, request, [partition(there, request)]);
    assert.ok(expected.length > 1, 'the report has items');
    assert.deepEqual(await items(there, request, partials), expected);
  });
}

test('shard partitions split the fleet: each VM is counted in the partition of its own shard only', () => {
  const request = parseReportRequest('component', {}, NOW, 7 * DAY).request;
  const shardSets = [...assignShards(SHARDS, NODES).values()];
  const rowShards = new RowShards();
  const counts = shardSets.map((of) => componentPartition({ ...here, shards: rowShards.filter({ count: SHARDS, of }, here.fleet, here.dict) }, request, 0, VMS).vmCount);
  assert.equal(counts.reduce((a, b) => a + b, 0), componentPartition(here, request, 0, VMS).vmCount);
  const vmIds = fleetEvents().map((events) => (events[0] as { vmId: string }).vmId);
  shardSets.forEach((of, k) => assert.equal(counts[k], vmIds.filter((vmId) => of.includes(vmShard(vmId, SHARDS))).length));
});

test('a list of VMs or of code is not portable: those reports run on their coordinator', () => {
  assert.equal(hasPortablePartials(parseReportRequest('jvmInventory', {}, NOW, 7 * DAY).request), false);
  assert.equal(hasPortablePartials(parseReportRequest('codeInventory', {}, NOW, 7 * DAY).request), false);
});

test('a partial naming a component the receiving store does not know is refused, not miscounted', () => {
  const request = parseReportRequest('component', { groupBy: ['tags.team'] }, NOW, 7 * DAY).request;
  const portable = toPortable(here.store, request, componentPartition(here, request, 0, VMS));
  assert.equal(portable.kind, 'component');
  if (portable.kind !== 'component') return;
  portable.components[0] = ['not-in-this-fleet', '9.9'];
  assert.throws(() => fromPortable(there.store, portable), /not-in-this-fleet 9\.9 is not known on this node/);
});
