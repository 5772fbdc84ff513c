// The front's rules for a first request head (src/http/front.ts), without sockets.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { judgeHead, MAX_HEADER_FIELDS } from '../../src/http/front.ts';

const head = (...lines: string[]): string => lines.map((line) => `${line}\r\n`).join('');

test('an HTTP/1.1 request with one Host passes unchanged', () => {
  assert.deepEqual(judgeHead(head('GET /opthub-health HTTP/1.1', 'Host: lb', 'Accept: */*')), { kind: 'pass' });
  assert.deepEqual(judgeHead(head('GET /x HTTP/1.1', 'Host: a', ...Array.from({ length: MAX_HEADER_FIELDS - 1 }, (_, i) => `X-${i}: v`))), { kind: 'pass' });
  assert.deepEqual(judgeHead(head('POST /agent/v1/events?x=1 HTTP/1.1', 'host: a:8080', 'Content-Length: 2', 'X-Obs: caf\xe9')), { kind: 'pass' });
  assert.deepEqual(judgeHead(head('POST /x HTTP/1.1', 'Host: a', 'content-length:  12 ')), { kind: 'pass' });
  assert.deepEqual(judgeHead(head('POST /x HTTP/1.1', 'Host: a', 'Transfer-Encoding: Chunked')), { kind: 'pass' });
  for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE']) assert.deepEqual(judgeHead(head(`${method} /x HTTP/1.1`, 'Host: a')), { kind: 'pass' });
});

test('HTTP/1.0 is rewritten as HTTP/1.1 with a Host and Connection: close, keeping the other fields', () => {
  assert.deepEqual(judgeHead(head('GET /opthub-health HTTP/1.0')), {
    kind: 'rewrite',
    head: 'GET /opthub-health HTTP/1.1\r\nHost: jvmlens\r\nConnection: close',
    method: 'GET',
  });
  assert.deepEqual(judgeHead(head('POST /agent/v1/events HTTP/1.0', 'Host: gw', 'Connection: keep-alive', 'Keep-Alive: timeout=5', 'Content-Length: 10')), {
    kind: 'rewrite',
    head: 'POST /agent/v1/events HTTP/1.1\r\nHost: gw\r\nContent-Length: 10\r\nConnection: close',
    method: 'POST',
  });
});

test('a Host-less HTTP/1.1 request (a probe configured without one) is answered, not refused', () => {
  assert.deepEqual(judgeHead(head('HEAD /opthub-health HTTP/1.1', 'User-Agent: probe')), {
    kind: 'rewrite',
    head: 'HEAD /opthub-health HTTP/1.1\r\nUser-Agent: probe\r\nHost: jvmlens\r\nConnection: close',
    method: 'HEAD',
  });
});

test('malformed heads are refused with the code and a message saying what is wrong', () => {
  const cases: Array<[string, string, RegExp]> = [
    [head('garbage'), 'BAD_REQUEST', /request line/],
    [head('GET /x'), 'BAD_REQUEST', /request line/],
    [head('GET  /x HTTP/1.1', 'Host: a'), 'BAD_REQUEST', /request line/],
    [head('GET /a b HTTP/1.1', 'Host: a'), 'BAD_REQUEST', /request line/],
    [head('GET /x HTTP/1.1', 'Host: a', 'X: a\0b'), 'BAD_REQUEST', /header line 2/],
    [head('GET /x HTTP/1.1', 'Host: a', 'No colon'), 'BAD_REQUEST', /header line 2/],
    [head('GET /x HTTP/1.1', 'Host: a', ' folded: x'), 'BAD_REQUEST', /header line 2/],
    ['GET /x HTTP/1.1\nHost: a\r\n', 'BAD_REQUEST', /line 1 .*CRLF/],
    [head('GET /x HTTP/1.1', 'Host: a', 'Host: b'), 'BAD_REQUEST', /more than one 'host'/],
    [head('GET http://a/x HTTP/1.1', 'Host: a'), 'BAD_REQUEST', /target/],
    [head('OPTIONS * HTTP/1.1', 'Host: a'), 'BAD_REQUEST', /target/],
    [head('GET x HTTP/1.1', 'Host: a'), 'BAD_REQUEST', /target/],
    [head('POST /x HTTP/1.1', 'Host: a', 'Content-Length: abc'), 'BAD_REQUEST', /content-length/],
    [head('POST /x HTTP/1.1', 'Host: a', 'Content-Length: -1'), 'BAD_REQUEST', /content-length/],
    [head('POST /x HTTP/1.1', 'Host: a', 'Content-Length: 2', 'Content-Length: 2'), 'BAD_REQUEST', /more than one 'content-length'/],
    [head('POST /x HTTP/1.1', 'Host: a', 'Content-Length: 2', 'Transfer-Encoding: chunked'), 'BAD_REQUEST', /both 'content-length' and 'transfer-encoding'/],
    [head('POST /x HTTP/1.1', 'Host: a', 'Transfer-Encoding: chunked', 'Transfer-Encoding: chunked'), 'BAD_REQUEST', /more than one 'transfer-encoding'/],
    [head('POST /x HTTP/1.1', 'Host: a', 'Transfer-Encoding: gzip'), 'NOT_IMPLEMENTED', /transfer coding 'gzip'/],
    [head('POST /x HTTP/1.1', 'Host: a', 'Transfer-Encoding: gzip, chunked'), 'NOT_IMPLEMENTED', /transfer coding 'gzip, chunked'/],
    [head('get /x HTTP/1.1', 'Host: a'), 'NOT_IMPLEMENTED', /method get/],
    [head('PROPFIND /x HTTP/1.1', 'Host: a'), 'NOT_IMPLEMENTED', /method PROPFIND/],
    [head('GET /x HTTP/2.0', 'Host: a'), 'HTTP_VERSION_NOT_SUPPORTED', /HTTP\/2\.0/],
    [head('GET /x HTTP/1.2', 'Host: a'), 'HTTP_VERSION_NOT_SUPPORTED', /HTTP\/1\.2/],
    [head('GET /x HTTP/1.1', 'Host: a', ...Array.from({ length: MAX_HEADER_FIELDS }, (_, i) => `X-${i}: v`)), 'HEADERS_TOO_LARGE', /more than 48 header fields/],
    // HTTP/1.0 without Host gets Host and Connection added: 47 fields would be relayed as 49.
    [head('GET /x HTTP/1.0', ...Array.from({ length: MAX_HEADER_FIELDS - 1 }, (_, i) => `X-${i}: v`)), 'HEADERS_TOO_LARGE', /more than 46 header fields/],
  ];
  for (const [text, code, message] of cases) {
    const verdict = judgeHead(text);
    assert.equal(verdict.kind, 'refuse', JSON.stringify(text.slice(0, 60)));
    if (verdict.kind !== 'refuse') continue;
    assert.equal(verdict.code, code, JSON.stringify(text.slice(0, 60)));
    assert.match(verdict.message, message);
  }
});
