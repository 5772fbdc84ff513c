// Merging partitions: a report cut into many small partitions equals the same report in one partition.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fleetBatches } from '../../src/seed/fleet.ts';
import { ingestAll, iso, runReport } from '../helpers/reports.ts';
import type { Family } from '../helpers/reports.ts';
import { startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

const DAY = 86_400_000;
const now = Date.now();
const window = { from: iso(now - 20 * DAY), to: iso(now - DAY) };
const dataDir = tempDir();

const reports: [Family, Record<string, unknown>][] = [
  ['jvmInventory', { ...window, groupBy: ['tags.env', 'day'], sortBy: ['count=DESC'] }],
  ['jvmInventory', { ...window, filter: ["state != 'TERMINATED'"] }],
  ['component', { groupBy: ['tags.region'], detail: true, filter: ["componentName LIKE '^(log4j|jackson|spring)'"] }],
  ['component', { groupBy: ['week'], sortBy: ['count=DESC'] }],
  ['component', { groupBy: ['hostName'], filter: ["componentName LIKE '^log4j'"] }],
  ['component', { groupBy: ['tags.env', 'hostName'] }],
  ['codeInventory', { ...window }],
  ['codeInventory', { ...window, groupBy: ['sourceName', 'className', 'methodName'] }],
  ['codeInventory', { ...window, groupBy: ['sourceName'] }],
  ['codeInventory', { ...window, groupBy: ['sourceName', 'className'], sortBy: ['count=DESC'] }],
];

let whole: unknown[][] = [];

let sliced: RunningService;
// One hook: node:test runs top-level before hooks at once, and the two services share the data directory.
before(async () => {
  const service = await startService({ dataDir });
  await ingestAll(service, fleetBatches({ vms: 150, componentsPerVm: 20, methods: 3000, appEnvs: 3, tags: 3, seed: 11, now, days: 30 }, 50));
  whole = [];
  for (const [family, body] of reports) whole.push((await runReport(service, family, body)).items);
  await service.stop({ keepData: true });
  // 7 VM rows or code keys per partition: every report above runs as many partitions.
  sliced = await startService({ dataDir, args: ['--test-partition-size', '7', '--workers', '2'] });
});
after(() => sliced.stop());

reports.forEach(([family, body], k) => {
  test(`${family} ${JSON.stringify(body)}: many partitions merge into the one-partition result`, async () => {
    const run = await runReport(sliced, family, body);
    assert.ok(whole[k].length > 0, 'the report is not empty');
    assert.deepEqual(run.items, whole[k]);
  });
});
