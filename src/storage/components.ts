// Component ids: each distinct (componentName, componentVersion) gets a dense id of its own.
import type { ComponentItem } from '../ingest/events.ts';
import type { ComponentCve, ComponentRecord } from './records.ts';
import type { Store } from './store.ts';
import { nextId } from './store.ts';

/**
 * The CVEs of a component new to the fleet, computed inside the ingestion transaction (decisions §11), with
 * the batch's receive time as their analysis time: a cluster node replaying the batch computes the same.
 */
export type ComponentMatcher = (component: ComponentRecord, analysisTime: number) => ComponentCve[];

export class ComponentIds {
  readonly #store: Store;
  /** Replaced when the vulnerability data changes. */
  matcher: ComponentMatcher = () => [];
  // Ids never change once assigned, so cached ids stay valid while other processes write. Keyed by the
  // identity, and by the identity and a groupId once the record has that group: a hit needs no other check.
  readonly #ids = new Map<string, number>();

  constructor(store: Store) {
    this.#store = store;
  }

  /** The id of a component, creating it (inside a write transaction); `created` tells whether it is new to the fleet. */
  intern(item: ComponentItem, analysisTime: number): { id: number; created: boolean; cvesChanged: boolean } {
    const identity = componentIdentity(item.componentName, item.componentVersion);
    const cached = this.#ids.get(item.groupId === null ? identity : groupKey(identity, item.groupId));
    if (cached !== undefined) return { id: cached, created: false, cvesChanged: false };
    let id = this.#ids.get(identity) ?? this.#store.componentIds.get(identity);
    let created = false;
    let cvesChanged = false;
    let record: ComponentRecord;
    if (id === undefined) {
      id = nextId(this.#store, 'componentNext', 0);
      created = true;
      this.#store.componentIds.put(identity, id);
      record = { componentName: item.componentName, componentVersion: item.componentVersion, groupId: item.groupId };
      this.#store.components.put(id, record);
      const cves = this.matcher(record, analysisTime);
      if (cves.length > 0) this.#store.componentCves.put(id, cves);
    } else {
      record = this.#store.components.get(id)!;
      // A groupId not reported before completes the record (vulnerability matching uses every one of them).
      if (item.groupId !== null && !groupIdsOf(record).includes(item.groupId)) {
        record = record.groupId === null ? { ...record, groupId: item.groupId } : { ...record, otherGroupIds: [...(record.otherGroupIds ?? []), item.groupId] };
        this.#store.components.put(id, record);
        // The first groupId can narrow the match (a same-named artifact of another group), another one widen it.
        const before = this.#store.componentCves.get(id) ?? [];
        const cves = this.matcher(record, analysisTime);
        if (cves.length > 0) this.#store.componentCves.put(id, cves);
        else this.#store.componentCves.remove(id);
        cvesChanged = cves.map((cve) => cve.cveId).join() !== before.map((cve) => cve.cveId).join();
      }
    }
    this.#ids.set(identity, id);
    for (const groupId of groupIdsOf(record)) this.#ids.set(groupKey(identity, groupId), id);
    return { id, created, cvesChanged };
  }

  get(id: number): ComponentRecord | undefined {
    return this.#store.components.get(id);
  }

  /** After a failed write transaction: ids cached from it were never committed. */
  clearCache(): void {
    this.#ids.clear();
  }
}

/** Every groupId reported for a component, the first one first. */
export function groupIdsOf(record: ComponentRecord): string[] {
  if (record.groupId === null) return [];
  return record.otherGroupIds === undefined ? [record.groupId] : [record.groupId, ...record.otherGroupIds];
}

function groupKey(identity: string, groupId: string): string {
  return `${identity}\u0000${groupId}`;
}

/** A component's key in `componentIds`: its name and version. */
export function componentIdentity(name: string, version: string): string {
  return `${name}\u0000${version}`;
}

/** The id of a component this store knows, by name and version. */
export function findComponentId(store: Store, name: string, version: string): number | undefined {
  return store.componentIds.get(componentIdentity(name, version));
}
