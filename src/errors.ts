// The one error type of the service: a stable code, an HTTP status and details (decisions §10).

export interface ErrorDetail {
  [key: string]: unknown;
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: ErrorDetail[] | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(status: number, code: string, message: string, details?: ErrorDetail[], headers?: Record<string, string>) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.details = details;
    this.headers = headers;
  }
}

export function badRequest(code: string, message: string, details?: ErrorDetail[]): ApiError {
  return new ApiError(400, code, message, details);
}

export function notFound(message: string): ApiError {
  return new ApiError(404, 'NOT_FOUND', message);
}

/** The JSON body of decisions §10. */
export function errorBody(error: ApiError): { error: string; message: string; details?: ErrorDetail[] } {
  return error.details === undefined
    ? { error: error.code, message: error.message }
    : { error: error.code, message: error.message, details: error.details };
}
