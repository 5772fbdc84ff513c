// The TCP front of a native uWebSockets.js listener. This uWS build never answers an HTTP/1.0 request, an
// HTTP/1.1 request without Host, or a malformed request head: it holds the connection until its idle
// timeout. Load balancers probe with HTTP/1.0 by default (HAProxy's `option httpchk`, nginx), so the front
// owns the public port, reads the first request head of each connection, answers a malformed one itself,
// rewrites an HTTP/1.0 or Host-less one as HTTP/1.1 with a Host and `Connection: close`, and splices the
// connection to uWS listening on a loopback port. Later requests on a kept-alive connection pass unread: a
// client that sent one well-formed HTTP/1.1 request speaks HTTP/1.1.
import { STATUS_CODES } from 'node:http';
import net from 'node:net';
import { ApiError, errorBody } from '../errors.ts';
import type { ErrorCode } from '../errors.ts';

/** Longest request head the front reads: Node's own limit (uWS would take more; no client of this service needs it). */
export const MAX_HEAD_BYTES = 16 * 1024;
/** Most header fields in a request head as relayed: uWS leaves a request with more unanswered (tried: 49). */
export const MAX_HEADER_FIELDS = 48;
/** A connection that has not sent its whole first head by then is closed. */
const HEAD_TIMEOUT_MS = 10_000;

// RFC 9112 §3 and RFC 9110 §5.1, §5.5: a token method, a target without controls or spaces, a version;
// a token field name, a value of visible characters, spaces, tabs and obs-text.
const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) ([\x21-\x7e\x80-\xff]+) HTTP\/(\d)\.(\d)$/;
const FIELD_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[\t\x20-\x7e\x80-\xff]*$/;
/** The methods uWS answers; it closes the connection on any other (`get`, `PROPFIND`) without a word. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'CONNECT']);

/** What the front does with a connection, decided from its first request head. */
export type HeadVerdict =
  | { kind: 'pass' }
  | { kind: 'rewrite'; head: string; method: string }
  | { kind: 'refuse'; code: ErrorCode; message: string };

/**
 * Judges a request head: its bytes in latin1 up to the blank line that ends it. Pure, so the rules are tested
 * without sockets.
 */
export function judgeHead(head: string): HeadVerdict {
  const lines = head.split('\n');
  lines.pop(); // the empty rest after the last line break
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].endsWith('\r')) return refuse('BAD_REQUEST', `line ${i + 1} of the request head does not end with CRLF`);
    lines[i] = lines[i].slice(0, -1);
  }
  const requestLine = REQUEST_LINE.exec(lines[0]);
  if (requestLine === null) return refuse('BAD_REQUEST', 'the request line is not "METHOD target HTTP/x.y"');
  const [, method, target, major, minor] = requestLine;
  if (major !== '1' || (minor !== '0' && minor !== '1')) return refuse('HTTP_VERSION_NOT_SUPPORTED', `HTTP/${major}.${minor} is not supported; use HTTP/1.1 or HTTP/1.0`);
  // RFC 9110 §9.1: methods are case-sensitive, and one a server does not know is a 501.
  if (!METHODS.has(method)) return refuse('NOT_IMPLEMENTED', `the method ${method} is not one this service knows (methods are upper case: GET, POST, PUT, DELETE, …)`);
  // uWS leaves absolute-form (`http://host/path`), `*` and other targets unanswered; no client of the service sends them.
  if (!target.startsWith('/')) return refuse('BAD_REQUEST', 'the request target is not a path starting with "/"');
  let hosts = 0;
  let contentLengths = 0;
  const transferEncodings: string[] = [];
  const kept: string[] = [];
  for (let i = 1; i < lines.length; i++) {
    const field = FIELD_LINE.exec(lines[i]);
    if (field === null) return refuse('BAD_REQUEST', `header line ${i} is not "name: value" of allowed characters`);
    const name = field[1].toLowerCase();
    if (name === 'host') hosts++;
    // Optional whitespace is spaces and tabs only (RFC 9110 §5.6.3): not String.trim's wider set.
    const value = lines[i].slice(field[1].length + 1).replace(/^[ \t]+|[ \t]+$/g, '');
    // uWS closes the connection without an answer on a Content-Length that is not a number.
    if (name === 'content-length') {
      if (!/^\d+$/.test(value)) return refuse('BAD_REQUEST', 'the content-length header is not a number');
      contentLengths++;
    }
    if (name === 'transfer-encoding') transferEncodings.push(value.toLowerCase());
    if (name !== 'connection' && name !== 'keep-alive') kept.push(lines[i]);
  }
  if (hosts > 1) return refuse('BAD_REQUEST', "the request has more than one 'host' header");
  // uWS closes the connection on these without an answer: the server's own checks (server.ts) come too late.
  if (contentLengths > 1) return refuse('BAD_REQUEST', "the request has more than one 'content-length' header");
  if (transferEncodings.length > 1) return refuse('BAD_REQUEST', "the request has more than one 'transfer-encoding' header");
  if (transferEncodings.length === 1) {
    if (contentLengths > 0) return refuse('BAD_REQUEST', "the request has both 'content-length' and 'transfer-encoding'");
    if (transferEncodings[0] !== 'chunked') return refuse('NOT_IMPLEMENTED', `the transfer coding '${transferEncodings[0]}' is not supported; send the body with content-length or transfer-encoding: chunked`);
  }
  const pass = minor === '1' && hosts === 1;
  // A rewritten head adds Connection (and Host when missing) to the fields it keeps.
  const added = pass ? 0 : 1 + (hosts === 0 ? 1 : 0);
  if ((pass ? lines.length - 1 : kept.length) + added > MAX_HEADER_FIELDS) {
    return refuse('HEADERS_TOO_LARGE', `the request has more than ${MAX_HEADER_FIELDS - added} header fields`);
  }
  if (pass) return { kind: 'pass' };
  // RFC 9112 §3.2 makes a Host-less HTTP/1.1 request a 400; it is answered instead, as HTTP/1.0 is, because
  // the usual sender is a health probe configured without one, and a 400 would take the node out of service.
  if (hosts === 0) kept.push('Host: jvmlens');
  return { kind: 'rewrite', head: [`${method} ${target} HTTP/1.1`, ...kept, 'Connection: close'].join('\r\n'), method };
}

function refuse(code: ErrorCode, message: string): HeadVerdict {
  return { kind: 'refuse', code, message };
}

/** Where the blank line that ends a head starts, or -1 while the head is incomplete. */
function blankLine(data: Buffer): number {
  const crlf = data.indexOf('\r\n\r\n');
  const lf = data.indexOf('\n\n');
  if (crlf < 0) return lf < 0 ? -1 : lf + 1;
  return lf < 0 ? crlf + 2 : Math.min(crlf + 2, lf + 1);
}

/** The whole response to a malformed head, in the service's error model. */
function refusal(error: ApiError): string {
  const body = JSON.stringify(errorBody(error));
  return `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`;
}

export interface FrontOptions {
  /** The port uWS listens on, on 127.0.0.1. */
  upstreamPort: number;
  /** Called for every head the front answers itself, for metrics. */
  onRefused: (status: number) => void;
}

/** The front's sockets; it runs in its own thread (front-thread.ts) so that splicing costs the event loop of uWS nothing. */
export class HttpFront {
  readonly #server: net.Server;
  readonly #upstreamPort: number;
  /** Connections whose first head is still being read. */
  readonly #reading = new Set<net.Socket>();
  /** The uWS side of every spliced connection. */
  readonly #upstreams = new Set<net.Socket>();
  #closed: Promise<void> | null = null;

  constructor(options: FrontOptions) {
    this.#upstreamPort = options.upstreamPort;
    this.#server = net.createServer({ allowHalfOpen: true, noDelay: true }, (client) => this.#accept(client, options.onRefused));
  }

  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen({ host, port, exclusive: true }, () => {
        this.#server.off('error', reject);
        resolve((this.#server.address() as net.AddressInfo).port);
      });
    });
  }

  /** Stops accepting connections; those already spliced go on. */
  stopAccepting(): void {
    this.#closed ??= new Promise((resolve) => this.#server.close(() => resolve()));
  }

  /**
   * Ends every connection once uWS answered what it was asked (call it after uWS drained its requests): a FIN
   * to uWS makes it close its side, and what it wrote before still reaches the client.
   */
  finish(): Promise<void> {
    this.stopAccepting();
    for (const client of this.#reading) client.destroy();
    for (const upstream of this.#upstreams) upstream.end();
    return this.#closed as Promise<void>;
  }

  #accept(client: net.Socket, onRefused: (status: number) => void): void {
    let received: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
      const blank = blankLine(received);
      if (blank < 0 || blank > MAX_HEAD_BYTES) {
        if (received.length > MAX_HEAD_BYTES) answer('HEADERS_TOO_LARGE', `the request head is longer than ${MAX_HEAD_BYTES} bytes`);
        return;
      }
      client.off('data', onData);
      this.#reading.delete(client);
      clearTimeout(deadline);
      const verdict = received[blank] === 0x0d
        ? judgeHead(received.toString('latin1', 0, blank))
        : { kind: 'refuse' as const, code: 'BAD_REQUEST' as const, message: 'the request head does not end with CRLF CRLF' };
      if (verdict.kind === 'refuse') {
        answer(verdict.code, verdict.message);
        return;
      }
      const first = verdict.kind === 'pass' ? received : Buffer.concat([Buffer.from(`${verdict.head}\r\n\r\n`, 'latin1'), received.subarray(blank + 2)]);
      this.#splice(client, first, verdict.kind === 'rewrite' && verdict.method === 'HEAD');
    };
    const answer = (code: ErrorCode, message: string): void => {
      client.off('data', onData);
      this.#reading.delete(client);
      clearTimeout(deadline);
      const error = new ApiError(code, message);
      onRefused(error.status);
      client.end(refusal(error));
      client.destroySoon();
    };
    // A deadline for the whole head, not an idle timeout: a byte every few seconds must not hold a connection.
    const deadline = setTimeout(() => client.destroy(), HEAD_TIMEOUT_MS);
    this.#reading.add(client);
    client.on('close', () => {
      clearTimeout(deadline);
      this.#reading.delete(client);
    });
    client.on('data', onData);
    client.on('error', () => client.destroy());
  }

  /** Relays the connection to uWS; endAfterHead: the answer is one HEAD response, which uWS never closes after. */
  #splice(client: net.Socket, first: Buffer, endAfterHead: boolean): void {
    client.pause();
    const upstream = net.connect({ host: '127.0.0.1', port: this.#upstreamPort, allowHalfOpen: true, noDelay: true });
    this.#upstreams.add(upstream);
    upstream.write(first);
    // A client's FIN after its request is not passed on: uWS closes a connection on FIN, before answering.
    client.pipe(upstream, { end: false });
    upstream.pipe(client);
    if (endAfterHead) {
      let seen = '';
      upstream.on('data', (chunk: Buffer) => {
        seen += chunk.toString('latin1');
        if (seen.includes('\r\n\r\n')) upstream.end();
      });
    }
    client.resume();
    client.on('close', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    upstream.on('close', () => {
      this.#upstreams.delete(upstream);
      client.destroySoon();
    });
  }
}
