// `jvmlens serve`: runs the service until SIGTERM, SIGINT or SIGHUP, then shuts down gracefully (decisions §1).
import { ConfigError } from '../config.ts';
import type { Config } from '../config.ts';
import { PortPlaceholder } from '../http/port-placeholder.ts';
import { logger as plainLogger, loggerWith } from '../log.ts';
import type { Logger } from '../log.ts';
import { missingServeFlags } from '../node-flags.ts';
import { startService } from '../service.ts';
import type { RunningService } from '../service.ts';
import { toleratedStrayRead } from '../storage/closing-reads.ts';

/** How long a start-up that failed waits for the shutdown before exiting. */
const FAILED_START_STOP_MS = 10_000;

export async function serveCommand(config: Config): Promise<void> {
  if (config.codeGroup !== null && config.codeGroup >= config.codeGroups) throw new ConfigError(`--code-group ${config.codeGroup} is not one of the ${config.codeGroups} code groups (0 to ${config.codeGroups - 1})`);
  // A cluster's nodes log alike: each record names its node, for logs gathered from all of them.
  const logger = config.cluster.length > 0 ? loggerWith({ node: config.nodeId }) : plainLogger;
  let stopping = false;
  /** The service started last; null until the first start returns. */
  let service: RunningService | null = null;
  const shutDown = (running: RunningService): void => {
    running.shutdown().then(
      () => process.exit(0),
      (error: Error) => {
        logger.error('shutdown failed', { stack: error.stack });
        process.exit(1);
      },
    );
  };
  // A repeated signal must not kill the process mid-shutdown: the first one already drains it. One that comes
  // after the ports opened but before the start-up returned stops the service once it returns.
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down', { signal });
    if (service !== null) shutDown(service);
  };
  // Handled from the moment the ports open: a signal then, with Node's default, ended the process without a
  // graceful shutdown while the start-up still wrote (the first API key), and a supervisor saw a kill.
  const handleSignals = async (): Promise<void> => {
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
    // The terminal it was started from closing (npm start in an SSH session): Node's default ended the process
    // without draining requests or saying why.
    process.on('SIGHUP', () => stop('SIGHUP'));
  };
  service = await startService(config, logger, { beforeListen: handleSignals });
  const shown = config.host === '0.0.0.0' ? '127.0.0.1' : config.host;
  const lines = [
    `jvmlens: gateway http://${shown}:${service.gatewayPort} (health: /opthub-health, agents: /agent/v1/events, /metrics)`,
    `jvmlens: api http://${shown}:${service.apiPort}/public`,
  ];
  if (service.createdAdminKey !== null) {
    lines.push(`jvmlens: created the first API key (user admin, every scope); it is shown only now: ${service.createdAdminKey}`);
    logger.info('created the first admin API key and printed it once on stdout');
  } else if (config.apiKey === null) {
    lines.push(config.cluster.length > 0
      ? 'jvmlens: API keys: `jvmlens keys create --cluster URLS --user ID --scopes read,write,ingest` (or start with --api-key)'
      : 'jvmlens: API keys: `jvmlens keys create --user ID --scopes read,write,ingest` (or start with --api-key)');
  }
  process.stdout.write(lines.join('\n') + '\n');
  const missing = missingServeFlags();
  if (missing.length > 0) logger.warn('Node was started without the flags jvmlens serve runs best with: ingestion costs more CPU (npm start passes them; README "Performance: the young generation")', { add: missing.join(' ') });
  // Signalled while it started: its lines (a first API key among them) are shown, then it stops.
  if (stopping) {
    shutDown(service);
    return;
  }
  // A start-up that cannot go on (a cluster node id in use, say): say why and stop. Shut down first:
  // exiting while the report threads still load their native modules aborts the process instead.
  const cannotStart = (failed: { shutdown(): Promise<void> } | null, error: Error): void => {
    process.stderr.write(`jvmlens: cannot start: ${error.message}\n`);
    const bounded = new Promise((resolve) => setTimeout(resolve, FAILED_START_STOP_MS));
    void Promise.race([failed?.shutdown().catch(() => undefined), bounded]).then(() => process.exit(1));
  };
  const watch = (running: RunningService): void => {
    // Shut down to be started again, or stopped by a signal: a start-up either cuts short is not a failure to start.
    let replaced = false;
    running.ready.then(
      () => {
        process.stdout.write('jvmlens: ready\n');
        logger.info('ready', { gatewayPort: running.gatewayPort, apiPort: running.apiPort, stepsDoneAtMs: running.readiness.timings });
      },
      (error: Error) => {
        if (!replaced && !stopping) cannotStart(running, error);
      },
    );
    // A cluster node that read another history of the log than the one taken as right starts again, on the
    // same ports, from a copy of a node that read that one (restore.ts); DOWN meanwhile, as it was, its ports
    // held by a placeholder. Also while it still replays the log at its start.
    void running.rebuild.then(async () => {
      if (stopping) return;
      replaced = true;
      const why = 'restarting to take a copy of another node\'s data: this node read another history of the cluster log';
      logger.warn(why);
      const stopBridging = bridgeStrayReads(logger);
      await running.shutdown(why);
      // The bridge stays: the signal's own shutdown of this service ends the process.
      if (stopping) return;
      const ports = { gatewayPort: running.gatewayPort, apiPort: running.apiPort };
      const placeholder = await PortPlaceholder.hold(config.host, [ports.gatewayPort, ports.apiPort], why).catch((error: Error) => {
        logger.warn('could not hold this node\'s ports while it rebuilds itself; they are closed meanwhile', { reason: error.message });
        return null;
      });
      try {
        service = await startService({ ...config, ...ports }, logger, { beforeListen: async () => placeholder?.release() });
      } catch (error) {
        await placeholder?.release();
        cannotStart(null, error as Error);
        return;
      } finally {
        stopBridging();
      }
      // A signal while it started again shut down the service before it.
      if (stopping) shutDown(service);
      else watch(service);
    });
  };
  watch(service);
}

/**
 * Between a service's shutdown and the start of the next in this process, no service listens for unhandled
 * rejections: a read the old one left behind, refused by its closed store, would end the process. Such reads are
 * logged; any other rejection ends the process as Node's default would, unless a service listens and decides.
 * Returns the call that stops bridging.
 */
export function bridgeStrayReads(logger: Logger): () => void {
  const bridge = (reason: unknown): void => {
    if (process.listenerCount('unhandledRejection') > 1) return;
    if (!toleratedStrayRead(reason, logger)) throw reason;
  };
  process.on('unhandledRejection', bridge);
  return () => process.off('unhandledRejection', bridge);
}
