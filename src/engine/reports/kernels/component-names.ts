// Every component's name and version by id, and the ids in the component report's default order (name
// ascending, version descending in Maven order), kept by a worker between reports: a component's name and
// version never change once it has an id, so a report reads only the components created since the last
// one instead of the whole table, and ranks them only when there are new ones.
import type { Store } from '../../../storage/store.ts';
import { sortItems } from '../item-order.ts';

export class ComponentNames {
  #names: string[] = [];
  #versions: string[] = [];
  /** Ids below this were read. */
  #known = 0;
  #ranks = new Int32Array(0);

  /** Reads the components created since the last call, as the store's current snapshot has them. */
  update(store: Store): this {
    const next = (store.meta.get('componentNext') as number | undefined) ?? 0;
    if (next <= this.#known) return this;
    for (const { key, value } of store.components.getRange({ start: this.#known, end: next })) {
      this.#names[key] = value.componentName;
      this.#versions[key] = value.componentVersion;
    }
    this.#known = next;
    const byName: { c: number; componentName: string; componentVersion: string }[] = [];
    this.#names.forEach((componentName, c) => byName.push({ c, componentName, componentVersion: this.#versions[c] }));
    sortItems(byName, [{ field: 'componentName', direction: 'ASC', collation: 'string' }, { field: 'componentVersion', direction: 'DESC', collation: 'version' }]);
    this.#ranks = new Int32Array(next);
    byName.forEach(({ c }, rank) => (this.#ranks[c] = rank));
    return this;
  }

  name(id: number): string {
    return this.#names[id];
  }

  version(id: number): string {
    return this.#versions[id];
  }

  /** Component id → its position in the default order (name ascending, version descending in Maven order). */
  get ranks(): Int32Array {
    return this.#ranks;
  }
}
