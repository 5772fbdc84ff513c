// The synthetic fleet is deterministic and every event it makes passes validation.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { validateEvents } from '../../src/ingest/events.ts';
import { fleetBatches } from '../../src/seed/fleet.ts';

const spec = { vms: 120, componentsPerVm: 15, methods: 500, appEnvs: 4, tags: 3, seed: 7, now: Date.UTC(2026, 10, 1), days: 30 };

test('the same spec gives the same fleet; another seed another one', () => {
  const one = JSON.stringify([...fleetBatches(spec, 50)]);
  assert.equal(JSON.stringify([...fleetBatches(spec, 50)]), one);
  assert.notEqual(JSON.stringify([...fleetBatches({ ...spec, seed: 8 }, 50)]), one);
});

test('the fleet has the requested size, valid events, and covers every method', () => {
  const events = [...fleetBatches(spec, 50)].flat();
  assert.doesNotThrow(() => validateEvents(events));
  const starts = events.filter((e) => e.type === 'vm.start');
  assert.equal(starts.length, 120);
  for (const event of events.filter((e) => e.type === 'components')) assert.equal((event.items as unknown[]).length, 15);
  const methods = new Set(events.filter((e) => e.type === 'code').flatMap((e) => (e.items as { className: string; methodName: string; sourceName: string }[]).filter((i) => i.sourceName.startsWith('app-module')).map((i) => `${i.className}.${i.methodName}`)));
  assert.equal(methods.size, 500);
  for (const start of starts) {
    assert.ok((start.time as number) <= spec.now && (start.time as number) >= spec.now - 30 * 86_400_000);
  }
});
