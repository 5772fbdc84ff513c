// Applies a validated batch of agent events in one LMDB write transaction (decisions §4).
import type { AgentEvent, VmStartEvent } from '../ingest/events.ts';
import { CodeBatch, CodeIndex } from './code-sightings.ts';
import { ComponentIds } from './components.ts';
import type { Dictionary } from './dictionary.ts';
import type { Annotation, VmRecord } from './records.ts';
import { bufferOf, countWrite, nextId, uint32s } from './store.ts';
import type { Store } from './store.ts';
import { readTags, writeTags } from './vm-tags.ts';
import { isTerminated } from './vm-state.ts';
import { sortedHas } from '../typed-arrays.ts';
import { encodeScanRow, readVmRecord } from './vm-scan.ts';

export interface IngestResult {
  accepted: number;
  /** Events of the batch by type. */
  eventCounts: Map<AgentEvent['type'], number>;
  /** VMs whose record changed, as committed. */
  touched: VmRecord[];
  /** Component ids the fleet had never seen before this batch. */
  newComponents: number[];
  /** Rows of VMs whose component set grew. */
  componentsChanged: number[];
  /** A component the fleet already had matches other CVEs now: every VM carrying it changed. */
  matchesChanged: boolean;
  /** Why nothing was stored, when the batch named VMs nothing started and the caller gave `log` hooks rather than have it rejected. */
  skipped: UnknownVmsError | null;
}

/**
 * How a batch of a cluster's log applies beyond a gateway's, each called in the batch's write transaction
 * (src/cluster/awaiting-start.ts). A batch naming VMs that nothing started is not rejected: it stores nothing,
 * on every replica alike, and `unknownVms` keeps it until they start; `written` then applies what waited.
 */
export interface LogHooks {
  unknownVms(error: UnknownVmsError): void;
  written(): void;
}

const NO_SOURCE = 0xffffffff;

/** The JAR (sourceName id) a VM's component was found in, or its JARs when there are several. */
type ComponentSources = number | number[];

/**
 * `sources` with `source` added, or `sources` itself when it changes nothing. Each JAR the component was
 * found in counts (the same library in two webapps): code loaded from any of them makes it USED. A known
 * JAR replaces "none known", and "none known" adds nothing to a known one.
 */
function withSource(sources: ComponentSources | undefined, source: number): ComponentSources {
  if (sources === undefined || sources === NO_SOURCE) return source;
  if (source === NO_SOURCE || sources === source) return sources;
  if (typeof sources === 'number') return [sources, source];
  return sources.includes(source) ? sources : [...sources, source];
}

/** Events for VMs that neither the store nor the batch's own vm.start events know; nothing was stored. */
export class UnknownVmsError extends Error {
  /** The first 100 such events. */
  readonly details: { index: number; message: string }[];
  /** Every VM they name, once. */
  readonly vmIds: string[];
  constructor(details: { index: number; message: string }[], vmIds: string[]) {
    super(`${details.length} event(s) for unknown VMs; nothing was stored`);
    this.name = 'UnknownVmsError';
    this.details = details;
    this.vmIds = vmIds;
  }
}

/**
 * Every event for an unknown vmId must follow a vm.start for it in the same batch. Gives the rows of the
 * stored VMs it looked up, which the batch then reads without looking them up again.
 */
export function checkKnownVms(store: Store, events: readonly AgentEvent[]): Map<string, number> {
  const started = new Set<string>();
  const rows = new Map<string, number>();
  const details: { index: number; message: string }[] = [];
  const unknown = new Set<string>();
  events.forEach((event, index) => {
    if (event.type === 'vm.start') started.add(event.vmId);
    else if (!started.has(event.vmId) && !rows.has(event.vmId)) {
      const row = store.vmRows.get(event.vmId);
      if (row !== undefined) rows.set(event.vmId, row);
      else {
        unknown.add(event.vmId);
        if (details.length < 100) details.push({ index, message: `unknown vmId '${event.vmId}': send vm.start first` });
      }
    }
  });
  if (details.length > 0) throw new UnknownVmsError(details, [...unknown]);
  return rows;
}

function systemProperty(event: VmStartEvent, name: string): string | null {
  const properties = event.inventory.systemProperties as Record<string, string> | undefined;
  return properties?.[name] ?? null;
}

function inventoryText(event: VmStartEvent, field: string): string | null {
  const value = event.inventory[field];
  return typeof value === 'string' ? value : null;
}

/**
 * The sourceNames a VM loaded code from, as a batch sees them: the stored ids (sorted) and those the batch
 * adds. A known source is found by binary search: building a set of every stored id for every VM a batch
 * names cost a cluster node more than the rest of a code event's VM side.
 */
class VmSources {
  readonly #stored: Uint32Array;
  #added: Set<number> | null = null;

  constructor(stored: Uint32Array) {
    this.#stored = stored;
  }

  add(id: number): void {
    if (!sortedHas(this.#stored, this.#stored.length, id)) (this.#added ??= new Set()).add(id);
  }

  get changed(): boolean {
    return this.#added !== null;
  }

  /** Every id, sorted: the stored value after the batch. */
  all(): Uint32Array {
    const all = new Uint32Array(this.#stored.length + (this.#added?.size ?? 0));
    all.set(this.#stored);
    all.set([...(this.#added ?? [])], this.#stored.length);
    return all.sort();
  }
}

/** Batch-local view of the VMs and sets a batch touches, written once at the end. */
class BatchState {
  readonly vms = new Map<string, VmRecord>();
  /**
   * Each VM's components as the batch changes them: id → its source, or its sources when it was found in
   * several JARs (a plain number in the common case spares an array per component).
   */
  readonly components = new Map<number, Map<number, ComponentSources>>();
  readonly sources = new Map<number, VmSources>();
  readonly appEnvs = new Map<number, string>();
  readonly code: CodeBatch;
  readonly newComponents: number[] = [];
  readonly componentsChanged = new Set<number>();
  /** True when a component the fleet already had got other CVEs (a groupId narrowed its match). */
  matchesChanged = false;
  seq = 0;
  /** When the batch was received: the analysis time of the CVEs matched to its new components. */
  readonly receivedAt: number;
  readonly #store: Store;
  readonly #dict: Dictionary;
  /** Rows of stored VMs that checkKnownVms looked up for the batch. */
  readonly #rows: ReadonlyMap<string, number>;
  /** The sourceNames the batch's code events name by index, and their ids (0: not interned yet). */
  #sourceNames: readonly string[] | null = null;
  #sourceIds = new Uint32Array(0);

  constructor(store: Store, dict: Dictionary, codeIndex: CodeIndex, receivedAt: number, rows: ReadonlyMap<string, number>) {
    this.#store = store;
    this.#dict = dict;
    this.#rows = rows;
    this.code = new CodeBatch(store, codeIndex);
    this.receivedAt = receivedAt;
  }

  vm(vmId: string): VmRecord | undefined {
    let record = this.vms.get(vmId);
    if (record === undefined) {
      const row = this.#rows.get(vmId) ?? this.#store.vmRows.get(vmId);
      if (row === undefined) return undefined;
      record = readVmRecord(this.#store, row, vmId)!;
      this.vms.set(vmId, record);
    }
    return record;
  }

  /** The id of `names[ref]`: the events of a batch share `names`, so each is interned once per batch. */
  sourceId(names: readonly string[], ref: number): number {
    if (names !== this.#sourceNames) {
      this.#sourceNames = names;
      this.#sourceIds = new Uint32Array(names.length);
    }
    return (this.#sourceIds[ref] ||= this.#dict.intern(names[ref]));
  }

  appEnv(record: VmRecord): string {
    let value = this.appEnvs.get(record.row);
    if (value === undefined) {
      value = readTags(this.#store, this.#dict, record.row).get('AppEnv') ?? '';
      this.appEnvs.set(record.row, value);
    }
    return value;
  }

  componentSet(row: number): Map<number, ComponentSources> {
    let set = this.components.get(row);
    if (set === undefined) {
      set = new Map();
      const pairs = uint32s(this.#store.vmComponents.getBinary(row));
      for (let i = 0; i < pairs.length; i += 2) set.set(pairs[i], withSource(set.get(pairs[i]), pairs[i + 1]));
      this.components.set(row, set);
    }
    return set;
  }

  vmSources(row: number): VmSources {
    let sources = this.sources.get(row);
    if (sources === undefined) {
      sources = new VmSources(uint32s(this.#store.usedSources.getBinary(row)));
      this.sources.set(row, sources);
    }
    return sources;
  }
}

function applyStart(store: Store, dict: Dictionary, batch: BatchState, event: VmStartEvent): void {
  let record = batch.vm(event.vmId);
  if (record === undefined) {
    const row = nextId(store, 'rowNext', 0);
    store.vmRows.put(event.vmId, row);
    record = {
      row, vmId: event.vmId, agentVersion: 0, agentRevision: 0, mailbox: 0, hostName: 0, mainMethod: 0,
      javaVersion: 0, javaVendor: 0, osName: 0, osArch: 0, startTime: event.time, lastHeardTime: event.time, stopTime: null,
    };
    batch.vms.set(event.vmId, record);
  } else if (event.time < record.startTime) {
    // An older start (a replayed batch) must not undo what came after it.
    return;
  }
  record.agentVersion = dict.intern(event.agentVersion);
  record.agentRevision = dict.intern(event.agentRevision);
  record.mailbox = dict.intern(event.mailbox);
  record.hostName = dict.intern(inventoryText(event, 'hostName'));
  record.mainMethod = dict.intern(inventoryText(event, 'mainMethod'));
  record.javaVersion = dict.intern(systemProperty(event, 'java.runtime.version') ?? systemProperty(event, 'java.version'));
  record.javaVendor = dict.intern(systemProperty(event, 'java.vm.vendor'));
  record.osName = dict.intern(systemProperty(event, 'os.name'));
  record.osArch = dict.intern(systemProperty(event, 'os.arch'));
  record.startTime = event.time;
  record.lastHeardTime = Math.max(record.lastHeardTime, event.time);
  store.vmDetails.put(record.row, { inventory: event.inventory, jvmInfo: event.jvmInfo });
  if (Object.keys(event.tags).length > 0) {
    const tags = readTags(store, dict, record.row);
    for (const [key, value] of Object.entries(event.tags)) tags.set(key, value);
    writeTags(store, dict, record.row, tags);
    batch.appEnvs.delete(record.row);
  }
  const annotations = new Map<string, Annotation>((store.annotations.get(record.row) ?? []).map((a) => [a.key, a]));
  for (const [key, value] of Object.entries(event.annotations)) annotations.set(key, { key, value, time: event.time });
  annotations.set('jvmlens.lastStart', { key: 'jvmlens.lastStart', value: new Date(event.time).toISOString(), time: event.time });
  store.annotations.put(record.row, [...annotations.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)));
}

function applyEvent(store: Store, dict: Dictionary, components: ComponentIds, batch: BatchState, event: AgentEvent): void {
  if (event.type === 'vm.start') {
    applyStart(store, dict, batch, event);
    return;
  }
  const record = batch.vm(event.vmId)!;
  const terminated = isTerminated(record);
  switch (event.type) {
    case 'vm.stop':
      if (event.time >= record.startTime) {
        record.stopTime = Math.max(record.stopTime ?? event.time, event.time);
        record.lastHeardTime = Math.max(record.lastHeardTime, event.time);
      }
      return;
    case 'vm.heartbeat':
      break;
    case 'code': {
      const appEnv = batch.appEnv(record);
      const sources = batch.vmSources(record.row);
      // A cluster node of a code group has its group's items only: the event names the sources of them all.
      const named = event.sources;
      let lastSource = '';
      for (const item of event.items) {
        batch.code.add(item, appEnv, event.time);
        // Items of a class, and often of a JAR, come together: intern a sourceName once per run of it.
        if (named === undefined && item.sourceName !== lastSource) {
          lastSource = item.sourceName;
          sources.add(dict.intern(lastSource));
        }
      }
      if (named !== undefined) for (const ref of named.refs) sources.add(batch.sourceId(named.names, ref));
      break;
    }
    case 'components': {
      const set = batch.componentSet(record.row);
      for (const item of event.items) {
        const { id, created, cvesChanged } = components.intern(item, batch.receivedAt);
        if (created) batch.newComponents.push(id);
        else if (cvesChanged) batch.matchesChanged = true;
        const source = item.sourceName === null ? NO_SOURCE : dict.intern(item.sourceName);
        const known = set.get(id);
        const sources = withSource(known, source);
        if (sources !== known) {
          set.set(id, sources);
          batch.componentsChanged.add(record.row);
        }
      }
      break;
    }
  }
  if (!terminated) record.lastHeardTime = Math.max(record.lastHeardTime, event.time);
}

function writeBatch(store: Store, dict: Dictionary, batch: BatchState): void {
  batch.code.write();
  for (const record of batch.vms.values()) store.vmScan.put(record.row, encodeScanRow(record, dict.intern(record.vmId)));
  for (const row of batch.componentsChanged) {
    const set = batch.components.get(row)!;
    const ids = [...set.keys()].sort((a, b) => a - b);
    let count = 0;
    for (const sources of set.values()) count += typeof sources === 'number' ? 1 : sources.length;
    const pairs = new Uint32Array(count * 2);
    let at = 0;
    for (const id of ids) {
      const sources = set.get(id)!;
      if (typeof sources === 'number') {
        pairs[at++] = id;
        pairs[at++] = sources;
        continue;
      }
      for (const source of sources.sort((a, b) => a - b)) {
        pairs[at++] = id;
        pairs[at++] = source;
      }
    }
    store.vmComponents.put(row, bufferOf(pairs));
  }
  for (const [row, sources] of batch.sources) {
    if (sources.changed) store.usedSources.put(row, bufferOf(sources.all()));
  }
  batch.seq = countWrite(store);
}

/** Writes agent events into the store; holds the caches of ids that ingestion interns. */
export class Ingestor {
  readonly store: Store;
  readonly dict: Dictionary;
  readonly components: ComponentIds;
  readonly #codeIndex = new CodeIndex();

  constructor(store: Store, dict: Dictionary) {
    this.store = store;
    this.dict = dict;
    this.components = new ComponentIds(store);
  }

  /**
   * Stores a batch atomically. Resolves only once the transaction is on disk, so an acknowledged batch
   * survives a crash (decisions §4). `decode` gives the validated events (or throws the batch's 400) inside
   * the write transaction, right before they apply: then one batch's parsed objects are garbage before
   * the next batch is parsed. Parsed ahead, the batches waiting for the transaction survived young
   * collections together (~1 µs of GC per code item with 4 connections). `receivedAt` is the time the
   * batch was received (a cluster's log carries it, so every node applies the batch alike). A batch of the
   * log naming unknown VMs (`log`) still commits what `decode` and `log.unknownVms` wrote in the transaction.
   */
  async ingest(decode: () => readonly AgentEvent[], receivedAt: number = Date.now(), log?: LogHooks): Promise<IngestResult> {
    const { store, dict, components } = this;
    let batch: BatchState | undefined;
    let skipped: UnknownVmsError | null = null;
    const eventCounts = new Map<AgentEvent['type'], number>();
    try {
      await store.env.childTransaction(() => {
        const events = decode();
        let rows: Map<string, number>;
        try {
          rows = checkKnownVms(store, events);
        } catch (error) {
          if (log === undefined || !(error instanceof UnknownVmsError)) throw error;
          log.unknownVms(error);
          skipped = error;
          return;
        }
        batch = new BatchState(store, dict, this.#codeIndex, receivedAt, rows);
        try {
          for (const event of events) {
            applyEvent(store, dict, components, batch, event);
            eventCounts.set(event.type, (eventCounts.get(event.type) ?? 0) + 1);
          }
          writeBatch(store, dict, batch);
          log?.written();
        } catch (error) {
          // Rolled back with this child transaction: the batches after it in the same transaction run right
          // after this callback, before this batch's promise rejects, and must not use the ids it cached.
          this.#clearCaches();
          throw error;
        }
      });
      await store.env.flushed;
    } catch (error) {
      // A batch rejected before it applied wrote nothing: the caches are still true. One whose transaction
      // did not commit did write into them.
      if (batch !== undefined) {
        store.ownSeqs.delete(batch.seq);
        this.#clearCaches();
      }
      throw error;
    }
    let accepted = 0;
    for (const count of eventCounts.values()) accepted += count;
    return {
      accepted,
      eventCounts,
      touched: batch === undefined ? [] : [...batch.vms.values()],
      newComponents: batch?.newComponents ?? [],
      componentsChanged: batch === undefined ? [] : [...batch.componentsChanged],
      matchesChanged: batch?.matchesChanged ?? false,
      skipped,
    };
  }

  #clearCaches(): void {
    this.dict.clearCache();
    this.components.clearCache();
    this.#codeIndex.clear();
  }
}
