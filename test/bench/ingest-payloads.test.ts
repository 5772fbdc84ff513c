// Ingestion payloads: exact items per body, set-up for exactly the VMs named, times rewritten on a copy.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fleetSpec } from '../../bench/fleet.ts';
import { buildIngestPayloads, stampTime } from '../../bench/ingest-payloads.ts';

const spec = fleetSpec({ vms: 200, componentsPerVm: 10, methods: 5_000 }, Date.UTC(2026, 10, 1));

type Event = { type: string; vmId: string; time: number; items?: unknown[] };

function events(body: Buffer): Event[] {
  return body.toString().trimEnd().split('\n').map((line) => JSON.parse(line) as Event);
}

test('bodies hold exactly the asked number of code items; set-up starts every VM they name', () => {
  const payloads = buildIngestPayloads(spec, 1_000, 3);
  assert.equal(payloads.bodies.length, 3);
  const started = new Set<string>();
  for (const batch of payloads.setup) {
    for (const event of JSON.parse(batch) as Event[]) {
      assert.ok(event.type === 'vm.start' || event.type === 'components');
      if (event.type === 'vm.start') started.add(event.vmId);
    }
  }
  assert.equal(started.size, payloads.vms);
  const named = new Set<string>();
  for (const body of payloads.bodies) {
    const code = events(stampTime(body, Date.UTC(2026, 10, 2)));
    assert.equal(body.items, 1_000);
    assert.equal(code.reduce((sum, event) => sum + event.items!.length, 0), 1_000);
    for (const event of code) {
      assert.equal(event.type, 'code');
      named.add(event.vmId);
    }
  }
  assert.deepEqual([...named].sort(), [...started].sort());
});

test('stampTime sets every event time on a copy', () => {
  const [body] = buildIngestPayloads(spec, 500, 1).bodies;
  const original = Buffer.from(body.bytes);
  const time = Date.UTC(2026, 10, 3, 4, 5, 6, 7);
  const stamped = events(stampTime(body, time));
  assert.ok(stamped.length > 1);
  assert.ok(stamped.every((event) => event.time === time));
  assert.deepEqual(body.bytes, original);
  assert.throws(() => stampTime(body, 12), /not 13 digits/);
});

test('a fleet too small for the bodies asked for says what to raise', () => {
  assert.throws(() => buildIngestPayloads(fleetSpec({ vms: 2, componentsPerVm: 1, methods: 10 }), 1_000, 1), /raise --vms or --methods/);
});
