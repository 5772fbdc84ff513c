// Agent bodies as text: ASCII ones take a faster path than the UTF-8 decoder, and must read the same.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeEventBody, decodeUtf8 } from '../../src/ingest/events.ts';

const event = (hostName: string, className: string, methodName: string) => ({
  type: 'code',
  vmId: 'vm-1',
  time: 1_700_000_000_000,
  hostName,
  items: [{ sourceName: 'app.jar', className, methodName }],
});

test('an NDJSON or JSON body reads the same whether it is ASCII or holds other characters anywhere in it', () => {
  const ascii = [event('host-1', 'com.acme.Cafe', 'run()'), event('host-2', 'com.acme.Cafe', 'stop(int)')];
  const mixed = [event('host-1', 'com.acme.Cafe', 'run()'), event('hôte-2', 'com.acme.Café', 'stop(int)'), event('東京-3', 'com.acme.Cafe', 'ünïcode()😀')];
  for (const events of [ascii, mixed]) {
    const ndjson = Buffer.from(events.map((value) => JSON.stringify(value)).join('\n') + '\n');
    assert.deepEqual(decodeEventBody(ndjson, 'application/x-ndjson'), events);
    assert.deepEqual(decodeEventBody(Buffer.from(JSON.stringify(events)), 'application/json'), events);
  }
  // Its one non-ASCII character last of all: a check that looked only at the start would miss it.
  const lastOnly = Buffer.from('{"a":"ascii until the end é"}');
  assert.deepEqual(decodeEventBody(lastOnly, 'application/json'), [{ a: 'ascii until the end é' }]);
});

test('a body that is a view into a larger buffer is read from its own bytes only', () => {
  const whole = Buffer.from('xx{"host":"h1"}yy{"host":"hé"}zz');
  assert.equal(decodeUtf8(whole.subarray(2, 15)), '{"host":"h1"}');
  assert.equal(decodeUtf8(new Uint8Array(whole.buffer, whole.byteOffset + 17, 14)), '{"host":"hé"}');
});

test('invalid UTF-8 is still a 400, not replaced characters', () => {
  for (const bytes of [[0x7b, 0xc3, 0x28, 0x7d], [0x22, 0xff, 0x22], [0x22, 0xed, 0xa0, 0x80, 0x22]]) {
    assert.throws(() => decodeUtf8(Buffer.from(bytes)), (error: { code?: string; message?: string }) => error.code === 'MALFORMED_BODY' && error.message === 'body is not valid UTF-8');
  }
});
