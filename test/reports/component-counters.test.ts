// The component kernel's counters: groups counted in dense arrays during the scan or one by one after it give the same partial, over two-byte or four-byte ids; ids newer than the component table are not counted, and a
// component filter makes groups only for the VMs that have a counted component. Items in the default order are written as JSON bytes.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { componentFinalize, componentPartition } from '../../src/engine/reports/kernels/component.ts';
import type { ComponentPartial } from '../../src/engine/reports/kernels/component.ts';
import { ComponentNames } from '../../src/engine/reports/kernels/component-names.ts';
import { RowOrder } from '../../src/engine/reports/kernels/row-order.ts';
import { parseReportRequest } from '../../src/engine/reports/report-request.ts';
import { validateEvents } from '../../src/ingest/events.ts';
import { Dictionary } from '../../src/storage/dictionary.ts';
import { FleetColumns } from '../../src/storage/fleet-columns.ts';
import { Ingestor } from '../../src/storage/ingest.ts';
import { openStore } from '../../src/storage/store.ts';
import type { Store } from '../../src/storage/store.ts';
import type { KernelContext } from '../../src/engine/reports/kernels/kernel-context.ts';
import { tempDir } from '../helpers/service.ts';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 25, 12, 0, 0);
const VMS = 40;

let store: Store;
let context: KernelContext;

/** VM v has library-k for the k in 0..10 with (v + k) % 3 !== 0, and library-11 when v % 10 === 0, in version 1.(v % 2); hosts repeat every 7 VMs. */
function hasLibrary(v: number, k: number): boolean {
  return k === 11 ? v % 10 === 0 : (v + k) % 3 !== 0;
}

before(async () => {
  store = openStore(tempDir());
  const dict = new Dictionary(store);
  const events: unknown[] = [];
  for (let v = 0; v < VMS; v++) {
    const vmId = `vm-${v}`;
    const time = NOW - (v % 5) * DAY - 3_600_000;
    events.push({ type: 'vm.start', vmId, time, agentVersion: '1', agentRevision: 'r', inventory: { hostName: `host-${v % 7}` }, tags: { team: `team-${v % 4}` } });
    const items = Array.from({ length: 12 }, (_, k) => k).filter((k) => hasLibrary(v, k)).map((k) => ({ componentName: `library-${k}`, componentVersion: `1.${v % 2}` }));
    events.push({ type: 'components', vmId, time: time + 1, items });
  }
  await new Ingestor(store, dict).ingest(() => validateEvents(events, NOW));
  const columns = new FleetColumns(store);
  columns.reload();
  context = { store, dict, fleet: columns.view(), rowOrder: new RowOrder() };
});
after(() => store.close());

const BODIES: Record<string, unknown>[] = [
  { groupBy: ['hostName'] },
  { groupBy: ['tags.team', 'hostName'] },
  { filter: ["componentName = 'library-4'"], groupBy: ['hostName'] },
  { filter: ["componentVersion = '1.1'"], groupBy: ['tags.team'] },
  { groupBy: ['day'], startTime: new Date(NOW - 6 * DAY).toISOString() },
  { groupBy: ['hostName'], detail: true },
];

for (const body of BODIES) {
  test(`dense counters and counting group by group agree: ${JSON.stringify(body)}`, () => {
    const request = parseReportRequest('component', body, NOW, 7 * DAY).request;
    const dense = componentPartition(context, request, 0, VMS);
    const oneByOne = componentPartition(context, request, 0, VMS, 0);
    assert.ok(dense.groups.length > 0 && dense.vmCount > 0);
    assert.deepEqual(oneByOne, dense);
  });
}

test('the counts are the same over two-byte and four-byte component ids', () => {
  assert.ok(context.fleet.componentArena instanceof Uint16Array);
  const wide: KernelContext = { ...context, fleet: { ...context.fleet, componentArena: Uint32Array.from(context.fleet.componentArena) } };
  for (const body of BODIES) {
    const request = parseReportRequest('component', body, NOW, 7 * DAY).request;
    assert.deepEqual(componentPartition(wide, request, 0, VMS), componentPartition(context, request, 0, VMS), JSON.stringify(body));
    assert.deepEqual(componentPartition(wide, request, 0, VMS, 0), componentPartition(context, request, 0, VMS, 0), JSON.stringify(body));
  }
});

/** A partial's counts as { group values: { component id: count } }. */
function countsByGroup(partial: ComponentPartial): Record<string, Record<number, number>> {
  const byGroup: Record<string, Record<number, number>> = {};
  partial.groups.forEach((values, g) => {
    const counts: Record<number, number> = (byGroup[JSON.stringify(values)] = {});
    for (let k = g === 0 ? 0 : partial.countEnds[g - 1]; k < partial.countEnds[g]; k += 2) counts[partial.counts[k]] = partial.counts[k + 1];
  });
  return byGroup;
}

test('components newer than the snapshot of the component table are not counted, and every other count stays', async () => {
  const request = parseReportRequest('component', { groupBy: ['tags.team'] }, NOW, 7 * DAY).request;
  const whole = countsByGroup(componentPartition(context, request, 0, VMS));
  const next = store.meta.get('componentNext') as number;
  // The columns are live: a VM's list may name components that its task's snapshot of the table lacks. As
  // if the last two were created after it:
  await store.meta.put('componentNext', next - 2);
  try {
    const older = countsByGroup(componentPartition(context, request, 0, VMS));
    const expected = Object.fromEntries(Object.entries(whole).map(([group, counts]) => [group, Object.fromEntries(Object.entries(counts).filter(([c]) => Number(c) < next - 2))]));
    assert.ok(Object.values(whole).some((counts) => Object.keys(counts).some((c) => Number(c) >= next - 2)), 'the fleet has the newest components');
    assert.deepEqual(older, expected);
  } finally {
    await store.meta.put('componentNext', next);
  }
});

test('a component filter makes groups only for the VMs that have a counted component', () => {
  const request = parseReportRequest('component', { filter: ["componentName = 'library-11'"], groupBy: ['hostName'] }, NOW, 7 * DAY).request;
  const partial = componentPartition(context, request, 0, VMS);
  const vms = Array.from({ length: VMS }, (_, v) => v).filter((v) => hasLibrary(v, 11));
  assert.equal(partial.vmCount, vms.length);
  assert.deepEqual(partial.groups.map(([host]) => host).sort(), [...new Set(vms.map((v) => `host-${v % 7}`))].sort());
  const counted = partial.counts.filter((_, k) => k % 2 === 1).reduce((a, b) => a + b, 0);
  assert.equal(counted, vms.length, 'one library-11 per VM that has it');
});

test('items in the default order are written as the JSON bytes of their objects: group fields, then the component, the count, the VMs', async () => {
  for (const body of [{ groupBy: ['tags.team', 'hostName'] }, { groupBy: ['hostName'], detail: true }, {}]) {
    const request = parseReportRequest('component', body, NOW, 7 * DAY).request;
    const partial = componentPartition(context, request, 0, VMS);
    const written: { json: string; nesting: readonly unknown[] }[] = [];
    await componentFinalize(store, new ComponentNames(), request, [partial]).write({
      add: () => assert.fail('the default order writes bytes'),
      // Copied: the writer's buffer is the kernel's, reused for the next item.
      addBytes: (json, nesting) => written.push({ json: Buffer.from(json).toString('utf8'), nesting }),
      mustSettle: false,
      settle: () => Promise.resolve(),
    });
    assert.ok(written.length > 0);
    for (const { json, nesting } of written) {
      const item = JSON.parse(json) as Record<string, unknown>;
      assert.equal(json, JSON.stringify(item), 'what JSON.stringify writes for the item');
      assert.deepEqual(Object.keys(item), [...request.groupBy, 'componentName', 'componentVersion', 'count', ...(request.detail ? ['vmIds'] : [])]);
      assert.deepEqual(nesting, request.groupBy.map((field) => item[field]));
    }
  }
});
