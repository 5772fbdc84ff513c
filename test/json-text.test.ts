// Where JSON that does not parse breaks (src/json-text.ts): the position V8 names, else the one jsonc-parser finds.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JsonSyntaxError, parseJson } from '../src/json-text.ts';

function breakOf(text: string): { offset: number; line: number; column: number } {
  try {
    parseJson(text);
  } catch (error) {
    assert.ok(error instanceof JsonSyntaxError);
    assert.ok(error.message.length > 0);
    return { offset: error.offset, line: error.line, column: error.column };
  }
  assert.fail(`${JSON.stringify(text)} parsed`);
}

test('JSON parses as JSON.parse reads it', () => {
  assert.deepEqual(parseJson('{"a":[1,"x",null]}'), { a: [1, 'x', null] });
});

test('a text that does not parse says where it breaks, by offset, line and column', () => {
  const table: [text: string, offset: number, line: number, column: number][] = [
    // V8 gives no position for an unexpected token: the scanner's
    ['[1,,2]', 3, 1, 4],
    ['[1,]', 3, 1, 4],
    ["{'a': 1}", 1, 1, 2],
    ['/* c */ {}', 0, 1, 1],
    ['{\n  "a": 1,\n  "b": [1,,2]\n}', 22, 3, 11],
    // nor for a text that ends too soon: its end
    ['{"a":', 5, 1, 6],
    ['', 0, 1, 1],
    ['[\n1,\n', 5, 3, 1],
    // V8's own position where it names one
    ['{"a" 1}', 5, 1, 6],
    ['[1,2]x', 5, 1, 6],
    ['{"a":1,}', 7, 1, 8],
    ['{\n"a":\n01}', 8, 3, 2],
  ];
  for (const [text, offset, line, column] of table) assert.deepEqual(breakOf(text), { offset, line, column }, JSON.stringify(text));
});

test('every mangled text that does not parse gets a position inside it, its line and column agreeing with it', () => {
  const valid = JSON.stringify({ type: 'code', vmId: 'vm-1', items: [{ sourceName: 'a.jar', className: 'A', methodNames: ['m', 'n'] }], tags: { env: 'prod' }, n: -1.5e3, ok: true, none: null }, null, 1);
  let seed = 7;
  const random = (below: number) => (seed = (seed * 48271) % 2147483647) % below;
  let failed = 0;
  for (let round = 0; round < 2_000; round++) {
    const chars = [...valid];
    for (let edits = 1 + random(3); edits > 0 && chars.length > 0; edits--) {
      const at = random(chars.length);
      const kind = random(3);
      if (kind === 0) chars.splice(at, 1);
      else if (kind === 1) chars.splice(at, 0, '{}[],:"\\x0 \n'[random(12)]);
      else chars.length = at;
    }
    const text = chars.join('');
    try {
      JSON.parse(text);
      continue;
    } catch {
      failed++;
    }
    const { offset, line, column } = breakOf(text);
    assert.ok(offset >= 0 && offset <= text.length, JSON.stringify(text));
    const before = text.slice(0, offset).split('\n');
    assert.deepEqual([line, column], [before.length, before[before.length - 1].length + 1], JSON.stringify(text));
  }
  assert.ok(failed > 1_000, `${failed} of 2,000 mangled texts failed to parse`);
});
