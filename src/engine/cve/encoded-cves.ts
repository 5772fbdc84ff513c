// The components as the CVE index reads them (EncodedCves): each component's CVEs in cveId order, its place in
// (componentName, componentVersion) order, and the component parts of its items, encoded once.
import { compareCodePoints } from '../../collation.ts';
import type { ComponentCve, ComponentRecord } from '../../storage/records.ts';
import type { Store } from '../../storage/store.ts';
import { componentPart } from './event-items.ts';

const NO_CVES: readonly ComponentCve[] = [];

export class EncodedCves {
  readonly #records: (ComponentRecord | undefined)[] = [];
  readonly #cves: (readonly ComponentCve[] | undefined)[] = [];
  /** Component ids in (componentName, componentVersion) code-point order. */
  readonly #ordered: number[] = [];
  /** Per component id, encoded on first use: [USED, PRESENT] parts per CVE, or the one part of a component without CVEs. */
  readonly #parts: (Buffer[] | undefined)[] = [];
  /** CVEs per component id, dense: the per-VM loops over component pairs read only this. */
  cveCounts = new Uint32Array(0);
  /** Position of each component id in (componentName, componentVersion) order. */
  rank = new Uint32Array(0);

  /**
   * Reads the components added since the last call. Ids only grow, and a stored component's CVEs change
   * only by re-matching, after which the index builds new EncodedCves.
   */
  extend(store: Store): void {
    const from = this.#records.length;
    const added: number[] = [];
    for (const { key, value } of store.components.getRange({ start: from })) {
      this.#records[key] = value;
      added.push(key);
    }
    if (added.length === 0) return;
    for (const { key, value } of store.componentCves.getRange({ start: from })) this.#cves[key] = [...value].sort((a, b) => compareCodePoints(a.cveId, b.cveId));
    const size = this.#records.length;
    const counts = new Uint32Array(size);
    counts.set(this.cveCounts);
    for (const id of added) counts[id] = this.#cves[id]?.length ?? 0;
    this.cveCounts = counts;
    // The ids so far are sorted: the sort merges the new ones into them.
    this.#ordered.push(...added);
    this.#ordered.sort((a, b) => this.#compare(a, b));
    const rank = new Uint32Array(size);
    this.#ordered.forEach((id, position) => (rank[id] = position));
    this.rank = rank;
  }

  record(id: number): ComponentRecord | undefined {
    return this.#records[id];
  }

  /** The component id at a position of (componentName, componentVersion) order. */
  idAt(rank: number): number {
    return this.#ordered[rank];
  }

  cves(id: number): readonly ComponentCve[] {
    return this.#cves[id] ?? NO_CVES;
  }

  /** The component part of the item for the CVE at `index` of cves(id), or for the component alone when it has none. */
  part(id: number, index: number, used: boolean): Buffer {
    let parts = this.#parts[id];
    if (parts === undefined) {
      const record = this.#records[id]!;
      const cves = this.cves(id);
      parts = cves.length === 0 ? [componentPart(record, null, null)] : cves.flatMap((cve) => [componentPart(record, cve, 'USED'), componentPart(record, cve, 'PRESENT')]);
      this.#parts[id] = parts;
    }
    return this.cveCounts[id] === 0 ? parts[0] : parts[2 * index + (used ? 0 : 1)];
  }

  #compare(a: number, b: number): number {
    const x = this.#records[a]!;
    const y = this.#records[b]!;
    return compareCodePoints(x.componentName, y.componentName) || compareCodePoints(x.componentVersion, y.componentVersion);
  }
}
