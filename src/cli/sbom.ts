// `jvmlens sbom`: a CycloneDX 1.6 SBOM with runtime VEX from a running service, to standard output or a file.
import { UsageError } from './args.ts';
import { call, clientFrom, clientNotes, parseClientArgs } from './client.ts';
import { formatUsages } from './help.ts';
import { openOutput } from './output.ts';
import type { Usage } from './help.ts';

export const SBOM_USAGE: readonly Usage[] = [
  { call: 'jvmlens sbom VMID [--output FILE]', does: 'the SBOM of one VM (CycloneDX 1.6 JSON)' },
  {
    call: 'jvmlens sbom [--app-env X] [--tag K=V]... [--output FILE]',
    does: 'one SBOM of the VMs whose tags all match',
    notes: clientNotes('0 written'),
  },
];

export async function sbomCommand(args: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  const parsed = parseClientArgs(args, ['app-env', 'tag', 'output']);
  if (parsed.positional.length > 1) throw new UsageError(`sbom takes at most one VMID, got ${parsed.positional.length}\n\n${formatUsages(SBOM_USAGE)}`);
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
  const client = clientFrom(parsed, env);
  const output = openOutput(parsed);
  const path = vmId === undefined ? `/public/sbom${query.size > 0 ? `?${query}` : ''}` : `/public/instance/${encodeURIComponent(vmId)}/sbom`;
  output.write(`${await call(client, 'GET', path, undefined, 'application/vnd.cyclonedx+json')}\n`);
  output.close();
}
