// Class records as bytes: every method name and slot comes back as written, whatever its characters.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeClassCode, decodeFleetClassCode, encodeClassCode, encodeFleetClassCode } from '../../src/storage/class-code.ts';

const CASES: [string, string[]][] = [
  ['no methods', []],
  ['ASCII', ['<init>()', 'run()', 'toString()']],
  ['UTF-8 of 2, 3 and 4 bytes', ['Zürich()', '東京(int)', '😀(java.lang.String)']],
  ['escapes and separators', ['say"hi"(\\)', 'a\u0000b', 'tab\there', '']],
  ['long names', ['x'.repeat(70_000), 'y']],
];

for (const [name, methods] of CASES) {
  test(`${name}: decode(encode(record)) is the record`, () => {
    const record = { methods, slots: methods.map((_, m) => (m === 1 ? 0xfffffff0 : m * 7919)) };
    assert.deepEqual(decodeClassCode(encodeClassCode(record)), record);
  });

  test(`${name}: a fleet-wide record (each method with its slots in one to three AppEnvs) decodes as written`, () => {
    const record = { methods, slots: methods.map((_, m) => Array.from({ length: 1 + (m % 3) }, (_, k) => (m === 1 && k === 0 ? 0xfffffff0 : m * 7919 + k))) };
    const bytes = encodeFleetClassCode(record);
    assert.deepEqual(decodeFleetClassCode(bytes), record);
    const shared = Buffer.alloc(bytes.length + 64, 0xff);
    bytes.copy(shared);
    assert.deepEqual(decodeFleetClassCode(shared, bytes.length), record, 'from a larger shared buffer, by its size');
  });
}

test('a record at the start of a larger shared buffer decodes by its size', () => {
  const record = { methods: ['a()', 'b()'], slots: [1, 2] };
  const bytes = encodeClassCode(record);
  const shared = Buffer.alloc(bytes.length + 64, 0xff);
  bytes.copy(shared);
  assert.deepEqual(decodeClassCode(shared, bytes.length), record);
});

test('a lone surrogate keeps its place: the names after it decode whole', () => {
  const decoded = decodeClassCode(encodeClassCode({ methods: ['\ud800x', 'next()'], slots: [3, 4] }));
  assert.deepEqual(decoded, { methods: ['\ufffdx', 'next()'], slots: [3, 4] });
});
