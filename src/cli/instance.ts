// `jvmlens instance VMID [--tags]`: one VM as the explorer shows it, from a running service.
import { UsageError } from './args.ts';
import { call, clientFrom, clientNotes, parseClientArgs } from './client.ts';
import { formatUsages } from './help.ts';
import type { Usage } from './help.ts';

export const INSTANCE_USAGE: readonly Usage[] = [
  { call: 'jvmlens instance VMID [--tags]', does: 'a VM as the explorer shows it (--tags: only its tags)', notes: clientNotes('0 written') },
];

export async function instanceCommand(args: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  const parsed = parseClientArgs(args, [], ['tags']);
  const [vmId, extra] = parsed.positional;
  if (vmId === undefined || extra !== undefined) throw new UsageError(`instance takes one VMID\n\n${formatUsages(INSTANCE_USAGE)}`);
  const path = `/public/instance/${encodeURIComponent(vmId)}${parsed.options.has('tags') ? '/tags' : ''}`;
  const text = await call(clientFrom(parsed, env), 'GET', path);
  process.stdout.write(`${JSON.stringify(JSON.parse(text), null, 2)}\n`);
}
