// VM state and life end as reports see them (decisions §4, §7) under the default --offline-after-ms of 5 minutes.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { vmStart } from '../helpers/events.ts';
import { ingestAll, iso, runReport } from '../helpers/reports.ts';
import { startService } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

const MINUTE = 60_000;
const now = Date.now();
const started = now - 60 * MINUTE;

let service: RunningService;

before(async () => {
  service = await startService();
  const start = (vmId: string) => vmStart(vmId, started, { tags: { env: 'state-test' } });
  await ingestAll(service, [[
    // Heard a minute ago: RUNNING; 10 minutes ago: OFFLINE (the default limit is 5 minutes).
    start('heard-1m'), { type: 'vm.heartbeat', vmId: 'heard-1m', time: now - MINUTE },
    start('heard-10m'), { type: 'vm.heartbeat', vmId: 'heard-10m', time: now - 10 * MINUTE },
    // Stopped 30 minutes ago; a late heartbeat does not make it heard from again.
    start('stopped'), { type: 'vm.stop', vmId: 'stopped', time: now - 30 * MINUTE }, { type: 'vm.heartbeat', vmId: 'stopped', time: now - 2 * MINUTE },
    // Stopped, then started again: RUNNING.
    start('restarted'), { type: 'vm.stop', vmId: 'restarted', time: now - 40 * MINUTE }, vmStart('restarted', now - 1.5 * MINUTE, { tags: { env: 'state-test' } }),
  ]]);
});

after(() => service.stop());

test('states: RUNNING, OFFLINE after 5 minutes of silence, TERMINATED after a stop, RUNNING again after a new start', async () => {
  const run = await runReport(service, 'jvmInventory', { filter: ["tags.env = 'state-test'"], sortBy: ['vmId=ASC'] });
  assert.deepEqual(run.items.map((item) => [item.vmId, item.state, item.lastHeardTime]), [
    ['heard-10m', 'OFFLINE', iso(now - 10 * MINUTE)],
    ['heard-1m', 'RUNNING', iso(now - MINUTE)],
    ['restarted', 'RUNNING', iso(now - 1.5 * MINUTE)],
    ['stopped', 'TERMINATED', iso(now - 30 * MINUTE)],
  ]);
  assert.equal(run.items.find((item) => item.vmId === 'restarted')!.startTime, iso(now - 1.5 * MINUTE));
});

test('a RUNNING life lasts until now; other lives end when the VM was last heard', async () => {
  // A window after every last heartbeat: only the running VMs were alive in it.
  const run = await runReport(service, 'jvmInventory', { from: iso(now - 30_000), filter: ["tags.env = 'state-test'"] });
  assert.deepEqual(run.items.map((item) => item.vmId).sort(), ['heard-1m', 'restarted']);
  const earlier = await runReport(service, 'jvmInventory', { from: iso(now - 20 * MINUTE), filter: ["tags.env = 'state-test'"] });
  assert.deepEqual(earlier.items.map((item) => item.vmId).sort(), ['heard-10m', 'heard-1m', 'restarted']);
});

test('component population: heard from since startTime, so a stopped VM drops out even with later events', async () => {
  await ingestAll(service, [['heard-1m', 'heard-10m', 'stopped', 'restarted'].map((vmId) => ({ type: 'components', vmId, time: now - 20 * MINUTE, items: [{ componentName: 'state-lib', componentVersion: '1' }] }))]);
  const run = await runReport(service, 'component', { startTime: now - 20 * MINUTE, filter: ["componentName = 'state-lib'"], detail: true });
  assert.deepEqual(run.items, [{ componentName: 'state-lib', componentVersion: '1', count: 3, vmIds: ['heard-10m', 'heard-1m', 'restarted'] }]);
  const byState = await runReport(service, 'component', { startTime: now - 20 * MINUTE, groupBy: ['state'], filter: ["componentName = 'state-lib'"] });
  assert.deepEqual(byState.items.map((item) => [item.state, item.count]), [['OFFLINE', 1], ['RUNNING', 2]]);
});
