// The ingestion's method → slot table: answers as a Map of the same ids would, through growth and rehashing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MethodSlots } from '../../src/storage/method-slots.ts';
import { seeded } from '../../src/seed/random.ts';

const PARTS = ['app.jar', 'lib-ü.jar', 'com/acme/Main', '東京/Klass', 'shop', '', 'run()', 'say"hi"(int)', '😀()', 'x'.repeat(3000)];

test('ids added with their slots are found, by hash and by guessed slot, as a Map finds them', () => {
  const rnd = seeded(11);
  const slots = new MethodSlots(50_000);
  const model = new Map<string, number>();
  for (let n = 0; n < 60_000; n++) {
    const id = `${PARTS[Math.floor(rnd() * PARTS.length)]}\u0000${n % 7}\u0000${PARTS[Math.floor(rnd() * PARTS.length)]}\u0000m${Math.floor(rnd() * 40_000)}`;
    if (model.has(id)) continue;
    model.set(id, model.size);
    slots.set(id, model.size - 1);
  }
  assert.equal(slots.size, model.size);
  for (const [id, slot] of model) {
    assert.equal(slots.slot(id, -1), slot, 'by hash');
    assert.equal(slots.slot(id, slot), slot, 'by its slot');
    assert.equal(slots.slot(id, slot + 1), slot, 'after a wrong guess');
  }
  assert.equal(slots.slot('app.jar\u0000absent', 0), undefined);
  assert.equal(slots.slot('', 3), undefined);
});

test('adding an id again keeps its entry; slots past the guessed range are found by hash; clear forgets all', () => {
  const slots = new MethodSlots(10);
  slots.set('a\u0000run()', 3);
  slots.set('a\u0000run()', 3);
  assert.equal(slots.size, 1);
  slots.set('a\u0000far()', 1_000_000);
  assert.equal(slots.slot('a\u0000far()', 1_000_000), 1_000_000);
  assert.equal(slots.slot('a\u0000run()', 7), 3);
  slots.clear();
  assert.equal(slots.size, 0);
  assert.equal(slots.slot('a\u0000run()', 3), undefined);
  slots.set('b\u0000again()', 0);
  assert.equal(slots.slot('b\u0000again()', -1), 0);
});

test('a lone surrogate is the method its stored name (U+FFFD) is', () => {
  const slots = new MethodSlots(10);
  slots.set('a\u0000x\ufffd()', 5);
  assert.equal(slots.slot('a\u0000x\ud800()', -1), 5);
});
