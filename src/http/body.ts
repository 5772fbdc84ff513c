// JSON request bodies of the public API: content type, size and syntax checked at the edge.
import { ApiError } from '../errors.ts';
import { decodeUtf8, parseJsonBody } from '../ingest/events.ts';
import type { ApiRequest } from './types.ts';

export function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === undefined || contentType === '') return true;
  const type = contentType.split(';')[0].trim().toLowerCase();
  return type === 'application/json' || type.endsWith('+json');
}

/** The parsed JSON body; `undefined` when the request has none. */
export function readJson(request: ApiRequest): unknown {
  if (request.body.length === 0) return undefined;
  if (!isJsonContentType(request.headers['content-type'])) {
    throw new ApiError('UNSUPPORTED_MEDIA_TYPE', `content type '${request.headers['content-type']}' is not accepted; send application/json`);
  }
  return parseJsonBody(decodeUtf8(request.body));
}
