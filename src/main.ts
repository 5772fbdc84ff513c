#!/usr/bin/env node
// The `jvmlens` command: one binary, one sub-command per job.
import { ConfigError, parseConfig, SETTINGS, unknownSettingMessage } from './config.ts';
import { UsageError } from './cli/args.ts';
import { backupCommand, BACKUP_USAGE } from './cli/backup.ts';
import { clusterCommand, CLUSTER_USAGE } from './cli/cluster-status.ts';
import { cveCommand, CVE_USAGE } from './cli/cve.ts';
import { formatSettings, formatUsages } from './cli/help.ts';
import type { Usage } from './cli/help.ts';
import { keysCommand, KEYS_USAGE } from './cli/keys.ts';
import { ServiceError, UnreachableError } from './cli/client.ts';
import { instanceCommand, INSTANCE_USAGE } from './cli/instance.ts';
import { reportCommand, REPORT_USAGE } from './cli/report.ts';
import { sbomCommand, SBOM_USAGE } from './cli/sbom.ts';
import { seedCommand, SEED_USAGE } from './cli/seed.ts';
import { serveCommand } from './cli/serve.ts';
import { ListenError } from './http/server.ts';
import { nearest } from './nearest.ts';
import { StorageWriteError } from './storage/store.ts';
import { SERVICE_VERSION } from './version.ts';

const SERVE_USAGE: readonly Usage[] = [{ call: 'jvmlens serve [settings]', does: 'run the service' }];
const SETTINGS_HELP = `settings (flag, environment variable; the flag wins):
${formatSettings(SETTINGS)}`;

const USAGE = `usage: jvmlens COMMAND [options]   (jvmlens COMMAND --help: that command's options)

commands:
${formatUsages([...SERVE_USAGE, ...KEYS_USAGE, ...SEED_USAGE, ...CVE_USAGE, ...REPORT_USAGE, ...INSTANCE_USAGE, ...SBOM_USAGE, ...BACKUP_USAGE, ...CLUSTER_USAGE], { notes: false })}

${formatUsages([
  { call: 'keys, cve import:', does: 'on the data directory (--data-dir), or with --cluster URLS on every node of a cluster' },
  { call: 'report, cve events, instance, sbom:', does: 'ask a running service, at --url URL (env JVMLENS_URL) with --key KEY (env JVMLENS_API_KEY)' },
])}

${SETTINGS_HELP}
`;

/** `jvmlens help TOPIC`: one command's options, with an example. */
const HELP: Record<string, string> = {
  serve: `${formatUsages(SERVE_USAGE)}\n\n${SETTINGS_HELP}`,
  report: formatUsages(REPORT_USAGE),
  cve: formatUsages(CVE_USAGE),
  sbom: formatUsages(SBOM_USAGE),
  instance: formatUsages(INSTANCE_USAGE),
  keys: formatUsages(KEYS_USAGE),
  seed: formatUsages(SEED_USAGE),
  backup: formatUsages(BACKUP_USAGE),
  cluster: formatUsages(CLUSTER_USAGE),
};

/** The commands that ask a running service (report, cve events, instance, sbom): they take none of its settings. */
function isApiClient(rest: readonly string[]): boolean {
  return ['report', 'instance', 'sbom'].includes(rest[0]) || (rest[0] === 'cve' && rest[1] === 'events');
}

async function main(argv: readonly string[]): Promise<void> {
  const { config, rest, settingArgs } = parseConfig(argv, process.env);
  // Given back to an API client, a setting is refused as the unknown option it is there, with the nearest of its own.
  const [command, ...args] = isApiClient(rest) ? [...rest, ...settingArgs] : rest;
  // `jvmlens COMMAND --help` (or -h) anywhere after the command: what users of any CLI type first.
  if (command !== undefined && Object.hasOwn(HELP, command) && args.some((arg) => arg === '--help' || arg === '-h')) {
    process.stdout.write(`${HELP[command]}\n`);
    return;
  }
  if (command?.startsWith('--') && !['--help', '--version'].includes(command)) throw new UsageError(unknownSettingMessage(command));
  switch (command) {
    case 'serve':
      if (args.length > 0) throw new UsageError(unknownSettingMessage(args[0]));
      return serveCommand(config);
    case 'keys':
      return keysCommand(config, args);
    case 'seed':
      return seedCommand(config, args);
    case 'cve':
      return cveCommand(config, args, process.env);
    case 'report':
      process.exitCode = await reportCommand(args, process.env);
      return;
    case 'instance':
      return instanceCommand(args, process.env);
    case 'sbom':
      return sbomCommand(args, process.env);
    case 'backup':
      return backupCommand(config, args);
    case 'cluster':
      return clusterCommand(config, args);
    case 'help': {
      const topic = args[0] === undefined ? undefined : HELP[args[0]];
      if (args[0] !== undefined && topic === undefined) throw new UsageError(`no help on '${args[0]}'; topics: ${Object.keys(HELP).join(', ')}`);
      process.stdout.write(topic === undefined ? USAGE : `${topic}\n`);
      return;
    }
    case undefined:
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return;
    case 'version':
    case '--version':
      process.stdout.write(`jvmlens ${SERVICE_VERSION}\n`);
      return;
    default: {
      const suggestion = nearest(command, Object.keys(HELP));
      throw new UsageError(`unknown command '${command}'${suggestion === null ? '' : `; did you mean ${suggestion}?`}\n\n${USAGE}`);
    }
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError || error instanceof ConfigError) {
    process.stderr.write(`jvmlens: ${error.message}\n`);
    process.exit(2);
  }
  if (error instanceof ServiceError) {
    process.stderr.write(`jvmlens: ${error.message}\n`);
    process.exit(3);
  }
  if (error instanceof UnreachableError) {
    process.stderr.write(`jvmlens: ${error.message}\n`);
    process.exit(4);
  }
  if (error instanceof ListenError || error instanceof StorageWriteError) {
    process.stderr.write(`jvmlens: ${error.message}\n`);
    process.exit(1);
  }
  process.stderr.write(`jvmlens: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
