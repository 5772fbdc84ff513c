// The in-memory index behind GET /public/cve/events: VMs in vmId order with posting lists per tag and host,
// so a filtered page reads only the VMs it returns (decisions §11).
import { compareCodePoints } from '../../collation.ts';
import { isVmId } from '../../ingest/events.ts';
import type { Dictionary } from '../../storage/dictionary.ts';
import type { ComponentCve } from '../../storage/records.ts';
import { NONE } from '../../storage/dictionary.ts';
import type { Store } from '../../storage/store.ts';
import { EventItems, vmPart } from './event-items.ts';
import { fleetSummary } from './fleet-summary.ts';
import type { CveFleetItem } from './fleet-summary.ts';
import { CveSnapshot } from './snapshot.ts';

/** decisions §11: the exact count stops here; beyond, a warning says it is a lower bound. */
export const COUNT_CAP = 10_000;

/** VMs read per step of a rebuild, between which queries and ingestion run. */
const REBUILD_CHUNK = 5_000;

export interface CveEventFilter {
  vmId: string | null;
  hostName: string | null;
  tags: [key: string, value: string][];
  startTime: number | null;
  endTime: number | null;
  analysisFrom: number | null;
  analysisTo: number | null;
  /** Only the items of this CVE. */
  cveId: string | null;
  showNotImpacted: boolean;
}

/** The position after which a page starts: the last row of the previous page. */
export type CveCursor = [vmId: string, componentName: string, componentVersion: string, cveId: string | null];

export interface CvePage {
  items: EventItems;
  /** The key of the last item, for the next page's afterToken. */
  last: CveCursor | null;
  hasNext: boolean;
  totalCount: number;
  capped: boolean;
}

/** The VM filters with their strings resolved to dictionary ids, once per query. */
interface VmFilter {
  /** Host name ids a VM may have: a VM without one shows '' and matches hostName=''. */
  hostIds: number[] | null;
  tagIds: [keyId: number, valueId: number][];
  startTime: number | null;
  endTime: number | null;
}

/** A page being filled: its items, and the key of the last one once the page is full. */
interface PageFill {
  items: EventItems;
  limit: number;
  last: CveCursor | null;
  hasNext: boolean;
}

function vmPasses(snapshot: CveSnapshot, row: number, filter: VmFilter): boolean {
  if (filter.hostIds !== null && !filter.hostIds.includes(snapshot.hostIds[row])) return false;
  for (const [keyId, valueId] of filter.tagIds) if (!snapshot.hasTag(row, keyId, valueId)) return false;
  if (filter.startTime !== null && snapshot.startTime[row] < filter.startTime) return false;
  if (filter.endTime !== null && snapshot.lastHeardTime[row] > filter.endTime) return false;
  return true;
}

/** Whether a CVE of a component passes the filter's CVE conditions: its id and its analysis time. */
function cvePasses(cve: ComponentCve, filter: CveEventFilter): boolean {
  if (filter.cveId !== null && cve.cveId !== filter.cveId) return false;
  return (filter.analysisFrom === null || cve.analysisTime >= filter.analysisFrom) && (filter.analysisTo === null || cve.analysisTime <= filter.analysisTo);
}

/** A filter on CVEs leaves out the components without CVEs, even with showNotImpacted (decisions §11). */
function filtersCves(filter: CveEventFilter): boolean {
  return filter.analysisFrom !== null || filter.analysisTo !== null || filter.cveId !== null;
}

/** An item's order inside its VM against the cursor's (vmIds equal): componentName, componentVersion, cveId. */
function compareInVm(componentName: string, componentVersion: string, cveId: string | null, cursor: CveCursor): number {
  return compareCodePoints(componentName, cursor[1]) || compareCodePoints(componentVersion, cursor[2]) || compareCodePoints(cveId ?? '', cursor[3] ?? '');
}

export class CveIndex {
  readonly #store: Store;
  readonly #dict: Dictionary;
  #current: CveSnapshot;
  /** Rows changed while a rebuild reads the store: applied to the new snapshot before it is swapped in. */
  #pending: Set<number> | null = null;
  #rebuilding: Promise<void> | null = null;
  #rebuildAgain = false;
  /** Set by close(): no rebuild starts, and one running stops at its next chunk. */
  #closed = false;

  constructor(store: Store, dict: Dictionary) {
    this.#store = store;
    this.#dict = dict;
    this.#current = new CveSnapshot(store, dict);
  }

  /**
   * Reads every VM into a new snapshot, yielding to the event loop between chunks, and swaps it in:
   * queries meanwhile answer from the previous one. Calls during a rebuild run one more after it.
   */
  rebuild(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    if (this.#rebuilding !== null) {
      this.#rebuildAgain = true;
      return this.#rebuilding;
    }
    this.#rebuilding = (async () => {
      do {
        this.#rebuildAgain = false;
        await this.#rebuildOnce();
      } while (this.#rebuildAgain && !this.#closed);
    })().finally(() => (this.#rebuilding = null));
    return this.#rebuilding;
  }

  /**
   * Stops rebuilding, and ends once a rebuild running stopped: the service closes the store next. A read of
   * a closed lmdb-js store throws from a timer, which ended a cluster node restarting to rebuild itself.
   */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#rebuilding?.catch(() => undefined);
  }

  async #rebuildOnce(): Promise<void> {
    this.#pending = new Set();
    try {
      const rowCount = (this.#store.meta.get('rowNext') as number | undefined) ?? 0;
      const next = new CveSnapshot(this.#store, this.#dict, rowCount);
      next.encodedCves.extend(this.#store);
      // Columns first, in row order; then the order, from vmRows, whose keys are vmIds. Each chunk is one
      // synchronous read; VMs that change between chunks are in #pending and replayed below.
      const loaded = new Uint8Array(rowCount);
      for (let start = 0; start < rowCount; start += REBUILD_CHUNK) {
        for (let row = start; row < Math.min(rowCount, start + REBUILD_CHUNK); row++) loaded[row] = next.load(row) ? 1 : 0;
        await new Promise((resolve) => setImmediate(resolve));
        if (this.#closed) return;
      }
      let after: string | null = null;
      for (;;) {
        let read = 0;
        for (const { key, value } of this.#store.vmRows.getRange(after === null ? { limit: REBUILD_CHUNK } : { start: after, limit: REBUILD_CHUNK + 1 })) {
          if (key === after) continue;
          if (loaded[value] === 1) next.append(key, value);
          after = key;
          read++;
        }
        if (read === 0) break;
        await new Promise((resolve) => setImmediate(resolve));
        if (this.#closed) return;
      }
      // VMs ingested during the read may carry components the snapshot has not loaded yet.
      if (this.#pending.size > 0) next.encodedCves.extend(this.#store);
      for (const row of this.#pending) next.put(row);
      this.#current = next;
    } finally {
      this.#pending = null;
    }
  }

  /** Brings changed VMs (and components new to the fleet) up to date after an ingestion or tag change. */
  update(rows: readonly number[], newComponents: boolean): void {
    const snapshot = this.#current;
    if (newComponents) snapshot.encodedCves.extend(this.#store);
    for (const row of rows) {
      snapshot.put(row);
      this.#pending?.add(row);
    }
  }

  query(filter: CveEventFilter, cursor: CveCursor | null, limit: number): CvePage {
    // One snapshot for the whole page: a rebuild swapping in meanwhile cannot mix two states.
    const snapshot = this.#current;
    const vmFilter = this.#resolve(filter);
    if (vmFilter === null) return { items: new EventItems(), last: null, hasNext: false, totalCount: 0, capped: false };
    const { rows, rest } = this.#candidates(snapshot, filter, vmFilter);
    const page: PageFill = { items: new EventItems(), limit, last: null, hasNext: false };
    for (let i = cursor === null ? 0 : snapshot.lowerBound(rows, cursor[0]); i < rows.length && !page.hasNext; i++) {
      const row = rows[i];
      if (rest !== null && !vmPasses(snapshot, row, rest)) continue;
      this.#fill(snapshot, row, filter, cursor !== null && cursor[0] === snapshot.vmIds[row] ? cursor : null, page);
    }
    return { items: page.items, last: page.last, hasNext: page.hasNext, ...this.#count(snapshot, rows, rest, filter) };
  }

  /** Every CVE of the VMs the filter passes (its VM fields only: host, tags, times), once each. */
  summary(filter: CveEventFilter): { items: CveFleetItem[]; vmCount: number } {
    const snapshot = this.#current;
    const vmFilter = this.#resolve(filter);
    if (vmFilter === null) return { items: [], vmCount: 0 };
    const { rows, rest } = this.#candidates(snapshot, filter, vmFilter);
    return fleetSummary(snapshot, rest === null ? rows : rows.filter((row) => vmPasses(snapshot, row, rest)));
  }

  /** The filter's host name and tags as dictionary ids; null when a string is unknown, so no VM can pass. */
  #resolve(filter: CveEventFilter): VmFilter | null {
    const tagIds: [number, number][] = [];
    for (const [key, value] of filter.tags) {
      const keyId = this.#dict.find(key);
      const valueId = this.#dict.find(value);
      if (keyId === undefined || valueId === undefined) return null;
      tagIds.push([keyId, valueId]);
    }
    let hostIds: number[] | null = null;
    if (filter.hostName !== null) {
      const hostId = this.#dict.find(filter.hostName);
      hostIds = hostId === undefined ? [] : [hostId];
      if (filter.hostName === '') hostIds.push(NONE);
      if (hostIds.length === 0) return null;
    }
    return { hostIds, tagIds, startTime: filter.startTime, endTime: filter.endTime };
  }

  /**
   * The shortest list of rows, in vmId order, that holds every VM the filter can pass, and the rest of the
   * filter a row of it must still pass (null: none, every row passes).
   */
  #candidates(snapshot: CveSnapshot, filter: CveEventFilter, vmFilter: VmFilter): { rows: readonly number[]; rest: VmFilter | null } {
    if (filter.vmId !== null) {
      const row = isVmId(filter.vmId) ? this.#store.vmRows.get(filter.vmId) : undefined;
      return { rows: row !== undefined && snapshot.vmIds[row] === filter.vmId ? [row] : [], rest: vmFilter };
    }
    let rows: readonly number[] = snapshot.ordered;
    let rest = vmFilter;
    vmFilter.tagIds.forEach(([keyId, valueId], k) => {
      const list = snapshot.tagList(keyId, valueId);
      if (list.length < rows.length) {
        rows = list;
        rest = { ...vmFilter, tagIds: vmFilter.tagIds.filter((_, other) => other !== k) };
      }
    });
    if (vmFilter.hostIds?.length === 1) {
      const list = snapshot.byHost.get(vmFilter.hostIds[0]) ?? [];
      if (list.length < rows.length) {
        rows = list;
        rest = { ...vmFilter, hostIds: null };
      }
    }
    const passesAll = rest.hostIds === null && rest.tagIds.length === 0 && rest.startTime === null && rest.endTime === null;
    return { rows, rest: passesAll ? null : rest };
  }

  /**
   * Adds the VM's items in (componentName, componentVersion, cveId) order to the page, those after the cursor
   * when the cursor is in this VM, until one more than the page holds tells that another page exists.
   */
  #fill(snapshot: CveSnapshot, row: number, filter: CveEventFilter, cursor: CveCursor | null, page: PageFill): void {
    const encodedCves = snapshot.encodedCves;
    const vm = snapshot.vmPart(row, () => this.#vmPart(snapshot, row));
    const components = snapshot.components(row, filter.showNotImpacted);
    const cveFilter = filtersCves(filter);
    const vmId = snapshot.vmIds[row];
    for (let k = 0; k < components.length; k++) {
      const id = components[k] >>> 1;
      const record = encodedCves.record(id)!;
      const cves = encodedCves.cves(id);
      // decisions §11: a component without CVEs only with showNotImpacted and no filter on CVEs.
      const count = cves.length === 0 ? (cveFilter ? 0 : 1) : cves.length;
      for (let c = 0; c < count; c++) {
        const cveId = cves.length === 0 ? null : cves[c].cveId;
        if (cves.length > 0 && !cvePasses(cves[c], filter)) continue;
        if (cursor !== null && compareInVm(record.componentName, record.componentVersion, cveId, cursor) <= 0) continue;
        if (page.items.count === page.limit) {
          page.hasNext = true;
          return;
        }
        page.items.push(encodedCves.part(id, c, (components[k] & 1) === 1), vm);
        if (page.items.count === page.limit) page.last = [vmId, record.componentName, record.componentVersion, cveId];
      }
    }
  }

  /** The VM's fields of its items (event-items.ts), tags decoded from their ids in key order. */
  #vmPart(snapshot: CveSnapshot, row: number): Buffer {
    const { values, at, length } = snapshot.tags;
    const tags: [string, string][] = [];
    for (let k = at[row]; k < at[row] + length[row]; k += 2) tags.push([this.#dict.lookup(values[k])!, this.#dict.lookup(values[k + 1]) ?? '']);
    return vmPart(this.#dict.lookup(snapshot.hostIds[row]) ?? '', snapshot.startTime[row], snapshot.lastHeardTime[row], snapshot.vmIds[row], tags);
  }

  /** Matching rows, exact up to COUNT_CAP. */
  #count(snapshot: CveSnapshot, rows: readonly number[], rest: VmFilter | null, filter: CveEventFilter): { totalCount: number; capped: boolean } {
    const perVm = filtersCves(filter) ? null : filter.showNotImpacted ? snapshot.allRows : snapshot.eventRows;
    // With a filter on CVEs: the CVEs of each component that pass it, counted once per query.
    const passingPerComponent = new Map<number, number>();
    let total = 0;
    for (const row of rows) {
      if (rest !== null && !vmPasses(snapshot, row, rest)) continue;
      total += perVm !== null ? perVm[row] : this.#rowsPassing(snapshot, row, filter, passingPerComponent);
      if (total > COUNT_CAP) return { totalCount: COUNT_CAP, capped: true };
    }
    return { totalCount: total, capped: false };
  }

  #rowsPassing(snapshot: CveSnapshot, row: number, filter: CveEventFilter, passingPerComponent: Map<number, number>): number {
    let rows = 0;
    // The component ids alone: USED does not count, so it need not be read.
    const { values, at, length } = snapshot.impacted;
    for (let k = at[row]; k < at[row] + length[row]; k++) {
      const id = values[k] >>> 1;
      let count = passingPerComponent.get(id);
      if (count === undefined) {
        count = snapshot.encodedCves.cves(id).filter((cve) => cvePasses(cve, filter)).length;
        passingPerComponent.set(id, count);
      }
      rows += count;
    }
    return rows;
  }
}
