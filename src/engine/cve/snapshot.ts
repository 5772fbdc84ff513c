// One consistent state of the CVE events index: VMs as columns indexed by row (no object per VM), rows in vmId
// order, and posting lists of rows per tag and per host, each in vmId order.
import type { Dictionary } from '../../storage/dictionary.ts';
import type { Store } from '../../storage/store.ts';
import { uint32View } from '../../storage/store.ts';
import { readScanRow } from '../../storage/vm-scan.ts';
import type { ScanRow } from '../../storage/vm-scan.ts';
import { EncodedCves } from './encoded-cves.ts';
import { grown, sortedHas } from '../../typed-arrays.ts';
import { PackedLists } from './packed-lists.ts';

/** Rows in vmId order. vmIds are ASCII (decisions §4), where UTF-16 order is code-point order: plain < is exact. */
type RowList = number[];

/** VMs whose item parts are kept: a few MB, enough for the pages clients keep asking for. */
const VM_PARTS_KEPT = 10_000;

/** Scratch space of one VM's read: reused, since reads are synchronous. */
let usedScratch = new Uint32Array(256);
let componentScratch = new Uint32Array(256);

/** Copies a VM's used sourceName ids (sorted) into usedScratch, before the next read reuses LMDB's buffer; returns how many. */
function readUsed(store: Store, row: number): number {
  const used = uint32View(store.usedSources.getBinaryFast(row));
  usedScratch = grown(usedScratch, used.length);
  usedScratch.set(used);
  return used.length;
}

export class CveSnapshot {
  readonly encodedCves = new EncodedCves();
  /** Per row; '' where no VM is (yet). Filled in row order, so the array stays dense (fast to index). */
  readonly vmIds: string[] = [];
  hostIds: Uint32Array;
  startTime: Float64Array;
  lastHeardTime: Float64Array;
  /** Rows each VM gives: its impacted (component, CVE) rows, and all rows with showNotImpacted. */
  eventRows: Uint32Array;
  allRows: Uint32Array;
  /** Per row: tag pairs [keyId, valueId, …] sorted by key. */
  readonly tags: PackedLists;
  /**
   * Per row: its components with CVEs as componentId * 2 + 1 when USED (code ran from its sourceName), + 0 when
   * PRESENT. The USED bits are read when the VM is first returned (usedKnown), which keeps start-up to one read less per VM.
   */
  readonly impacted: PackedLists;
  usedKnown: Uint8Array;
  readonly ordered: RowList = [];
  /** keyId → valueId → rows. */
  readonly byTag = new Map<number, Map<number, RowList>>();
  readonly byHost = new Map<number, RowList>();
  /** The VM parts of items (event-items.ts) of VMs returned lately, dropped when their VM changes. */
  readonly #vmParts = new Map<number, Buffer>();
  /** Filled by each row read. */
  readonly #scan: ScanRow = { startTime: 0, lastHeardTime: 0, stopTime: 0, vmId: 0, hostName: 0 };
  readonly #store: Store;
  readonly #dict: Dictionary;

  /** `rows`: the rows expected, so a build does not grow its columns step by step. */
  constructor(store: Store, dict: Dictionary, rows = 0) {
    this.#store = store;
    this.#dict = dict;
    this.hostIds = new Uint32Array(rows);
    this.startTime = new Float64Array(rows);
    this.lastHeardTime = new Float64Array(rows);
    this.eventRows = new Uint32Array(rows);
    this.allRows = new Uint32Array(rows);
    this.tags = new PackedLists(rows, 8);
    this.impacted = new PackedLists(rows, 4);
    this.usedKnown = new Uint8Array(rows);
  }

  /** Reads a VM's columns during a build, in row order (LMDB reads in key order are the fast ones); false for a row without a VM. */
  load(row: number): boolean {
    return this.#read(row) !== undefined;
  }

  /** Places a loaded VM during a build, which visits VMs in vmId order. */
  append(vmId: string, row: number): void {
    this.vmIds[row] = vmId;
    this.ordered.push(row);
    this.#post(this.hostIds[row], this.tags.values, this.tags.at[row], this.tags.length[row], (list) => list.push(row));
  }

  /** Brings one VM up to date after a change: its columns, and its place in the lists when its host or tags changed. */
  put(row: number): void {
    this.#vmParts.delete(row);
    if ((this.vmIds[row] ?? '') === '') {
      const scan = this.#read(row);
      if (scan === undefined) return;
      this.vmIds[row] = this.#dict.lookup(scan.vmId)!;
      this.#insert(this.ordered, row);
      this.#post(this.hostIds[row], this.tags.values, this.tags.at[row], this.tags.length[row], (list) => this.#insert(list, row));
      return;
    }
    const host = this.hostIds[row];
    const tags = this.tags.copy(row);
    if (this.#read(row) === undefined) return;
    const newTags = this.tags.copy(row);
    if (host === this.hostIds[row] && tags.length === newTags.length && tags.every((id, k) => id === newTags[k])) return;
    this.#post(host, tags, 0, tags.length, (list) => this.#remove(list, row));
    this.#post(this.hostIds[row], newTags, 0, newTags.length, (list) => this.#insert(list, row));
  }

  /** A VM's part of its items, encoded once while it stays among the VMs kept. */
  vmPart(row: number, encode: () => Buffer): Buffer {
    let part = this.#vmParts.get(row);
    if (part === undefined) {
      if (this.#vmParts.size >= VM_PARTS_KEPT) this.#vmParts.clear();
      part = encode();
      this.#vmParts.set(row, part);
    }
    return part;
  }

  /** The first position in `list` whose vmId is ≥ vmId. */
  lowerBound(list: readonly number[], vmId: string): number {
    let low = 0;
    let high = list.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.vmIds[list[mid]] < vmId) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  tagList(keyId: number, valueId: number): RowList {
    return this.byTag.get(keyId)?.get(valueId) ?? [];
  }

  hasTag(row: number, keyId: number, valueId: number): boolean {
    const { values, at, length } = this.tags;
    const end = at[row] + length[row];
    for (let k = at[row]; k < end; k += 2) if (values[k] === keyId) return values[k + 1] === valueId;
    return false;
  }

  /** Reads a VM's scan row, tags and component pairs into the columns; undefined when the row holds no VM. */
  #read(row: number): ScanRow | undefined {
    while (this.vmIds.length <= row) this.vmIds.push('');
    const scan = readScanRow(this.#store, row, this.#scan);
    if (scan === undefined) return undefined;
    if (row >= this.hostIds.length) {
      this.hostIds = grown(this.hostIds, row + 1);
      this.startTime = grown(this.startTime, row + 1);
      this.lastHeardTime = grown(this.lastHeardTime, row + 1);
      this.eventRows = grown(this.eventRows, row + 1);
      this.allRows = grown(this.allRows, row + 1);
      this.usedKnown = grown(this.usedKnown, row + 1);
    }
    this.hostIds[row] = scan.hostName;
    this.startTime[row] = scan.startTime;
    this.lastHeardTime[row] = scan.lastHeardTime;
    // Views of LMDB's read buffer, each used up before the next read reuses it.
    const tags = uint32View(this.#store.tags.getBinaryFast(row));
    this.tags.set(row, tags, tags.length);
    this.#readComponents(row);
    return scan;
  }

  /**
   * A VM's components as componentId * 2 + USED in (componentName, componentVersion) order: those with CVEs, kept
   * in memory and ordered once, or with `all` every component the index knows, read from the store (showNotImpacted).
   * Valid until the next call.
   */
  components(row: number, all: boolean): Uint32Array {
    if (all) return this.#inComponentOrder(this.#readWithUsed(row, (id) => this.encodedCves.record(id) !== undefined));
    if (this.usedKnown[row] === 0) {
      // New components take their place between the known ones: an order kept here stays right as components are added.
      const impacted = this.#inComponentOrder(this.#readWithUsed(row, (id) => (this.encodedCves.cveCounts[id] ?? 0) > 0));
      this.impacted.set(row, impacted, impacted.length);
      this.usedKnown[row] = 1;
    }
    return this.impacted.values.subarray(this.impacted.at[row], this.impacted.at[row] + this.impacted.length[row]);
  }

  /** Sorts componentId * 2 + USED values in place into component order: by rank * 2 + USED, a numeric sort. */
  #inComponentOrder(components: Uint32Array): Uint32Array {
    const { rank } = this.encodedCves;
    for (let k = 0; k < components.length; k++) components[k] = rank[components[k] >>> 1] * 2 + (components[k] & 1);
    components.sort();
    for (let k = 0; k < components.length; k++) components[k] = this.encodedCves.idAt(components[k] >>> 1) * 2 + (components[k] & 1);
    return components;
  }

  /** The VM's components that `keep` keeps, as componentId * 2 + USED, in componentId order. */
  #readWithUsed(row: number, keep: (componentId: number) => boolean): Uint32Array {
    const usedCount = readUsed(this.#store, row);
    const pairs = uint32View(this.#store.vmComponents.getBinaryFast(row));
    componentScratch = grown(componentScratch, pairs.length >>> 1);
    let count = 0;
    for (let k = 0; k < pairs.length; k += 2) {
      const used = sortedHas(usedScratch, usedCount, pairs[k + 1]) ? 1 : 0;
      // A component found in several JARs has consecutive pairs: USED when code came from any of them.
      if (k > 0 && pairs[k] === pairs[k - 2]) {
        if (count > 0 && componentScratch[count - 1] >>> 1 === pairs[k]) componentScratch[count - 1] |= used;
      } else if (keep(pairs[k])) {
        componentScratch[count++] = pairs[k] * 2 + used;
      }
    }
    return componentScratch.subarray(0, count);
  }

  /** Counts the VM's rows and keeps its components with CVEs, USED not known yet. */
  #readComponents(row: number): void {
    const pairs = uint32View(this.#store.vmComponents.getBinaryFast(row));
    const counts = this.encodedCves.cveCounts;
    componentScratch = grown(componentScratch, pairs.length >>> 1);
    let impacted = 0;
    let eventRows = 0;
    let allRows = 0;
    for (let k = 0; k < pairs.length; k += 2) {
      if (k > 0 && pairs[k] === pairs[k - 2]) continue;
      const cves = counts[pairs[k]] ?? 0;
      if (cves > 0) componentScratch[impacted++] = pairs[k] * 2;
      eventRows += cves;
      allRows += cves > 0 ? cves : 1;
    }
    this.impacted.set(row, componentScratch, impacted);
    this.usedKnown[row] = 0;
    this.eventRows[row] = eventRows;
    this.allRows[row] = allRows;
  }

  /** Applies `change` to the posting lists of a host and of the tag pairs in tags[from, from + length). */
  #post(hostId: number, tags: Uint32Array, from: number, length: number, change: (list: RowList) => void): void {
    let hostList = this.byHost.get(hostId);
    if (hostList === undefined) this.byHost.set(hostId, (hostList = []));
    change(hostList);
    for (let k = from; k < from + length; k += 2) {
      let values = this.byTag.get(tags[k]);
      if (values === undefined) this.byTag.set(tags[k], (values = new Map()));
      let list = values.get(tags[k + 1]);
      if (list === undefined) values.set(tags[k + 1], (list = []));
      change(list);
    }
  }

  #insert(list: RowList, row: number): void {
    const at = this.lowerBound(list, this.vmIds[row]);
    if (list[at] !== row) list.splice(at, 0, row);
  }

  #remove(list: RowList, row: number): void {
    const at = this.lowerBound(list, this.vmIds[row]);
    if (list[at] === row) list.splice(at, 1);
  }
}
