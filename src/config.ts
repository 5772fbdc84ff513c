// Service settings: every setting is a flag and an environment variable, the flag wins (decisions §1).
import { readFileSync } from 'node:fs';
import { availableParallelism, hostname } from 'node:os';
import { nearest } from './nearest.ts';

export interface Config {
  host: string;
  gatewayPort: number;
  apiPort: number;
  dataDir: string;
  workers: number;
  apiKey: string | null;
  offlineAfterMs: number;
  reportTimeoutMs: number;
  pageBytes: number;
  reportTtlDays: number;
  /** After SIGTERM/SIGINT, health answers DOWN this long before the listeners close, so balancers notice. */
  shutdownGraceMs: number;
  /** Test-only: hold health DOWN this long after start, so a probe can observe the DOWN phase. */
  readyDelayMs: number;
  /** Test-only: names of report faults to inject (see src/engine); empty in production. */
  testFaults: string[];
  /** Test-only: VM rows or code keys per report partition (0 = the engine's own sizes), to test merging. */
  testPartitionSize: number;
  /** Test-only: commands per window the cluster's nodes compare their reading of the log by (0 = the default, src/cluster/log-checks.ts). */
  testLogCheckEvery: number;
  /** NATS server URLs of a cluster's JetStream, credentials in them; empty = single node, everything in the local data directory. */
  cluster: string[];
  /** A CA certificate file the NATS servers' TLS certificates are checked against ('' = the system's CAs). */
  clusterCa: string;
  /** This node's name in the cluster: unique per node, stable across restarts. */
  nodeId: string;
  /** Whether the API port, like the gateway port, answers HTTP/1.0 and malformed requests (src/http/front.ts). */
  apiFront: boolean;
  /** Cluster mode: how long commands every node has applied stay in the log (src/cluster/compaction.ts). */
  logRetentionMs: number;
  /** Cluster mode: how many shards the fleet's VMs fall into, fixed when the cluster is created (src/cluster/shards.ts). */
  vmShards: number;
  /** Cluster mode: how many code groups the fleet's classes fall into, fixed when the cluster is created (src/storage/code-groups.ts). */
  codeGroups: number;
  /** Cluster mode: the code group whose classes this node stores (0 to codeGroups - 1); null: the one its data directory records, else the one with the fewest live nodes at its first start (src/cluster/code-group-choice.ts). */
  codeGroup: number | null;
  /** Cluster mode: a grouped report fans out over the live nodes from this many VMs on (src/cluster/fan-out.ts). */
  reportFanOutVms: number;
  /** Cluster mode: this node's store, which followed a log that is gone, adopts the servers' new, empty one (src/cluster/log-identity.ts). */
  adoptClusterLog: boolean;
}

interface Setting {
  key: keyof Config;
  flag: string;
  env: string;
  parse: (raw: string) => Config[keyof Config];
  describe: string;
}

function integer(min: number, max = Number.MAX_SAFE_INTEGER): (raw: string) => number {
  return (raw) => {
    if (!/^\d+$/.test(raw)) throw new Error(`expected a whole number, got '${raw}'`);
    const value = Number(raw);
    if (value < min) throw new Error(`expected at least ${min}, got ${value}`);
    if (value > max) throw new Error(`expected at most ${max}, got ${value}`);
    return value;
  };
}

const text = (raw: string): string => raw;

function yesNo(raw: string): boolean {
  if (/^(true|on|yes|1)$/i.test(raw)) return true;
  if (/^(false|off|no|0)$/i.test(raw)) return false;
  throw new Error(`expected true or false, got '${raw}'`);
}

/** A file the process will read later (a CA certificate): refused at start when it cannot be read. */
function readableFile(path: string): string {
  readFileSync(path);
  return path;
}

/** A key read from a file keeps it out of the process list, which every local user can read. */
function keyFromFile(path: string): string {
  const key = readFileSync(path, 'utf8').trim();
  if (key === '') throw new Error(`the key file ${path} is empty`);
  return key;
}

function natsUrls(raw: string): string[] {
  const urls = raw.split(',').map((url) => url.trim()).filter(Boolean);
  // The URL is not repeated in the message: it may hold a password.
  for (const [index, url] of urls.entries()) if (!/^(nats|tls):\/\/[^\s/]+$/.test(url)) throw new Error(`expected NATS URLs like nats://host:4222 or nats://user:password@host:4222, and URL ${index + 1} is not one`);
  if (urls.length === 0) throw new Error('expected at least one NATS URL');
  return urls;
}

/** A code group's number, or `auto` (null): chosen by the cluster at the node's first start. */
function codeGroupChoice(raw: string): number | null {
  return raw === 'auto' ? null : integer(0, 63)(raw);
}

/** Node ids appear in NATS subjects and KV keys: letters, digits, '-' and '_' only. */
function nodeName(raw: string): string {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(raw)) throw new Error(`a node id is 1 to 64 letters, digits, '-' or '_', got '${raw}'`);
  return raw;
}

export const SETTINGS: readonly Setting[] = [
  { key: 'host', flag: '--host', env: 'JVMLENS_HOST', parse: text, describe: 'address both listeners bind (0.0.0.0 to expose)' },
  { key: 'gatewayPort', flag: '--gateway-port', env: 'JVMLENS_GATEWAY_PORT', parse: integer(0), describe: 'gateway port: health, agent ingestion, metrics (0 = any free port)' },
  { key: 'apiPort', flag: '--api-port', env: 'JVMLENS_API_PORT', parse: integer(0), describe: 'public API port (0 = any free port)' },
  { key: 'dataDir', flag: '--data-dir', env: 'JVMLENS_DATA_DIR', parse: text, describe: 'data directory (LMDB and report pages)' },
  { key: 'workers', flag: '--workers', env: 'JVMLENS_WORKERS', parse: integer(1), describe: 'report worker threads' },
  { key: 'apiKey', flag: '--api-key', env: 'JVMLENS_API_KEY', parse: text, describe: 'a static key accepted with every scope (user id admin); prefer the file or the variable' },
  { key: 'apiKey', flag: '--api-key-file', env: 'JVMLENS_API_KEY_FILE', parse: keyFromFile, describe: 'a file holding that key (not shown in the process list)' },
  { key: 'offlineAfterMs', flag: '--offline-after-ms', env: 'JVMLENS_OFFLINE_AFTER_MS', parse: integer(1), describe: 'silence after which a VM is OFFLINE' },
  { key: 'reportTimeoutMs', flag: '--report-timeout-ms', env: 'JVMLENS_REPORT_TIMEOUT_MS', parse: integer(1), describe: 'report generation time limit (TIMED_OUT beyond)' },
  { key: 'pageBytes', flag: '--page-bytes', env: 'JVMLENS_PAGE_BYTES', parse: integer(1024), describe: 'largest JSON body of one report page' },
  { key: 'reportTtlDays', flag: '--report-ttl-days', env: 'JVMLENS_REPORT_TTL_DAYS', parse: integer(1), describe: 'days a finished report is kept' },
  { key: 'shutdownGraceMs', flag: '--shutdown-grace-ms', env: 'JVMLENS_SHUTDOWN_GRACE_MS', parse: integer(0), describe: 'time health answers DOWN before the listeners close on shutdown' },
  { key: 'readyDelayMs', flag: '--test-ready-delay-ms', env: 'JVMLENS_TEST_READY_DELAY_MS', parse: integer(0), describe: 'TEST ONLY: keep health DOWN this long after start' },
  { key: 'testPartitionSize', flag: '--test-partition-size', env: 'JVMLENS_TEST_PARTITION_SIZE', parse: integer(0), describe: 'TEST ONLY: VM rows or code keys per report partition' },
  { key: 'testLogCheckEvery', flag: '--test-log-check-every', env: 'JVMLENS_TEST_LOG_CHECK_EVERY', parse: integer(0), describe: 'TEST ONLY: cluster log commands per window the nodes compare' },
  { key: 'cluster', flag: '--cluster', env: 'JVMLENS_CLUSTER', parse: natsUrls, describe: 'comma-separated NATS URLs: run as a cluster node on JetStream (README "Running a cluster"); credentials as nats://user:password@host:4222 or nats://token@host:4222, best in the variable (not shown in the process list)' },
  { key: 'clusterCa', flag: '--cluster-ca', env: 'JVMLENS_CLUSTER_CA', parse: readableFile, describe: 'cluster: a CA certificate (PEM) the NATS servers\' TLS certificates are signed by, when not by a CA the system trusts; TLS is then required' },
  { key: 'nodeId', flag: '--node-id', env: 'JVMLENS_NODE_ID', parse: nodeName, describe: 'this node\'s unique, stable name in the cluster (default: the host name)' },
  { key: 'logRetentionMs', flag: '--log-retention-ms', env: 'JVMLENS_LOG_RETENTION_MS', parse: integer(1), describe: 'cluster: how long the log keeps commands every node has applied (a node restored from a copy of another\'s data directory must start within it)' },
  { key: 'vmShards', flag: '--vm-shards', env: 'JVMLENS_VM_SHARDS', parse: integer(1, 4096), describe: 'cluster: how many shards the VMs fall into; fixed when the cluster is created, and a node started with another count refuses to start' },
  { key: 'codeGroups', flag: '--code-groups', env: 'JVMLENS_CODE_GROUPS', parse: integer(1, 64), describe: 'cluster: how many groups the fleet\'s classes fall into, each node storing one group\'s code (1: every node stores all code); fixed when the cluster is created' },
  { key: 'codeGroup', flag: '--code-group', env: 'JVMLENS_CODE_GROUP', parse: codeGroupChoice, describe: 'cluster: the code group this node stores, 0 to --code-groups - 1, or auto: the one its data directory records, else at its first start the one with the fewest live nodes (give each group two nodes or more: a group with no live node leaves code reports PARTIALLY_FAILED)' },
  { key: 'reportFanOutVms', flag: '--report-fan-out-vms', env: 'JVMLENS_REPORT_FAN_OUT_VMS', parse: integer(0), describe: 'cluster: a component report or a grouped JVM report fans out over the live nodes when the fleet has at least this many VMs (0: always); below, its coordinator generates it alone' },
  { key: 'adoptClusterLog', flag: '--adopt-cluster-log', env: 'JVMLENS_ADOPT_CLUSTER_LOG', parse: yesNo, describe: 'cluster: true once, after the NATS servers lost their data, or to take a single node\'s data directory into a new cluster: this node keeps its data and goes on with their new, empty log (the other nodes then copy its data); without it a node refuses a log other than the one its data came from, and a single node\'s data' },
  { key: 'apiFront', flag: '--api-front', env: 'JVMLENS_API_FRONT', parse: yesNo, describe: 'true: the API port answers HTTP/1.0 (nginx\'s default proxy_pass) and malformed requests too, as the gateway port does; costs about a third of its rate of small requests' },
  { key: 'testFaults', flag: '--test-faults', env: 'JVMLENS_TEST_FAULTS', parse: (raw) => raw.split(',').filter(Boolean), describe: 'TEST ONLY: comma-separated report and cluster faults to inject' },
];

export function defaultConfig(): Config {
  return {
    host: '127.0.0.1',
    gatewayPort: 8080,
    apiPort: 8090,
    dataDir: './data',
    workers: Math.max(1, availableParallelism() - 1),
    apiKey: null,
    offlineAfterMs: 300_000,
    reportTimeoutMs: 600_000,
    pageBytes: 5_500_000,
    reportTtlDays: 30,
    shutdownGraceMs: 1000,
    readyDelayMs: 0,
    testFaults: [],
    testPartitionSize: 0,
    testLogCheckEvery: 0,
    cluster: [],
    clusterCa: '',
    nodeId: hostname().replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 64) || 'node',
    apiFront: false,
    logRetentionMs: 3_600_000,
    vmShards: 64,
    codeGroups: 1,
    codeGroup: null,
    reportFanOutVms: 250_000,
    adoptClusterLog: false,
  };
}

export class ConfigError extends Error {}

/**
 * Reads settings from the environment, then from `--flag value` / `--flag=value` arguments.
 * Returns the arguments that are not settings, for the command to interpret, and those that are (`settingArgs`),
 * for a command that takes none to refuse.
 */
export function parseConfig(args: readonly string[], env: Readonly<Record<string, string | undefined>>): { config: Config; rest: string[]; settingArgs: string[] } {
  const config = defaultConfig();
  const values = config as unknown as Record<string, unknown>;
  const apply = (setting: Setting, raw: string, source: string): void => {
    try {
      values[setting.key] = setting.parse(raw);
    } catch (error) {
      throw new ConfigError(`${source}: ${(error as Error).message}`);
    }
  };
  for (const setting of SETTINGS) {
    const raw = env[setting.env];
    if (raw !== undefined && raw !== '') apply(setting, raw, setting.env);
  }
  const rest: string[] = [];
  const settingArgs: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const setting = SETTINGS.find((s) => s.flag === name);
    if (setting === undefined) {
      rest.push(arg);
      continue;
    }
    let raw: string | undefined = eq > 0 ? arg.slice(eq + 1) : args[++i];
    if (raw === undefined) throw new ConfigError(`${name} needs a value`);
    settingArgs.push(...(eq > 0 ? [arg] : [name, raw]));
    apply(setting, raw, name);
  }
  return { config, rest, settingArgs };
}

/** An argument no setting knows, with the nearest setting's flag. */
export function unknownSettingMessage(arg: string): string {
  const name = arg.split('=')[0];
  if (!name.startsWith('--')) return `unexpected argument '${arg}'`;
  const suggestion = nearest(name, SETTINGS.map((setting) => setting.flag));
  return `unknown option ${name}${suggestion === null ? '' : `; did you mean ${suggestion}?`} (jvmlens help lists them)`;
}

