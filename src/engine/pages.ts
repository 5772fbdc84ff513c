// Report pages: items cut into pages whose JSON body stays under the cap, stored as msgpack in LMDB (decisions §6).
import { pack } from 'msgpackr';
import { ApiError } from '../errors.ts';
import type { Store } from '../storage/store.ts';

/** Bytes of `value` as JSON. */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}

/**
 * Groups consecutive items by the values of `fields` into the nesting of interface §2.4:
 * `{field: value, data: [...]}` per level, the items themselves innermost.
 */
export function nest(items: readonly Record<string, unknown>[], fields: readonly string[]): unknown[] {
  if (fields.length === 0) return [...items];
  const [field, ...rest] = fields;
  const levels: { [key: string]: unknown; data: unknown[] }[] = [];
  let run: Record<string, unknown>[] = [];
  const close = () => {
    if (run.length > 0) levels.push({ [field]: run[0][field], data: nest(run, rest) });
    run = [];
  };
  for (const item of items) {
    if (run.length > 0 && run[0][field] !== item[field]) close();
    run.push(item);
  }
  close();
  return levels;
}

export interface PageTotals {
  totalCount: number;
  totalPages: number;
}

/**
 * Cuts items into pages as they come. A page's JSON body is bounded by `reserve` (the envelope
 * without data) plus the items, commas and nesting wrappers, counted as an upper bound.
 */
export class PageWriter {
  readonly #store: Store;
  readonly #reportId: string;
  readonly #budget: number;
  readonly #nesting: readonly string[];
  #items: Record<string, unknown>[] = [];
  #bytes = 0;
  #previous: Record<string, unknown> | null = null;
  #pages = 0;
  #count = 0;
  #writes: Promise<boolean>[] = [];

  constructor(store: Store, reportId: string, pageBytes: number, reserve: number, nesting: readonly string[] = []) {
    this.#store = store;
    this.#reportId = reportId;
    this.#budget = pageBytes - reserve;
    this.#nesting = nesting;
  }

  add(item: Record<string, unknown>): void {
    let bytes = jsonBytes(item) + 1;
    // Wrappers opened for this item: from the first group level where it differs from the previous one.
    const previous = this.#items.length === 0 ? null : this.#previous;
    let level = 0;
    if (previous !== null) while (level < this.#nesting.length && previous[this.#nesting[level]] === item[this.#nesting[level]]) level++;
    for (let l = level; l < this.#nesting.length; l++) bytes += jsonBytes({ [this.#nesting[l]]: item[this.#nesting[l]], data: [] }) + 1;
    if (this.#items.length > 0 && this.#bytes + bytes > this.#budget) {
      this.#flush();
      this.add(item);
      return;
    }
    if (this.#items.length === 0 && 2 + bytes > this.#budget) {
      throw new ApiError(500, 'ITEM_TOO_LARGE', `one report item is ${bytes} bytes of JSON, more than a page holds (${this.#budget} bytes besides the envelope)`);
    }
    if (this.#items.length === 0) this.#bytes = 2;
    this.#items.push(item);
    this.#bytes += bytes;
    this.#previous = item;
    this.#count++;
  }

  #flush(): void {
    const data = nest(this.#items, this.#nesting);
    this.#writes.push(this.#store.pages.put([this.#reportId, this.#pages], pack(data)));
    this.#pages++;
    this.#items = [];
    this.#bytes = 0;
  }

  /** Writes the last page (page 0 exists even when empty) and waits until all are committed. */
  async finish(): Promise<PageTotals> {
    if (this.#items.length > 0 || this.#pages === 0) this.#flush();
    await Promise.all(this.#writes);
    return { totalCount: this.#count, totalPages: this.#pages };
  }
}

/** Writes an empty page 0: a failed report still has one (decisions §6). */
export async function writeEmptyPage(store: Store, reportId: string): Promise<void> {
  await store.pages.put([reportId, 0], pack([]));
}

export async function deletePages(store: Store, reportId: string): Promise<void> {
  const removals: Promise<boolean>[] = [];
  for (const key of store.pages.getKeys({ start: [reportId], end: [reportId, Number.MAX_SAFE_INTEGER] })) removals.push(store.pages.remove(key));
  await Promise.all(removals);
}
