// The one error type of the service and the registry of its codes (decisions §10): every code is
// declared here once with its HTTP status; a throw site names the code, and the status follows.
// README "Errors" lists the same codes (test/http/error-registry.test.ts keeps them together).

export const ERROR_CODES = {
  MALFORMED_JSON: { status: 400, description: 'the body is not valid JSON' },
  MALFORMED_BODY: { status: 400, description: 'the body is not valid UTF-8, NDJSON or MessagePack' },
  BAD_REQUEST: { status: 400, description: 'the request is malformed: a body of the wrong shape, a repeated header, an x-jvmlens-consistency it does not know' },
  INVALID_EVENTS: { status: 400, description: 'agent events that break the protocol or its limits; nothing was stored' },
  UNKNOWN_VM: { status: 400, description: 'agent events for a VM the batch did not start' },
  BAD_TAGS: { status: 400, description: 'a tag key or value outside the allowed characters or lengths' },
  BAD_FILTER: { status: 400, description: 'a filter entry that does not parse or names no field' },
  BAD_GROUP_BY: { status: 400, description: 'a groupBy entry the report family does not take' },
  BAD_SORT_BY: { status: 400, description: 'a sortBy entry the report family does not take' },
  BAD_TIME: { status: 400, description: 'a time that does not parse' },
  UNKNOWN_FIELD: { status: 400, description: 'a body field the request does not take' },
  BAD_PARAMETER: { status: 400, description: 'a query parameter of the wrong form' },
  BAD_AFTER_TOKEN: { status: 400, description: 'an afterToken this query did not hand out' },
  UNAUTHORIZED: { status: 401, description: 'no x-api-key, or one that is unknown or revoked' },
  FORBIDDEN: { status: 403, description: 'the key lacks the scope the route needs' },
  NOT_FOUND: { status: 404, description: 'no route at this path' },
  VM_NOT_FOUND: { status: 404, description: 'no VM with this vmId' },
  TAG_NOT_FOUND: { status: 404, description: 'the VM has no tag with this key' },
  REPORT_NOT_FOUND: { status: 404, description: 'no report of this family with this id' },
  PAGE_NOT_FOUND: { status: 404, description: 'the report has no such page' },
  METHOD_NOT_ALLOWED: { status: 405, description: 'the path takes other methods (see Allow)' },
  PAYLOAD_TOO_LARGE: { status: 413, description: 'the body is over 1 MiB on /public or 16 MiB on /agent' },
  URI_TOO_LONG: { status: 414, description: 'the path is over 2,048 characters' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, description: 'a content type the route does not read' },
  QUEUE_FULL: { status: 429, description: '100 report jobs are waiting (see Retry-After)' },
  HEADERS_TOO_LARGE: { status: 431, description: 'the request head is over 16 KiB or has over 48 header fields' },
  INTERNAL: { status: 500, description: 'a bug: the request id is in the log with its stack' },
  NOT_IMPLEMENTED: { status: 501, description: 'a method or transfer coding the service does not know' },
  NOT_READY: { status: 503, description: 'starting, shutting down, or storage cannot be written (see Retry-After)' },
  CLUSTER_UNAVAILABLE: { status: 503, description: 'cluster mode: JetStream did not take or answer within 10 s; nothing was acknowledged (see Retry-After)' },
  HTTP_VERSION_NOT_SUPPORTED: { status: 505, description: 'a request line of an HTTP version other than 1.1 or 1.0' },
  INSUFFICIENT_STORAGE: { status: 507, description: 'storage could not take the write; nothing was stored (see Retry-After)' },
} as const satisfies Record<string, { status: number; description: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface ErrorDetail {
  [key: string]: unknown;
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly details: ErrorDetail[] | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, message: string, details?: ErrorDetail[], headers?: Record<string, string>) {
    super(message);
    this.name = 'ApiError';
    this.status = ERROR_CODES[code].status;
    this.code = code;
    this.details = details;
    this.headers = headers;
  }
}

/** The JSON body of decisions §10. */
export function errorBody(error: ApiError): { error: string; message: string; details?: ErrorDetail[] } {
  return error.details === undefined
    ? { error: error.code, message: error.message }
    : { error: error.code, message: error.message, details: error.details };
}
