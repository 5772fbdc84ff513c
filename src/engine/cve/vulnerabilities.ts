// Keeps the fleet's CVE matches current: the curated set on first start, re-matching after imports (decisions §11).
import type { Logger } from '../../log.ts';
import type { ComponentMatcher } from '../../storage/components.ts';
import type { Ingestor } from '../../storage/ingest.ts';
import type { Store } from '../../storage/store.ts';
import { componentCves, loadVulnerabilityIndex, putVulnerabilities, vulnImportedAt, vulnSeq } from '../../storage/vulns.ts';
import type { VulnerabilityIndex } from '../../vuln/vulnerability-index.ts';
import { loadCuratedVulnerabilities } from '../../vuln/curated.ts';
import type { CveIndex } from './events-index.ts';
import type { WorkerPool } from '../reports/pool.ts';

const CURATED_LOADED = 'curatedLoaded';
/** The vulnSeq the stored matches were computed for. */
const MATCHED_SEQ = 'matchedSeq';

export class Vulnerabilities {
  readonly #store: Store;
  readonly #pool: WorkerPool;
  readonly #ingestor: Ingestor;
  readonly #cveIndex: CveIndex;
  readonly #clock: () => number;
  readonly #logger: Logger;
  #loadedSeq = -1;
  /** The start, and the refresh while one runs: settled() waits for both. */
  #starting: Promise<void> | null = null;
  #refreshing: Promise<void> | null = null;

  constructor(options: { store: Store; pool: WorkerPool; ingestor: Ingestor; cveIndex: CveIndex; clock: () => number; logger: Logger }) {
    this.#store = options.store;
    this.#pool = options.pool;
    this.#ingestor = options.ingestor;
    this.#cveIndex = options.cveIndex;
    this.#clock = options.clock;
    this.#logger = options.logger;
  }

  /** Loads the curated set on the first start, then brings matches and the CVE index up to date. */
  start(): Promise<void> {
    this.#starting = this.#start();
    return this.#starting;
  }

  /**
   * Ends once the start or refresh running did (a shutdown destroyed the pool they may wait for): the service
   * closes the store next. A start that went on after its service shut down read the closed store, and ended the process.
   */
  async settled(): Promise<void> {
    await Promise.allSettled([this.#starting, this.#refreshing]);
  }

  async #start(): Promise<void> {
    if (this.#store.meta.get(CURATED_LOADED) !== 1) {
      const curated = loadCuratedVulnerabilities();
      await putVulnerabilities(this.#store, curated);
      await this.#store.meta.put(CURATED_LOADED, 1);
      this.#logger.info('loaded the curated OSV set', { records: curated.length });
    }
    await this.#refresh();
  }

  /** Called periodically: an import by the CLI bumps vulnSeq; re-match within seconds (decisions §11: 10 s). */
  refreshIfChanged(): Promise<void> {
    if (vulnSeq(this.#store) === this.#loadedSeq) return Promise.resolve();
    this.#refreshing ??= this.#refresh().finally(() => (this.#refreshing = null));
    return this.#refreshing;
  }

  /**
   * Re-matches the fleet for the vulnerability data stored now, at once: a cluster node does so when it
   * applies an import from its log, before the commands after it, so that every node holds the same
   * matches at the same place in the log. The periodic refresh then only reloads the CVE index.
   */
  async rematchNow(): Promise<void> {
    await this.#rematch(vulnSeq(this.#store));
  }

  async #refresh(): Promise<void> {
    const seq = vulnSeq(this.#store);
    this.#ingestor.components.matcher = matcherFrom(this.#store, seq, loadVulnerabilityIndex(this.#store));
    if (this.#store.meta.get(MATCHED_SEQ) !== seq) await this.#rematch(seq);
    this.#store.env.resetReadTxn();
    await this.#cveIndex.rebuild();
    this.#loadedSeq = seq;
  }

  async #rematch(seq: number): Promise<void> {
    const started = this.#clock();
    // Matches that the import changes were analysed when it happened, on every node of a cluster alike.
    const changed = await this.#pool.run<number>({ kind: 'rematch', now: vulnImportedAt(this.#store) ?? started });
    await this.#store.meta.put(MATCHED_SEQ, seq);
    this.#logger.info('re-matched the fleet against the vulnerability data', { componentsChanged: changed, ms: this.#clock() - started });
  }
}

/**
 * Matches new components inside their ingestion transaction against the vulnerability data that
 * transaction sees: an import committed before the batch (another process's, or a cluster log's command
 * before it) is read at once, not when the periodic refresh comes, so every node matches a batch alike.
 */
function matcherFrom(store: Store, seq: number, index: VulnerabilityIndex): ComponentMatcher {
  let loaded = { seq, index };
  return (component, analysisTime) => {
    const current = vulnSeq(store);
    if (current !== loaded.seq) loaded = { seq: current, index: loadVulnerabilityIndex(store) };
    return componentCves(loaded.index, component, analysisTime);
  };
}
