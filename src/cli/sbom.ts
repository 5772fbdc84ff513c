// `jvmlens sbom`: a CycloneDX 1.6 SBOM with runtime VEX from a running service, to standard output or a file.
import { writeFileSync } from 'node:fs';
import { parseArgs, UsageError } from './args.ts';

export const SBOM_USAGE = `jvmlens sbom VMID [--output FILE]                           the SBOM of one VM (CycloneDX 1.6 JSON)
jvmlens sbom [--app-env X] [--tag K=V]... [--output FILE]    one SBOM of the VMs whose tags all match
      --url URL (env JVMLENS_URL; the API as serve prints it, default http://127.0.0.1:8090/public)
      --key KEY (env JVMLENS_API_KEY; a key with the read scope)
      exit status: 0 written, 2 bad usage, 3 the service refused (its message is printed), 4 no service`;

/** The service answered with an error: its status, code and message. */
export class ServiceError extends Error {}
/** Nothing answered at the URL. */
export class UnreachableError extends Error {}

/** The API's base URL without a trailing slash or `/public`: both ways `serve` may be quoted work. */
export function apiBase(url: string): string {
  return url.replace(/\/+$/, '').replace(/\/public$/, '');
}

export async function sbomCommand(args: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  const parsed = parseArgs(args, ['app-env', 'tag', 'output', 'url', 'key']);
  if (parsed.positional.length > 1) throw new UsageError(`sbom takes at most one VMID, got ${parsed.positional.length}\n\n${SBOM_USAGE}`);
  const [vmId] = parsed.positional;
  const query = new URLSearchParams();
  const appEnv = parsed.options.get('app-env');
  if (appEnv !== undefined) query.append('AppEnv', appEnv);
  for (const tag of parsed.repeated.get('tag') ?? []) {
    const eq = tag.indexOf('=');
    if (eq <= 0) throw new UsageError(`--tag takes KEY=VALUE, not '${tag}'`);
    query.append(`tags.${tag.slice(0, eq)}`, tag.slice(eq + 1));
  }
  if (vmId !== undefined && query.size > 0) throw new UsageError('give a VMID or a selection (--app-env, --tag), not both');
  const key = parsed.options.get('key') ?? env.JVMLENS_API_KEY;
  if (key === undefined || key === '') throw new UsageError('sbom needs an API key: --key KEY or JVMLENS_API_KEY');
  const base = apiBase(parsed.options.get('url') ?? env.JVMLENS_URL ?? 'http://127.0.0.1:8090');
  const path = vmId === undefined ? `/public/sbom${query.size > 0 ? `?${query}` : ''}` : `/public/instance/${encodeURIComponent(vmId)}/sbom`;
  let response: Response;
  try {
    response = await fetch(`${base}${path}`, { headers: { 'x-api-key': key, accept: 'application/vnd.cyclonedx+json' } });
  } catch (error) {
    throw new UnreachableError(`no jvmlens answered at ${base}: ${((error as Error).cause as Error | undefined)?.message ?? (error as Error).message}`);
  }
  const text = await response.text();
  if (response.status !== 200) {
    let message = text;
    try {
      const body = JSON.parse(text) as { error?: string; message?: string };
      message = `${body.error}: ${body.message}`;
    } catch {
      // not the API's error body: show what came
    }
    throw new ServiceError(`the service answered ${response.status} ${message}`);
  }
  const output = parsed.options.get('output');
  if (output === undefined) process.stdout.write(`${text}\n`);
  else writeFileSync(output, `${text}\n`);
}
