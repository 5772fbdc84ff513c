// The HTTP client of the commands that talk to a running service (report, cve events, instance, sbom).
import { CONSISTENCIES } from '../http/types.ts';
import type { ParsedArgs } from './args.ts';
import { parseArgs, UsageError } from './args.ts';

/** The service answered with an error: its status, code and message (exit status 3). */
export class ServiceError extends Error {}
/** Nothing answered at the URL (exit status 4). */
export class UnreachableError extends Error {}

/** The lines every client command's usage ends with: where the service is, and the exit statuses after the command's own (`own`). */
export function clientNotes(own: string): string[] {
  return [
    '--url URL (env JVMLENS_URL; the API as serve prints it, with or without /public; default http://127.0.0.1:8090)',
    '--key KEY (env JVMLENS_API_KEY)',
    '--consistency local (a cluster node answers its GETs with what it has applied, without waiting for the writes acknowledged through other nodes; default read-your-writes)',
    `exit status: ${own}, 2 bad usage, 3 the service refused (its message is printed), 4 no service`,
  ];
}

/** The options every client command takes. */
const CLIENT_OPTIONS = ['url', 'key', 'consistency'];

/** A client command's arguments: its own options and the client's, no setting (those are the service's: `--host` is not `--host-name`). */
export function parseClientArgs(args: readonly string[], known: readonly string[], flags: readonly string[] = []): ParsedArgs {
  return parseArgs(args, [...known, ...CLIENT_OPTIONS], flags, []);
}


export interface ApiClient {
  /** The API's base URL without a trailing slash or `/public`. */
  base: string;
  key: string;
  /** The reads' `x-jvmlens-consistency`: `read-your-writes` (the service's default) or `local`. */
  consistency: string;
}

/** The API's base URL without a trailing slash or `/public`: both ways `serve` may be quoted work. */
export function apiBase(url: string): string {
  return url.replace(/\/+$/, '').replace(/\/public$/, '');
}

export function clientFrom(parsed: ParsedArgs, env: NodeJS.ProcessEnv): ApiClient {
  const key = parsed.options.get('key') ?? env.JVMLENS_API_KEY;
  if (key === undefined || key === '') throw new UsageError('an API key is needed: --key KEY or JVMLENS_API_KEY');
  const consistency = parsed.options.get('consistency') ?? CONSISTENCIES[0];
  if (!(CONSISTENCIES as readonly string[]).includes(consistency)) throw new UsageError(`--consistency is ${CONSISTENCIES.join(' or ')}, not '${consistency}'`);
  return { base: apiBase(parsed.options.get('url') ?? env.JVMLENS_URL ?? 'http://127.0.0.1:8090'), key, consistency };
}

/** Sends a request and returns the response text; an error status becomes a ServiceError with the API's message. */
export async function call(client: ApiClient, method: string, path: string, body?: unknown, accept = 'application/json'): Promise<string> {
  let response: Response;
  try {
    response = await fetch(`${client.base}${path}`, {
      method,
      headers: { 'x-api-key': client.key, 'x-jvmlens-consistency': client.consistency, accept, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (error) {
    throw new UnreachableError(`no jvmlens answered at ${client.base}: ${((error as Error).cause as Error | undefined)?.message ?? (error as Error).message}`);
  }
  const text = await response.text();
  if (response.status >= 300) {
    let message = text;
    try {
      const error = JSON.parse(text) as { error?: string; message?: string };
      message = `${error.error}: ${error.message}`;
    } catch {
      // not the API's error body: show what came
    }
    throw new ServiceError(`the service answered ${response.status} ${message}`);
  }
  return text;
}

export async function callJson<T>(client: ApiClient, method: string, path: string, body?: unknown): Promise<T> {
  const text = await call(client, method, path, body);
  return (text === '' ? undefined : JSON.parse(text)) as T;
}
