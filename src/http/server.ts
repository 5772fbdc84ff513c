// uWebSockets.js plumbing: reads a request into an ApiRequest, runs its route, writes the ApiResponse.
import { STATUS_CODES } from 'node:http';
import { randomBytes } from 'node:crypto';
import uWS from 'uWebSockets.js';
import type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import { ApiError, errorBody } from '../errors.ts';
import { freePort } from '../free-port.ts';
import type { Logger } from '../log.ts';
import { storageWriteFailure } from '../storage/store.ts';
import type { Metrics } from './metrics.ts';
import { FrontThread } from './front-thread.ts';
import { Router } from './router.ts';
import type { ApiRequest, ApiResponse, Principal, Route } from './types.ts';

export interface ServerOptions {
  routes: readonly Route[];
  /** Largest accepted request body in bytes (decisions §10: 1 MiB on /public, 16 MiB on /agent). */
  bodyLimit: number;
  metrics: Metrics;
  logger: Logger;
  /** null when ready, else why not (decisions §3: 503 with Retry-After). */
  notReadyReason: () => string | null;
  /** Resolves a key to a principal, or throws 401 (decisions §2). */
  authenticate: (apiKey: string | undefined) => Principal;
  /** A write failed in storage (disk full, I/O error): health turns DOWN until a write succeeds again. */
  onStorageFailure: (problem: string) => void;
  /**
   * Whether an HttpFront (front.ts) owns the port, so that HTTP/1.0, Host-less and malformed requests are
   * answered; it relays every byte, which costs a third or more of the rate of small requests (README).
   */
  front: boolean;
  /** Cluster mode: what a data route awaits first, so it sees every write acknowledged before it (read your writes). */
  barrier?: () => Promise<void>;
  /** The service's other port and its routes: a 404 for a path it serves says so (the two ports are easily mixed up). */
  otherPort?: { name: string; routes: readonly Route[]; port: () => number };
}

const STATUS_LINES = new Map<number, string>();
function statusLine(status: number): string {
  let line = STATUS_LINES.get(status);
  if (line === undefined) {
    line = `${status} ${STATUS_CODES[status] ?? 'Unknown'}`;
    STATUS_LINES.set(status, line);
  }
  return line;
}

/** The request headers the service reads; the Node fallback of uWS (used under Deno) cannot list them all. */
const HEADERS = ['x-api-key', 'content-type', 'content-length', 'transfer-encoding', 'accept', 'x-jvmlens-consistency'] as const;
const READ_HEADERS = new Set<string>(HEADERS);
/** RFC 9112 §6.3: two Content-Length values are a request-smuggling vector; two keys leave the caller ambiguous. */
const SINGLE_HEADERS = new Set(['content-length', 'x-api-key', 'transfer-encoding', 'x-jvmlens-consistency']);
/** Longer paths are refused before routing (no id of the API comes near it) and never logged whole. */
const MAX_PATH = 2048;
/** How long a client should wait before retrying a write that storage could not take. */
const STORAGE_RETRY_AFTER_S = '10';
/** The native addon has getParts; its Node-compatible fallback lacks endWithoutBody. */
const NATIVE = typeof (uWS as { getParts?: unknown }).getParts === 'function';

let sharedBody = Buffer.allocUnsafeSlow(64 * 1024);

/**
 * A body buffer for a synchronous handler's response. The native uWS copies a body when it sends it, so
 * one buffer serves every response: a new one each time, at thousands of pages a second, set off garbage
 * collections of the whole heap (external memory pressure) that stalled every request. The Node
 * fallback (Deno) may keep the body after sending, so it gets a new buffer.
 */
export function responseBuffer(size: number): Buffer {
  if (!NATIVE) return Buffer.allocUnsafe(size);
  if (size > sharedBody.length) sharedBody = Buffer.allocUnsafeSlow(Math.max(size, 2 * sharedBody.length));
  return sharedBody.subarray(0, size);
}

/** Past this many bytes an oversized body is not drained: the connection is closed at once. */
const DRAIN_LIMIT = 64 * 1024 * 1024;

/** The listener could not bind: an operator's problem, reported without a stack. */
export class ListenError extends Error {}

const EMPTY = Buffer.alloc(0);
const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const requestIdPrefix = randomBytes(3).toString('hex');
let requestCounter = 0;

export class HttpServer {
  readonly #app: TemplatedApp;
  readonly #options: ServerOptions;
  readonly #router: Router;
  /** The other port's routes, when the service has one: where a path this port lacks is served. */
  readonly #other: { router: Router; name: string; port: () => number } | null;
  #listenSocket: us_listen_socket | null = null;
  #front: FrontThread | null = null;
  #inFlight = 0;
  #drained: (() => void) | null = null;
  /**
   * Set by close. uWS cannot close the connections a client keeps alive, and they stay this server's: a
   * cluster node that restarts its service in the same process (src/cli/serve.ts) would answer them from the
   * closed one for as long as the client keeps them. Their requests get 503 and the connection closed.
   */
  #closed = false;

  constructor(options: ServerOptions) {
    this.#options = options;
    this.#router = new Router(options.routes);
    this.#other = options.otherPort === undefined ? null : { ...options.otherPort, router: new Router(options.otherPort.routes) };
    this.#app = uWS.App().any('/*', (res, req) => this.#onRequest(res, req));
  }

  /** Listens on host:port: the native uWS directly or behind an HttpFront (front.ts); its Node fallback (Deno) answers HTTP/1.0 itself. */
  async listen(host: string, port: number): Promise<number> {
    if (!NATIVE || !this.#options.front) return this.#listenDirect(host, port);
    // uWS listens on a loopback port of its own; the front owns the public one.
    const upstreamPort = await this.#listenDirect('127.0.0.1', 0);
    const front = new FrontThread();
    this.#front = front;
    try {
      return await front.start(host, port, upstreamPort, {
        onRefused: (status) => this.#options.metrics.recordRequest('malformed', 'UNKNOWN', status, 0),
        onCrash: (error) => this.#options.logger.error('the HTTP front thread died; starting another', { stack: error.stack }),
      });
    } catch {
      this.#front = null;
      if (this.#listenSocket !== null) uWS.us_listen_socket_close(this.#listenSocket);
      this.#listenSocket = null;
      throw new ListenError(`cannot listen on ${host}:${port}: address in use or not available`);
    }
  }

  /**
   * uSockets sets SO_REUSEADDR only on a listener given its port. Given port 0, the connections it closed
   * first lingered in TIME_WAIT on the system's pick without it, and for a minute no listener could take that
   * port again: a cluster node rebuilding itself (src/cli/serve.ts) on the ports it had could not, and exited
   * (a chaos run, and most likely the lost node of an earlier one). Port 0 is therefore a port picked first,
   * picked again should another socket take it meanwhile.
   */
  async #listenDirect(host: string, port: number): Promise<number> {
    if (port !== 0) return this.#listenOn(host, port);
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#listenOn(host, await freePort(host));
      } catch (error) {
        if (!(error instanceof ListenError) || attempt === PICKED_PORT_ATTEMPTS) throw error;
      }
    }
  }

  #listenOn(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      // Exclusive: uSockets sets SO_REUSEPORT otherwise, and a second service would share the port silently.
      (this.#app.listen as unknown as ListenWithOptions).call(this.#app, host, port, LISTEN_EXCLUSIVE_PORT, (socket) => {
        if (socket === false) {
          reject(new ListenError(`cannot listen on ${host}:${port}: address in use or not available`));
          return;
        }
        this.#listenSocket = socket;
        resolve(uWS.us_socket_local_port(socket as unknown as uWS.us_socket));
      });
    });
  }

  /** Stops accepting connections, then waits for requests in flight. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#front?.stopAccepting();
    if (this.#listenSocket !== null) {
      uWS.us_listen_socket_close(this.#listenSocket);
      this.#listenSocket = null;
    }
    if (this.#inFlight > 0) await new Promise<void>((resolve) => (this.#drained = resolve));
    await this.#front?.finish();
    this.#front = null;
  }

  /** Where the service serves a path this port does not: its other port's, if that one does. */
  #elsewhere(method: string, path: string): string {
    const other = this.#other;
    if (other === null || other.router.match(method, path).kind === 'none') return '';
    return ` on this port; the ${other.name} port, ${other.port()}, serves it`;
  }

  #onRequest(res: HttpResponse, req: HttpRequest): void {
    const started = performance.now();
    const method = req.getMethod().toUpperCase();
    // The fallback's getUrl keeps the query string and its getQuery throws: split here.
    let path = req.getUrl();
    let query = '';
    const mark = path.indexOf('?');
    if (mark >= 0) {
      query = path.slice(mark + 1);
      path = path.slice(0, mark);
    } else if (NATIVE) {
      query = req.getQuery() ?? '';
    }
    const request = new UwsRequest(method, path, query, ++requestCounter);
    const exchange: Exchange = { res, aborted: false, watched: false, readingBody: false, settled: false, routeName: 'unmatched', request, started };
    this.#inFlight++;
    try {
      if (this.#closed) throw new ApiError('NOT_READY', 'service not ready: this server has closed; connect again', undefined, { 'Retry-After': '1' });
      if (path.length > MAX_PATH) throw new ApiError('URI_TOO_LONG', `the path is longer than ${MAX_PATH} characters`);
      const match = this.#router.match(method, path);
      if (match.kind === 'none') throw new ApiError('NOT_FOUND', `no route for ${method} ${path}${this.#elsewhere(method, path)}`);
      if (match.kind === 'wrongMethod') {
        throw new ApiError('METHOD_NOT_ALLOWED', `${method} is not allowed on ${path}; allowed: ${match.allowed.join(', ')}`, undefined, { Allow: match.allowed.join(', ') });
      }
      const route = match.route;
      exchange.routeName = route.name ?? route.pattern;
      request.params = match.params;
      // Headers cross into native code one by one: read them only for routes that use them.
      if (route.scope !== undefined || METHODS_WITH_BODY.has(method)) readHeaders(req, request.headers);
      if (route.needsReady) {
        const reason = this.#options.notReadyReason();
        if (reason !== null) throw new ApiError('NOT_READY', `service not ready: ${reason}`, undefined, { 'Retry-After': '1' });
      }
      if (route.scope !== undefined) {
        const principal = this.#options.authenticate(request.headers['x-api-key']);
        if (!principal.scopes.includes(route.scope)) {
          throw new ApiError('FORBIDDEN', `this key lacks the '${route.scope}' scope`);
        }
        request.principal = principal;
      }
      const local = readsLocally(request);
      if (METHODS_WITH_BODY.has(method) && hasBody(request.headers)) {
        const declared = Number(request.headers['content-length'] ?? 0);
        if (declared > DRAIN_LIMIT) throw this.#tooLarge();
        this.#readBody(exchange, route);
      } else {
        this.#run(exchange, route, local);
      }
    } catch (error) {
      // A body too large to drain is left unread, and a request with ambiguous framing may be read differently
      // by a proxy in front (RFC 9112 §6.3): neither connection is reused.
      this.#respond(exchange, this.#errorResponse(error, request), error instanceof AmbiguousRequestError || (error instanceof ApiError && error.status === 413));
    }
  }

  #tooLarge(): ApiError {
    return new ApiError('PAYLOAD_TOO_LARGE', `request body is larger than ${this.#options.bodyLimit} bytes`);
  }

  /** Needed before answering later than the request callback: uWS then reports a closed connection. */
  #watch(exchange: Exchange): void {
    if (exchange.watched) return;
    exchange.watched = true;
    exchange.res.onAborted(() => {
      exchange.aborted = true;
      // Its client left before the body ended: nothing will answer it, and close() must not wait for it.
      if (exchange.readingBody) this.#settle(exchange);
    });
  }

  #readBody(exchange: Exchange, route: Route): void {
    this.#watch(exchange);
    exchange.readingBody = true;
    const chunks: Buffer[] = [];
    let size = 0;
    let rejected = false;
    exchange.res.onData((chunk, isLast) => {
      if (rejected) return;
      size += chunk.byteLength;
      if (size > this.#options.bodyLimit) {
        // Clients only read a response after sending their body: drain a moderate excess so they see the 413.
        if (isLast || size > DRAIN_LIMIT) {
          rejected = true;
          exchange.readingBody = false;
          this.#respond(exchange, this.#errorResponse(this.#tooLarge(), exchange.request), !isLast);
        }
        chunks.length = 0;
        return;
      }
      // uWS reuses the chunk's memory after this callback: copy it.
      chunks.push(Buffer.from(new Uint8Array(chunk)));
      if (isLast) {
        exchange.readingBody = false;
        exchange.request.body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
        this.#run(exchange, route);
      }
    });
  }

  /** `local`: a read that asked for what this node has applied, without the cluster's read-your-writes wait. */
  #run(exchange: Exchange, route: Route, local = false): void {
    const barrier = this.#options.barrier;
    if (barrier === undefined || !route.needsReady || route.ownBarrier || local) {
      this.#handle(exchange, route);
      return;
    }
    this.#watch(exchange);
    barrier().then(
      () => this.#handle(exchange, route),
      (error: unknown) => this.#respond(exchange, this.#errorResponse(error, exchange.request)),
    );
  }

  #handle(exchange: Exchange, route: Route): void {
    let result: ApiResponse | Promise<ApiResponse>;
    try {
      result = route.handler(exchange.request);
    } catch (error) {
      this.#respond(exchange, this.#errorResponse(error, exchange.request));
      return;
    }
    if (result instanceof Promise) {
      this.#watch(exchange);
      result.then(
        (response) => this.#respond(exchange, response),
        (error: unknown) => this.#respond(exchange, this.#errorResponse(error, exchange.request)),
      );
    } else {
      this.#respond(exchange, result);
    }
  }

  #errorResponse(error: unknown, request: ApiRequest): ApiResponse {
    if (error instanceof ApiError) return { status: error.status, body: errorBody(error), headers: error.headers };
    const storage = storageWriteFailure(error);
    if (storage !== null) {
      this.#options.onStorageFailure(storage.message);
      return this.#errorResponse(new ApiError('INSUFFICIENT_STORAGE', `storage cannot be written: ${storage.message}; nothing was stored, retry later`, undefined, { 'Retry-After': STORAGE_RETRY_AFTER_S }), request);
    }
    this.#options.logger.error('unexpected error', { requestId: request.requestId, method: request.method, path: request.path.slice(0, 256), stack: (error as Error)?.stack ?? String(error) });
    return this.#errorResponse(new ApiError('INTERNAL', `internal error; request id ${request.requestId}`), request);
  }

  /** Counts the exchange out of those in flight, once: answered, or left by its client during its body. */
  #settle(exchange: Exchange): void {
    if (exchange.settled) return;
    exchange.settled = true;
    this.#inFlight--;
    if (this.#inFlight === 0 && this.#drained !== null) {
      this.#drained();
      this.#drained = null;
    }
  }

  #respond(exchange: Exchange, response: ApiResponse, close = false): void {
    const { res, request } = exchange;
    // After close, no connection is kept: the next request of its client reaches whoever listens then.
    close ||= this.#closed;
    this.#options.metrics.recordRequest(exchange.routeName, request.method, response.status, (performance.now() - exchange.started) / 1000);
    this.#settle(exchange);
    if (exchange.aborted) return;
    // uWS does not count endWithoutBody as an answer given inside the callback.
    if (request.method === 'HEAD') this.#watch(exchange);
    const payload = response.raw ?? (response.body === undefined ? '' : JSON.stringify(response.body));
    const contentType = response.contentType ?? (response.raw === undefined && response.body !== undefined ? 'application/json' : undefined);
    res.cork(() => {
      res.writeStatus(statusLine(response.status));
      if (contentType !== undefined) res.writeHeader('Content-Type', contentType);
      res.writeHeader('X-Content-Type-Options', 'nosniff');
      if (response.headers !== undefined) for (const [key, value] of Object.entries(response.headers)) res.writeHeader(key, value);
      if (request.method === 'HEAD' && NATIVE) res.endWithoutBody(Buffer.byteLength(payload), close);
      else res.end(payload, close);
    });
  }
}

/**
 * A request as routes see it, its query parsed and its id formatted on first use: most requests (health,
 * instance GETs) read neither. Getters on the prototype, not on an object literal: a literal's getters are new
 * closures per request, so V8 gives each request its own hidden class, which lives in old space and keeps the
 * request's whole graph alive through young collections (about 1.3 MB promoted per scavenge, 2-7 ms pauses).
 */
class UwsRequest implements ApiRequest {
  readonly method: string;
  readonly path: string;
  params: Record<string, string> = {};
  readonly headers: Record<string, string> = {};
  body: Buffer = EMPTY;
  principal: Principal | null = null;
  readonly #rawQuery: string;
  readonly #number: number;
  #query: URLSearchParams | undefined;

  constructor(method: string, path: string, rawQuery: string, number: number) {
    this.method = method;
    this.path = path;
    this.#rawQuery = rawQuery;
    this.#number = number;
  }

  get query(): URLSearchParams {
    return (this.#query ??= new URLSearchParams(this.#rawQuery));
  }

  get requestId(): string {
    return `${requestIdPrefix}-${this.#number.toString(36)}`;
  }
}

interface Exchange {
  res: HttpResponse;
  aborted: boolean;
  /** Whether onAborted is attached (only for answers given after the request callback). */
  watched: boolean;
  /** While its body arrives: a client that leaves then gets no answer, so its leaving settles the exchange. */
  readingBody: boolean;
  /** Whether it no longer counts among the requests in flight. */
  settled: boolean;
  routeName: string;
  request: ApiRequest;
  started: number;
}

/** Ports picked for a listener given port 0 before giving up: another socket can take one between pick and listen. */
const PICKED_PORT_ATTEMPTS = 5;
/** uSockets' LIBUS_LISTEN_EXCLUSIVE_PORT; the package's types lack the listen(host, port, options, cb) form it takes. */
const LISTEN_EXCLUSIVE_PORT = 1;
type ListenWithOptions = (host: string, port: number, options: number, cb: (socket: us_listen_socket | false) => void) => TemplatedApp;

/**
 * A request whose framing a proxy in front may read otherwise (RFC 9112 §6.3), or whose caller is ambiguous:
 * a 400 after which its connection is not reused.
 */
class AmbiguousRequestError extends ApiError {}

/** Copies the headers the service reads; a repeated Content-Length, Transfer-Encoding or x-api-key is a 400. */
function readHeaders(req: HttpRequest, headers: Record<string, string>): void {
  if (!NATIVE) {
    for (const name of HEADERS) {
      const value = req.getHeader(name);
      if (value !== '' && value !== undefined) headers[name] = value;
    }
    return;
  }
  let repeated: string | null = null;
  req.forEach((name, value) => {
    if (!READ_HEADERS.has(name)) return;
    if (headers[name] !== undefined && SINGLE_HEADERS.has(name)) repeated = name;
    headers[name] = value;
  });
  if (repeated !== null) throw new AmbiguousRequestError('BAD_REQUEST', `the request has more than one '${repeated}' header`);
  if (headers['content-length'] !== undefined && headers['transfer-encoding'] !== undefined) {
    throw new AmbiguousRequestError('BAD_REQUEST', "the request has both 'content-length' and 'transfer-encoding'");
  }
}

/**
 * Whether a GET asks for what its node has applied (`x-jvmlens-consistency: local`) rather than every write
 * acknowledged before it (`read-your-writes`, the default): a cluster node then answers without asking the
 * log (README "Reads that need not wait"). Other methods always wait; a single node never does.
 */
function readsLocally(request: ApiRequest): boolean {
  const value = request.headers['x-jvmlens-consistency'];
  if (value === undefined || value === 'read-your-writes') return false;
  if (value === 'local') return request.method === 'GET';
  throw new ApiError('BAD_REQUEST', `'x-jvmlens-consistency' is 'read-your-writes' (the default) or 'local' (a GET answered with what this node has applied, without waiting for writes acknowledged through other nodes), not '${value.slice(0, 64)}'`);
}

function hasBody(headers: Record<string, string>): boolean {
  const length = headers['content-length'];
  if (length !== undefined) return Number(length) > 0;
  return headers['transfer-encoding'] !== undefined;
}
