// String dictionary: strings become dense integer ids at ingestion so aggregation reads integers only.
import type { Store } from './store.ts';
import { nextId } from './store.ts';

/** Id 0 stands for a missing value (null), never for a string. */
export const NONE = 0;

export class Dictionary {
  readonly #store: Store;
  // An id never changes once assigned, so cached pairs stay valid even when other processes write.
  readonly #ids = new Map<string, number>();
  readonly #strings: (string | undefined)[] = [];

  /** `lookup` as one stable function: filter kernels memoise per lookup function. */
  readonly lookupFunction: (id: number) => string | null;

  constructor(store: Store) {
    this.#store = store;
    this.lookupFunction = (id) => this.lookup(id);
  }

  /** The id of a string, creating it. Call inside a write transaction. */
  intern(value: string | null | undefined): number {
    if (value === null || value === undefined) return NONE;
    const cached = this.#ids.get(value);
    if (cached !== undefined) return cached;
    let id = this.#store.dictIds.get(value);
    if (id === undefined) {
      id = nextId(this.#store, 'dictNext');
      this.#store.dictIds.put(value, id);
      this.#store.dictStrings.put(id, value);
    }
    this.#remember(value, id);
    return id;
  }

  /** The id of a string if it exists, without creating it. */
  find(value: string): number | undefined {
    const cached = this.#ids.get(value);
    if (cached !== undefined) return cached;
    const id = this.#store.dictIds.get(value);
    if (id !== undefined) this.#remember(value, id);
    return id;
  }

  lookup(id: number): string | null {
    if (id === NONE) return null;
    const cached = this.#strings[id];
    if (cached !== undefined) return cached;
    let value = this.#store.dictStrings.get(id);
    if (value === undefined) {
      // A worker's fleet columns may name a string committed after its read snapshot began: renew it once.
      this.#store.env.resetReadTxn();
      value = this.#store.dictStrings.get(id);
    }
    if (value === undefined) throw new Error(`dictionary id ${id} is unknown`);
    this.#remember(value, id);
    return value;
  }

  /** After a failed write transaction: ids cached from it were never committed and may be reused. */
  clearCache(): void {
    this.#ids.clear();
    this.#strings.length = 0;
  }

  #remember(value: string, id: number): void {
    this.#ids.set(value, id);
    this.#strings[id] = value;
  }
}
