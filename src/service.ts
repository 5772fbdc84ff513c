// Wires the service together: storage, worker pool, the two listeners, readiness and graceful shutdown.
import { ConfigError } from './config.ts';
import type { Config } from './config.ts';
import { agentRoutes } from './http/routes/agent.ts';
import { consoleRoutes } from './http/routes/console.ts';
import { docsRoutes } from './http/routes/docs.ts';
import { identityRoutes } from './http/routes/identity.ts';
import { SERVICE_VERSION } from './version.ts';
import { sbomRoutes } from './http/routes/sbom.ts';
import { explorerRoutes } from './http/routes/explorer.ts';
import { healthRoutes } from './http/routes/health.ts';
import { metricsRoutes } from './http/routes/metrics.ts';
import { reportRoutes } from './http/routes/reports.ts';
import { ReportJobs } from './engine/reports/jobs.ts';
import { CveIndex } from './engine/cve/events-index.ts';
import { Vulnerabilities } from './engine/cve/vulnerabilities.ts';
import { cveRoutes } from './http/routes/cve.ts';
import { Authenticator } from './http/auth.ts';
import type { ServiceContext } from './http/service-context.ts';
import { Metrics } from './http/metrics.ts';
import { Readiness } from './http/readiness.ts';
import { HttpServer } from './http/server.ts';
import type { Route } from './http/types.ts';
import { WorkerPool } from './engine/reports/pool.ts';
import type { Logger } from './log.ts';
import { toleratedStrayRead } from './storage/closing-reads.ts';
import { Dictionary } from './storage/dictionary.ts';
import { Ingestor } from './storage/ingest.ts';
import { createKey, listKeys } from './storage/keys.ts';
import { Liveness } from './storage/liveness.ts';
import { SCOPES } from './storage/records.ts';
import { openStore, storageWriteFailure, StorageWriteError, writeSeq } from './storage/store.ts';
import { FleetColumns } from './storage/fleet-columns.ts';
import { InstanceCache } from './http/routes/instance-body.ts';
import type { Store } from './storage/store.ts';
import { localWrites } from './writes.ts';
import { keptCount } from './cluster/awaiting-start.ts';
import { ClusterNode, CLUSTER_STEP } from './cluster/node.ts';
import { clusterNodeData } from './cluster/log-identity.ts';
import { restoreIfNeeded } from './cluster/restore.ts';
import { within } from './cluster/waits.ts';
import { applyInbox, applyRequest, BackupsUnderWay, watchInbox } from './storage/inbox.ts';
import type { InboxRequest } from './storage/inbox.ts';
import { takeWriterLock } from './storage/writer-lock.ts';

const MIB = 1024 * 1024;
/** How often the service checks that storage is writable and whether another process wrote to it. */
const WATCH_MS = 2_000;
/** How long a start waits for a command that writes the data directory (storage/writer-lock.ts). */
const COMMANDS_WAIT_MS = 60_000;
const EXPIRY_MS = 3_600_000;
/** The longest a shutdown waits for what still reads the store (a CVE index rebuild stops at its next chunk) before closing it. */
const READERS_WAIT_MS = 5_000;

export interface RunningService {
  gatewayPort: number;
  apiPort: number;
  /** Printed once when the service created the first admin key itself (decisions §2). */
  createdAdminKey: string | null;
  /** Resolves when every start-up step is done and health is UP. */
  ready: Promise<void>;
  readiness: Readiness;
  /** Resolves when this cluster node is to be started again from a copy of another node's data (never for a single node). */
  rebuild: Promise<void>;
  /** Drains and stops; health says `why` meanwhile (default: shutting down). */
  shutdown(why?: string): Promise<void>;
}

async function ensureAdminKey(store: Store, config: Config, clock: () => number): Promise<string | null> {
  if (config.apiKey !== null || listKeys(store).length > 0) return null;
  const { key } = await createKey(store, 'admin', SCOPES, clock());
  return key;
}

export interface StartOptions {
  clock?: () => number;
  /** Called just before the service listens on its ports (a rebuilding node's placeholder lets them go). */
  beforeListen?: () => Promise<void>;
}

export async function startService(config: Config, logger: Logger, options: StartOptions = {}): Promise<RunningService> {
  const clock = options.clock ?? Date.now;
  const clustered = config.cluster.length > 0;
  const readiness = new Readiness(['storage', ...(clustered ? [CLUSTER_STEP] : []), 'workers', 'vulnerabilities', ...(config.readyDelayMs > 0 ? ['test delay'] : [])]);
  const metrics = new Metrics();
  // One process opens the store (storage/writer-lock.ts): a command that writes meanwhile hands its write to the inbox.
  const lock = await takeWriterLock(config.dataDir, 'service', COMMANDS_WAIT_MS, clustered).catch((error: Error) => {
    throw new ConfigError(`cannot start: ${error.message}`);
  });
  let store: Store;
  try {
    // A node the cluster's log was truncated past, or that read another history of it, starts from a copy of a live node's data.
    if (clustered) await restoreIfNeeded(config, logger);
    store = openStore(config.dataDir);
  } catch (error) {
    lock.release();
    throw error;
  }
  // lmdb-js rejects every pending write of a failed commit, including writes whose promise no caller keeps
  // (writes inside a transaction callback): those rejections are the storage failure the request already
  // answered with 507 (or the start-up reports), not a fault of this process. Any other unhandled rejection still
  // ends it. From the store's opening on: the start-up writes too (the first API key). A read refused by a closed
  // store (this service's as it shuts down, or a service's this process ran before) ends nothing either.
  const onUnhandled = (reason: unknown): void => {
    if (toleratedStrayRead(reason, logger)) return;
    const failure = storageWriteFailure(reason);
    if (failure === null) throw reason;
    readiness.storageWritable(failure.message);
  };
  process.on('unhandledRejection', onUnhandled);
  /**
   * A start-up's error, a failed commit told as what it means: the data directory cannot be written (storage
   * DOWN from then on). Called at once, it also handles the commit's own rejection, which would otherwise end
   * the process meanwhile.
   */
  const startUpError = (error: unknown): unknown => {
    const failure = storageWriteFailure(error);
    if (failure === null) return error;
    readiness.storageWritable(failure.message);
    return failure === error ? error : new StorageWriteError(`${config.dataDir} cannot be written: ${failure.message}`);
  };

  // A cluster node's directory started without --cluster by mistake: the writes it took would never reach the cluster.
  const clusterNode = clustered ? null : clusterNodeData(store);
  if (clusterNode !== null) {
    process.off('unhandledRejection', onUnhandled);
    await store.close();
    lock.release();
    throw new ConfigError(`cannot start: ${clusterNode}: a single node on it would take writes the cluster never sees. Start it with --cluster URLS and its --node-id; to run it as a single node instead, stop it and detach it first: jvmlens cluster detach --data-dir DIR`);
  }
  readiness.done('storage');
  const dict = new Dictionary(store);
  // Reports scan these instead of LMDB; every write below that touches a VM refreshes its rows.
  const fleet = new FleetColumns(store);
  fleet.reload();
  const liveness = new Liveness(store);
  const cveIndex = new CveIndex(store, dict);
  const instances = new InstanceCache();
  const ingestor = new Ingestor(store, dict);
  const local = localWrites({
    store, dict, ingestor, liveness,
    countEvents: (counts) => {
      for (const [type, count] of counts) metrics.recordEvents(type, count);
    },
    afterIngest: (result) => {
      fleet.refresh(result.touched.map((record) => record.row), result.componentsChanged);
      for (const record of result.touched) instances.invalidate(record.vmId);
      // The batch's own VMs always: a rebuild already running replays them (its `pending`), and without this
      // they were missing from the index until the rebuild queued after it finished.
      cveIndex.update(result.touched.map((record) => record.row), result.newComponents.length > 0);
      // A component whose CVEs changed touches every VM that carries it: re-read them all.
      if (result.matchesChanged) cveIndex.rebuild().catch((error: Error) => logger.error('CVE index rebuild failed', { stack: error.stack }));
    },
    afterTagsChange: (vmId) => {
      instances.invalidate(vmId);
      const row = store.vmRows.get(vmId);
      if (row === undefined) return;
      fleet.refresh([row]);
      cveIndex.update([row], false);
    },
  });
  // Cluster mode: writes go through the JetStream log, which this node replays into its store with `local`.
  const cluster = clustered ? new ClusterNode({ config, store, dict, local, readiness, logger }) : null;
  if (cluster !== null) readiness.addCheck(() => cluster.problem());
  const context: ServiceContext = { config, store, dict, clock, logger, metrics, readiness, liveness, instances, writes: cluster?.writes ?? local };
  metrics.gauge('jvmlens_vms:state', 'VMs by state (RUNNING, OFFLINE, TERMINATED).', () => liveness.countByState(clock(), config.offlineAfterMs));
  // Cluster mode: the report partitions a node ran for others, its place in the log, the live nodes.
  if (cluster !== null) {
    metrics.counter('jvmlens_cluster_report_partitions_total:outcome', 'Report partitions this node ran for other coordinators (served, cancelled), sent to other nodes, and ran itself after another failed to.', () => ({ ...cluster.partitionCounts }));
    metrics.gauge('jvmlens_cluster_log_applied_sequence', 'The last command of the cluster log applied to this node\'s store.', () => cluster.logPosition.applied);
    metrics.gauge('jvmlens_cluster_log_known_sequence', 'The highest sequence this node knows the cluster log holds: less the applied one, the commands it has yet to apply.', () => cluster.logPosition.known);
    metrics.gauge('jvmlens_cluster_log_behind_seconds', 'About how long this node needs to apply the commands it knows of and has not applied (reads here wait as long).', () => cluster.logPosition.behindSeconds);
    metrics.gauge('jvmlens_cluster_live_nodes', 'The nodes whose heartbeat this node saw live at its last look, itself included.', () => cluster.liveNodes);
    metrics.gauge('jvmlens_cluster_writes_awaiting_start', 'Writes of the cluster log this node read before their VM\'s start, kept until it (its history differs from the one of the gateway that took them).', () => keptCount(store));
  }
  const authenticator = new Authenticator(store, config.apiKey, clock);
  const common = {
    metrics,
    logger,
    notReadyReason: () => readiness.reason(),
    authenticate: (key: string | undefined) => authenticator.authenticate(key),
    onStorageFailure: (problem: string) => readiness.storageWritable(problem),
    ...(cluster === null ? {} : { barrier: () => cluster.barrier() }),
  };
  const pool = new WorkerPool(config.dataDir, config.workers);
  // decisions §3: another process (a CLI) may have written: what this process keeps in memory is re-read.
  let seenSeq = writeSeq(store);
  const noticeExternalWrites = (): void => {
    const currentSeq = writeSeq(store);
    let external = false;
    for (let seq = seenSeq + 1; seq <= currentSeq; seq++) if (!store.ownSeqs.delete(seq)) external = true;
    seenSeq = currentSeq;
    if (!external) return;
    fleet.reload();
    instances.clear();
    liveness.invalidate();
    if (readiness.reason() === null) cveIndex.rebuild().catch((error: Error) => logger.error('CVE index rebuild failed', { stack: error.stack }));
  };
  // A report sees every committed write, this process's or another's.
  const fleetView = () => {
    noticeExternalWrites();
    return fleet.view();
  };
  const jobs = new ReportJobs({
    store, pool, fleetView, config, clock, logger,
    ...(cluster === null ? {} : { runsHere: (meta) => cluster.reports.runsHere(meta), finished: (meta) => cluster.reports.publishFinished(meta), place: (meta) => cluster.place(meta) }),
  });
  const vulnerabilities = new Vulnerabilities({ store, pool, ingestor, cveIndex, clock, logger });
  const gatewayRoutes: Route[] = [...healthRoutes(context), ...agentRoutes(context), ...metricsRoutes(context)];
  const apiRoutes: Route[] = [...explorerRoutes(context), ...sbomRoutes(context), ...reportRoutes(context, cluster?.reports ?? jobs), ...cveRoutes(context, cveIndex), ...identityRoutes(), ...docsRoutes(SERVICE_VERSION), ...consoleRoutes()];
  // Load balancers probe health on the gateway with HTTP/1.0 by default: its port always has the front.
  const ports = { gateway: 0, api: 0 };
  const gateway = new HttpServer({ ...common, routes: gatewayRoutes, bodyLimit: 16 * MIB, front: true, otherPort: { name: 'API', routes: apiRoutes, port: () => ports.api } });
  const api = new HttpServer({ ...common, routes: apiRoutes, bodyLimit: 1 * MIB, front: config.apiFront, otherPort: { name: 'gateway', routes: gatewayRoutes, port: () => ports.gateway } });
  await options.beforeListen?.();
  let gatewayPort: number;
  let apiPort: number;
  let createdAdminKey: string | null;
  try {
    gatewayPort = ports.gateway = await gateway.listen(config.host, config.gatewayPort);
    apiPort = ports.api = await api.listen(config.host, config.apiPort);
    // A cluster's keys are created through the log (`jvmlens keys create --cluster`): nodes would each make one.
    createdAdminKey = cluster === null ? await ensureAdminKey(store, config, clock) : null;
  } catch (error) {
    const failure = startUpError(error);
    // A port in use, a first key that cannot be written: what started is stopped before the caller exits.
    // Exiting while the report threads still loaded their native modules aborted the process now and then
    // (a signal, not the exit status that says why).
    await Promise.all([gateway.close(), api.close()]);
    await cluster?.stop();
    await pool.destroy();
    // lmdb-js's close never settles after a failed commit (the process then ended with status 0, saying
    // nothing); the caller exits next, and LMDB stays whole without it.
    if (!readiness.storageFailing) await store.close();
    lock.release();
    process.off('unhandledRejection', onUnhandled);
    throw failure;
  }

  /** The shutdown once it began: a start-up it cuts short stops where it is, and is not ready. */
  let stopping: Promise<void> | null = null;
  const goingOn = (): void => {
    if (stopping !== null) throw new Error('the service shut down while it started');
  };
  const ready = (async () => {
    // The replay applies ingestion and report records before report jobs start.
    if (cluster !== null) await cluster.start(jobs, { pool, fleetView }, { gatewayPort, apiPort }, () => vulnerabilities.rematchNow());
    // Worker threads start while the main thread builds the CVE events index (the vulnerabilities step): both take a few hundred ms.
    // A cluster node's threads learn the rows' shards now when its reports fan out: the first would otherwise wait for it.
    const fleetNow = fleetView();
    const fansOut = clustered && fleetNow.rows >= config.reportFanOutVms;
    const workers = pool.warmUp(fansOut ? { kind: 'ping', shards: { fleet: fleetNow, count: config.vmShards } } : undefined).then(async () => {
      // The jobs a shutdown already stopped must not start again.
      goingOn();
      await jobs.expire();
      await jobs.start();
      readiness.done('workers');
    });
    // Both awaited at once: a shutdown meanwhile (a cluster node restarting to rebuild itself) destroys the
    // pool, and its rejection, unhandled while the vulnerabilities step went on, ended the process.
    await Promise.all([vulnerabilities.start().then(() => readiness.done('vulnerabilities')), workers]);
    goingOn();
    if (config.readyDelayMs > 0) {
      await new Promise((resolve) => setTimeout(resolve, config.readyDelayMs));
      readiness.done('test delay');
    }
  })().catch((error: unknown) => {
    throw startUpError(error);
  });
  ready.catch((error: Error) => {
    // A shutdown cuts the start-up short (its pool destroyed, its store closed): that is no failure.
    // A full disk is no fault of the code: its message says all.
    if (stopping === null) logger.error('start-up failed', error instanceof StorageWriteError ? { reason: error.message } : { stack: error.stack });
  });

  // Keys, imports and backups of commands run on this data directory (storage/inbox.ts); a cluster node's
  // writes come through its log, so it makes copies only.
  const apply = (request: InboxRequest) => cluster === null || request.kind === 'backup'
    ? applyRequest(store, request)
    : Promise.reject(new Error(`${config.dataDir} is a cluster node's: give the command --cluster URLS instead of --data-dir`));
  const backups = new BackupsUnderWay((error) => logger.error('a backup\'s answer could not be written; it is made again', { stack: error.stack }));
  let applying: Promise<void> | null = null;
  let applyAgain = false;
  const applyCommands = (): void => {
    if (applying !== null) {
      applyAgain = true;
      return;
    }
    applying = (async () => {
      do {
        applyAgain = false;
        await applyInbox(config.dataDir, apply, backups).catch((error: Error) => logger.error('applying the requests of commands failed', { stack: error.stack }));
      } while (applyAgain && stopping === null);
    })().finally(() => (applying = null));
  };
  const stopWatchingInbox = watchInbox(config.dataDir, applyCommands);
  applyCommands();
  // decisions §3: DOWN while storage cannot be written.
  const watch = setInterval(() => {
    store.meta.put('probe', clock()).then(
      () => readiness.storageWritable(null),
      (error: unknown) => readiness.storageWritable((storageWriteFailure(error) ?? (error as Error)).message),
    );
    applyCommands();
    noticeExternalWrites();
    if (readiness.reason() === null) vulnerabilities.refreshIfChanged().catch((error: Error) => logger.error('vulnerability refresh failed', { stack: error.stack }));
  }, WATCH_MS);
  watch.unref();
  const expiry = setInterval(() => {
    jobs.expire().catch((error: Error) => logger.error('report expiry failed', { stack: error.stack }));
  }, EXPIRY_MS);
  expiry.unref();

  const shutdown = (why?: string): Promise<void> => {
    stopping ??= (async () => {
      readiness.shutDown(why);
      clearInterval(watch);
      clearInterval(expiry);
      await new Promise((resolve) => setTimeout(resolve, config.shutdownGraceMs));
      await Promise.all([gateway.close(), api.close()]);
      await jobs.stop();
      await cluster?.stop();
      await pool.destroy();
      stopWatchingInbox();
      await applying;
      await backups.settled();
      // What still reads the store ends first (the start-up it cut short, a refresh): lmdb-js throws from a
      // timer after a read of a closed store, which ends the process.
      await within(Promise.all([vulnerabilities.settled(), cveIndex.close()]), READERS_WAIT_MS, 'the CVE data was still being read').catch((error: Error) => logger.warn('closing the store while it is still read', { reason: error.message }));
      // As after a failed start: lmdb-js's close would never settle.
      if (!readiness.storageFailing) await store.close();
      lock.release();
      process.off('unhandledRejection', onUnhandled);
    })();
    return stopping;
  };
  const rebuild = cluster?.rebuild ?? new Promise<void>(() => undefined);
  return { gatewayPort, apiPort, createdAdminKey, ready, readiness, rebuild, shutdown };
}
