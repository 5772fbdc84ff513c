// Plain request and response values: handlers are functions of these, testable without sockets.
import type { Scope } from '../storage/records.ts';

/** The values of the `x-jvmlens-consistency` request header, the default first (README "Reads that need not wait"). */
export const CONSISTENCIES = ['read-your-writes', 'local'] as const;

export interface Principal {
  userId: string;
  scopes: readonly Scope[];
  keyId: string;
}

export interface ApiRequest {
  /** Upper-case HTTP method. */
  method: string;
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  /** Lower-case names of the headers the service reads (see HEADERS in server.ts). */
  headers: Record<string, string>;
  body: Buffer;
  principal: Principal | null;
  requestId: string;
}

export interface ApiResponse {
  status: number;
  /** Serialised as JSON unless `raw` is given. */
  body?: unknown;
  /** The body as it is sent; one from responseBuffer (server.ts) only from a synchronous handler. */
  raw?: Buffer | string;
  contentType?: string;
  headers?: Record<string, string>;
}

export type Handler = (request: ApiRequest) => ApiResponse | Promise<ApiResponse>;

export interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path with `:name` segments, e.g. `/public/instance/:vmId/tags/:tag`. */
  pattern: string;
  /** Metric label; defaults to the pattern. */
  name?: string;
  /** Scope a key needs; undefined = no key needed. */
  scope?: Scope;
  /** Answer 503 while the service is not ready (decisions §3). */
  needsReady?: boolean;
  /** The handler waits for the cluster's log as it needs (agent batches): no read-your-writes barrier before it. */
  ownBarrier?: boolean;
  handler: Handler;
}
