// The synthetic fleet is deterministic and every event it makes passes validation.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { validateEvents } from '../../src/ingest/events.ts';
import { fleetBatches } from '../../src/seed/fleet.ts';
import { runCli } from '../helpers/service.ts';

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

/** The application methods of a fleet's code events, as [className, methodName], in the order sent. */
function appMethods(names: 'repeated' | 'realistic', methods = 500): [string, string][] {
  return [...fleetBatches({ ...spec, methods, methodNames: names }, 50)].flat()
    .filter((e) => e.type === 'code')
    .flatMap((e) => (e.items as { className: string; methodName: string; sourceName: string }[]).filter((i) => i.sourceName.startsWith('app-module')).map((i): [string, string] => [i.className, i.methodName]));
}

test('method names: repeated by default (ten names), or mostly distinct as in real classes, the same methods either way', () => {
  const repeated = appMethods('repeated');
  assert.deepEqual(JSON.stringify([...fleetBatches(spec, 50)]), JSON.stringify([...fleetBatches({ ...spec, methodNames: 'repeated' }, 50)]));
  assert.ok(new Set(repeated.map(([, name]) => name.slice(0, name.indexOf('(')))).size <= 10);
  const realistic = appMethods('realistic', 20_000);
  const distinct = new Set(realistic.map(([, name]) => name)).size / new Set(realistic.map(([cls, name]) => `${cls}.${name}`)).size;
  assert.ok(distinct > 0.2, `distinct names ${distinct}`);
  // Each class declares a method once: as many (class, name) pairs as methods.
  assert.equal(new Set(realistic.map(([cls, name]) => `${cls}.${name}`)).size, 20_000);
  assert.ok(realistic.every(([, name]) => /^(<init>|[a-z]+[A-Z][a-zA-Z]*)\([^()]*\)$/.test(name)), 'a name, then its parameter types in parentheses');
  assert.equal(JSON.stringify(appMethods('realistic', 20_000)), JSON.stringify(realistic));
  assert.deepEqual(appMethods('realistic').map(([cls]) => cls), repeated.map(([cls]) => cls));
});

test('jvmlens seed --method-names takes repeated or realistic only', async () => {
  const run = await runCli(['seed', '--vms', '1', '--method-names', 'unique', '--data-dir', '/nonexistent/jvmlens-seed']);
  assert.equal(run.code, 2);
  assert.match(run.stderr, /--method-names must be one of repeated, realistic, not 'unique'/);
});
