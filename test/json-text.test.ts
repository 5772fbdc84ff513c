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
