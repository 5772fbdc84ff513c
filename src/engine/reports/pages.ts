// Report pages: items cut into pages whose JSON body stays under the cap, stored as JSON files (decisions §6,
// storage/page-files.ts). A page's msgpack is made from its JSON when a client first asks for it.
import { pack } from 'msgpackr';
import type { Store } from '../../storage/store.ts';
import { writeJsonValue } from './encoded-items.ts';
import type { EncodedItems, ItemSink } from './encoded-items.ts';
import { ByteSink } from '../byte-sink.ts';

/**
 * The rule every page cutter follows (items as objects, encoded chunks, or written in place), so that they
 * all cut at the same items: a page's JSON is `[`, the items with a comma after each but the last, `]`.
 */
class PageBudget {
  /** JSON bytes a page's data may take: the page size less the envelope's reserve. */
  readonly bytes: number;

  constructor(pageBytes: number, reserve: number) {
    this.bytes = pageBytes - reserve;
  }

  /**
   * Whether an item of `size` bytes (its comma counted) joins a page of `used` bytes (its brackets and the
   * commas counted) that already has `count` items; throws for an item no page holds.
   */
  fits(used: number, size: number, count: number): boolean {
    if (used + size <= this.bytes) return true;
    if (count === 0) throw new Error(`one report item is ${size} bytes of JSON, more than a page holds (${this.bytes} bytes besides the envelope)`);
    return false;
  }
}

/** What an empty page's data takes: its brackets. */
const EMPTY_PAGE_BYTES = 2;

/** Pages a writer has in flight at most: each holds its buffer until its file is written. */
const PAGES_IN_FLIGHT = 4;

/**
 * A writer's page writes under way, and the buffers of those written, to fill again: a report's hundreds
 * of megabytes of pages pass through a few buffers instead of becoming garbage for the collector.
 */
class PageWrites {
  readonly #writes: Promise<void>[] = [];
  /** Writes `settle` waited for. */
  #settled = 0;
  readonly #free: Buffer[] = [];

  /** A page's write, reading `buffer` until it is done. */
  add(write: Promise<void>, buffer: Buffer): void {
    this.#writes.push(write);
    write.then(() => this.#free.push(buffer), () => undefined);
  }

  /** A written page's buffer, if there is one. */
  freeBuffer(): Buffer | undefined {
    return this.#free.pop();
  }

  /** Whether more than PAGES_IN_FLIGHT pages may still be in flight. */
  get full(): boolean {
    return this.#writes.length - this.#settled > PAGES_IN_FLIGHT;
  }

  /** Waits until at most PAGES_IN_FLIGHT pages are in flight. */
  async settle(): Promise<void> {
    const until = this.#writes.length - PAGES_IN_FLIGHT;
    if (until <= this.#settled) return;
    await Promise.all(this.#writes.slice(this.#settled, until));
    this.#settled = until;
  }

  /** Waits for every write; a failed one throws. */
  async done(): Promise<void> {
    await Promise.all(this.#writes);
  }

  /** Waits for every write, failed or not. */
  async stopped(): Promise<void> {
    await Promise.allSettled(this.#writes);
  }
}

export interface PageTotals {
  totalCount: number;
  totalPages: number;
}

/**
 * Where a kernel gives a report's items in order: as objects, or as their JSON bytes and their nesting
 * fields' values; it awaits `settle()` whenever `mustSettle`, so that only a few pages wait for the disk.
 */
export type ItemWriter = Pick<PageWriter, 'add' | 'addBytes' | 'mustSettle' | 'settle'>;

/** `,"data":[`: what follows a nesting level's value. */
const DATA_OPENING = Buffer.from(',"data":[');
/** A level of nesting whose value is undefined has no key (JSON.stringify drops it). */
const KEYLESS_OPENING = Buffer.from('{"data":[');

/**
 * Cuts items into pages as they come, writing their JSON bytes into the page being filled. A page's JSON
 * body is bounded by `reserve` (the envelope without data) plus the items, commas and nesting wrappers,
 * counted as an upper bound before an item is written.
 */
export class PageWriter {
  readonly #store: Store;
  readonly #reportId: string;
  readonly #budget: PageBudget;
  readonly #nesting: readonly string[];
  /** `{"field":`, the start of each nesting level's wrapper. */
  readonly #levelKeys: readonly Buffer[];
  /** The page being filled (`[` and the items so far), made at its first item. */
  #page: ByteSink | null = null;
  #items = 0;
  /** The page's JSON bytes as counted: written, plus the closings its open levels will take. */
  #bytes = 0;
  /** The nesting fields' values of the last item added. */
  #previous: readonly unknown[] = [];
  /** The wrappers the item being added opens. */
  readonly #openings = new ByteSink(1 << 10);
  #pages = 0;
  #count = 0;
  readonly #writes = new PageWrites();
  /** An object item's JSON, as bytes for addBytes. */
  readonly #scratch = new ByteSink(1 << 16);

  constructor(store: Store, reportId: string, pageBytes: number, reserve: number, nesting: readonly string[] = []) {
    this.#store = store;
    this.#reportId = reportId;
    this.#budget = new PageBudget(pageBytes, reserve);
    this.#nesting = nesting;
    this.#levelKeys = nesting.map((field) => Buffer.from(`{${JSON.stringify(field)}:`));
  }

  add(item: Record<string, unknown>): void {
    const json = JSON.stringify(item);
    const scratch = this.#scratch;
    scratch.length = 0;
    scratch.reserve(json.length * 3);
    scratch.utf8(json);
    this.addBytes(scratch.written(), this.#nesting.map((field) => item[field]));
  }

  /**
   * An item given as its JSON bytes (what JSON.stringify gives for it, UTF-8) and the values of its
   * nesting fields, in nesting order: a kernel that writes items as bytes needs no objects. `json` is
   * copied: the caller may reuse its buffer.
   */
  addBytes(json: Uint8Array, nestingValues: readonly unknown[]): void {
    const levels = this.#nesting.length;
    // Wrappers opened for this item: from the first group level where it differs from the previous one.
    let level = 0;
    if (this.#items > 0) while (level < levels && this.#previous[level] === nestingValues[level]) level++;
    const openings = this.#openings;
    openings.length = 0;
    for (let l = level; l < levels; l++) {
      // `{"field":value,"data":[`, as JSON.stringify writes a level of nesting (interface §2.4; an undefined value has no key).
      const value = nestingValues[l];
      if (value === undefined) {
        openings.reserve(KEYLESS_OPENING.length);
        openings.copy(KEYLESS_OPENING);
        continue;
      }
      openings.reserve(this.#levelKeys[l].length);
      openings.copy(this.#levelKeys[l]);
      writeJsonValue(openings, value);
      openings.reserve(DATA_OPENING.length);
      openings.copy(DATA_OPENING);
    }
    // The item, its comma, its openings, and for each its `]}` and comma.
    const bytes = json.length + 1 + openings.length + 3 * (levels - level);
    if (!this.#budget.fits(this.#items === 0 ? EMPTY_PAGE_BYTES : this.#bytes, bytes, this.#items)) {
      this.#flush();
      this.addBytes(json, nestingValues);
      return;
    }
    const page = (this.#page ??= this.#newPage());
    // Doubling, but never past all the page may take: a full page's buffer is its bound, not 8 MB.
    const needed = page.length + bytes + 2 * levels;
    if (needed > page.bytes.length) page.growTo(Math.max(needed, Math.min(this.#budget.bytes, 2 * page.bytes.length)));
    if (this.#items === 0) this.#bytes = EMPTY_PAGE_BYTES;
    else {
      // Close the levels this item leaves, then separate it from what came before at the level it joins.
      for (let l = level; l < levels; l++) page.byte(0x5d), page.byte(0x7d);
      page.byte(0x2c);
    }
    page.copy(openings.written());
    page.copy(json);
    this.#items++;
    this.#bytes += bytes;
    this.#previous = nestingValues;
    this.#count++;
  }

  /**
   * Most reports are a few kilobytes: a page starts in a small buffer (a page-sized one for every report
   * cost the team report ~5 ms more) and grows with it, up to its bound (a report of 400k items by host
   * fills 14 pages before the event loop writes the first: doubling past the bound held 8 MB each).
   */
  #newPage(): ByteSink {
    const page = new ByteSink(this.#writes.freeBuffer() ?? Math.min(this.#budget.bytes, 1 << 16));
    page.byte(0x5b);
    return page;
  }

  #flush(): void {
    const page = (this.#page ??= this.#newPage());
    page.reserve(2 * this.#nesting.length + 1);
    if (this.#items > 0) for (let l = 0; l < this.#nesting.length; l++) page.byte(0x5d), page.byte(0x7d);
    page.byte(0x5d);
    this.#writes.add(putPage(this.#store, this.#reportId, this.#pages, page.written()), page.bytes);
    this.#pages++;
    this.#page = null;
    this.#items = 0;
    this.#bytes = 0;
  }

  /**
   * Whether more than a few pages wait for the disk: a kernel writing items in one go would otherwise fill
   * every page before the event loop turns to write the first (a report of 400k items by host: 14 pages).
   */
  get mustSettle(): boolean {
    return this.#writes.full;
  }

  /** Waits until no more than a few pages are being written; their buffers are then reused. */
  settle(): Promise<void> {
    return this.#writes.settle();
  }

  /** Writes the last page (page 0 exists even when empty) and waits until all are on disk. */
  async finish(): Promise<PageTotals> {
    if (this.#items > 0 || this.#pages === 0) this.#flush();
    await this.#writes.done();
    return { totalCount: this.#count, totalPages: this.#pages };
  }
}

/** Up to this many items, a report is first tried as one page: most reports are one page. */
const ONE_PAGE_ITEMS = 50_000;

/**
 * Writes a report's items (not nested) as pages. A report whose JSON fits one page is encoded once; a
 * longer one goes through PageWriter, which measures each item to cut pages.
 */
export async function writeItemPages(store: Store, reportId: string, pageBytes: number, reserve: number, items: readonly Record<string, unknown>[]): Promise<PageTotals> {
  if (items.length <= ONE_PAGE_ITEMS) {
    const json = Buffer.from(JSON.stringify(items));
    if (json.length <= pageBytes - reserve) {
      await putPage(store, reportId, 0, json);
      return { totalCount: items.length, totalPages: 1 };
    }
  }
  const writer = new PageWriter(store, reportId, pageBytes, reserve);
  for (const item of items) {
    writer.add(item);
    if (writer.mustSettle) await writer.settle();
  }
  return writer.finish();
}

/**
 * Stores one page's JSON, or with `offset` a later part of it (a cluster node stores the pages its report
 * coordinator published, a large one in parts).
 */
export function putPage(store: Store, reportId: string, page: number, json: Uint8Array, offset = 0): Promise<void> {
  return store.pageFiles.putJson(reportId, page, json, offset);
}

/**
 * A page's data as msgpack: made from its JSON when a client first asks for msgpack, then kept beside it,
 * so that a report does not pay at generation for an encoding most clients never read. Undefined when the
 * page is gone.
 */
export async function msgpackPage(store: Store, reportId: string, page: number): Promise<Buffer | undefined> {
  const kept = await store.pageFiles.msgpack(reportId, page);
  if (kept !== undefined) return kept;
  const json = await store.pageFiles.json(reportId, page);
  if (json === undefined) return undefined;
  // Copied: msgpackr packs into a buffer it reuses for the next value.
  const msgpack = Buffer.from(pack(JSON.parse(json.toString('utf8'))));
  // Not kept when it cannot be (the report was deleted meanwhile): made again at the next ask.
  store.pageFiles.putMsgpack(reportId, page, msgpack).catch(() => undefined);
  return msgpack;
}

/**
 * Cuts items encoded by the partitions (in report order, partition by partition as they come) into pages
 * under the same bound as PageWriter, copying runs of bytes: the fast path of a report whose partitions
 * give final items. Pages go to disk (libuv's threads) as they fill, so disk writes overlap the partitions
 * still running.
 */
export class EncodedPageWriter {
  readonly #store: Store;
  readonly #reportId: string;
  readonly #budget: PageBudget;
  readonly #writes: Promise<void>[] = [];
  #pages = 0;
  #totalCount = 0;
  // The current page: runs [from, to) of items of chunks, its item count and JSON bytes (brackets and commas included).
  #runs: { chunk: EncodedItems; from: number; to: number }[] = [];
  #count = 0;
  #bytes = EMPTY_PAGE_BYTES;
  readonly #slots: PageSlot[] = [];

  constructor(store: Store, reportId: string, pageBytes: number, reserve: number) {
    this.#store = store;
    this.#reportId = reportId;
    this.#budget = new PageBudget(pageBytes, reserve);
  }

  async add(chunk: EncodedItems): Promise<void> {
    let from = 0;
    for (let k = 0; k < chunk.count; k++) {
      const size = chunk.jsonEnds[k] - (k === 0 ? 0 : chunk.jsonEnds[k - 1] + 1) + 1;
      if (!this.#budget.fits(this.#bytes, size, this.#count)) {
        if (k > from) this.#runs.push({ chunk, from, to: k });
        from = k;
        await this.#flush();
        // On an empty page: the item fits, or no page holds it.
        this.#budget.fits(this.#bytes, size, 0);
      }
      this.#bytes += size;
      this.#count++;
    }
    if (chunk.count > from) this.#runs.push({ chunk, from, to: chunk.count });
    this.#totalCount += chunk.count;
  }

  /** Writes the last page (page 0 exists even when empty) and waits until all are on disk. */
  async finish(): Promise<PageTotals> {
    if (this.#count > 0) await this.#flush();
    if (this.#pages === 0) this.#writes.push(emptyPage(this.#store, this.#reportId));
    await Promise.all(this.#writes);
    return { totalCount: this.#totalCount, totalPages: Math.max(1, this.#pages) };
  }

  /** Waits for the pages in flight and writes no more: for a report whose pages are cut again or dropped. */
  async abandon(): Promise<void> {
    await Promise.allSettled(this.#writes);
  }

  async #flush(): Promise<void> {
    const slot = (this.#slots[this.#pages % PAGES_IN_FLIGHT] ??= { json: EMPTY, written: Promise.resolve() });
    // A page's buffer is read until its file is written: a slot is reused once its last page is on disk.
    await slot.written;
    if (slot.json.length < this.#bytes - 1) slot.json = Buffer.allocUnsafeSlow(this.#bytes - 1);
    const { json } = slot;
    let at = 0;
    json[at++] = 0x5b;
    for (const { chunk, from, to } of this.#runs) {
      const jsonStart = from === 0 ? 0 : chunk.jsonEnds[from - 1] + 1;
      // Each item's JSON is followed by its comma: a run's slice holds the commas between its items.
      json.set(chunk.json.subarray(jsonStart, chunk.jsonEnds[to - 1] + 1), at);
      at += chunk.jsonEnds[to - 1] + 1 - jsonStart;
    }
    json[at - 1] = 0x5d;
    const write = putPage(this.#store, this.#reportId, this.#pages, json.subarray(0, at));
    this.#writes.push(write);
    slot.written = write;
    // Awaited when the slot comes round again, or through #writes at the end; until then not unhandled.
    slot.written.catch(() => undefined);
    this.#pages++;
    this.#runs = [];
    this.#count = 0;
    this.#bytes = EMPTY_PAGE_BYTES;
  }
}

const EMPTY = Buffer.alloc(0);

/** The buffer of one page in flight: a report writes hundreds of MB of pages through a few of them. */
interface PageSlot {
  json: Buffer;
  written: Promise<unknown>;
}

/** Room past a page's bound in its buffer, for the item that overflows it. */
const OVERFLOW_BYTES = 64 << 10;

/**
 * Items written straight into pages, for a report's only partition: the encoder writes into the page
 * being filled, which is closed before the item that would take it past the bound (PageWriter's) and
 * written to its file, which gives its buffer back for a later page. No chunk of items is copied into
 * pages, and a report's hundreds of megabytes of JSON pass through a few buffers instead of becoming
 * garbage for the collector.
 */
export class PagedItems implements ItemSink {
  json: ByteSink;
  moves = 0;
  readonly #store: Store;
  readonly #reportId: string;
  readonly #budget: PageBudget;
  /** Items in the page being filled, and where its last item starts. */
  #count = 0;
  #itemStart = 1;
  #totalCount = 0;
  #pages = 0;
  /** Pages closed and not yet written, each with the buffer it views. */
  readonly #closed: { page: Buffer; buffer: Buffer }[] = [];
  readonly #writes = new PageWrites();

  constructor(store: Store, reportId: string, pageBytes: number, reserve: number) {
    this.#store = store;
    this.#reportId = reportId;
    this.#budget = new PageBudget(pageBytes, reserve);
    this.json = this.#newPage();
  }

  endItem(): void {
    // The page so far takes its items, their commas and its brackets; the item takes its bytes and a comma.
    if (!this.#budget.fits(this.#itemStart + 1, this.json.length - this.#itemStart + 1, this.#count)) {
      // The item goes to the next page; the comma before it closes this one.
      const item = this.json.bytes.subarray(this.#itemStart, this.json.length);
      const full = this.json;
      full.bytes[this.#itemStart - 1] = 0x5d;
      this.#closed.push({ page: full.bytes.subarray(0, this.#itemStart), buffer: full.bytes });
      this.json = this.#newPage();
      this.json.reserve(item.length);
      this.json.copy(item);
      this.#count = 0;
      this.moves++;
    }
    this.json.reserve(1);
    this.json.byte(0x2c);
    this.#itemStart = this.json.length;
    this.#count++;
    this.#totalCount++;
  }

  /** Whether pages are closed, for `write`. */
  get ready(): boolean {
    return this.#closed.length > 0;
  }

  /** Starts writing the closed pages; waits while more than a few are in flight. */
  async write(): Promise<void> {
    for (const { page, buffer } of this.#closed.splice(0)) this.#writes.add(putPage(this.#store, this.#reportId, this.#pages++, page), buffer);
    await this.#writes.settle();
  }

  /** Writes the last page (page 0 exists even when empty) and waits until all are on disk. */
  async finish(): Promise<PageTotals> {
    const { json } = this;
    if (this.#count > 0) json.bytes[json.length - 1] = 0x5d;
    if (this.#count > 0 || this.#pages + this.#closed.length === 0) {
      if (this.#count === 0) json.byte(0x5d);
      this.#closed.push({ page: json.bytes.subarray(0, json.length), buffer: json.bytes });
    }
    await this.write();
    await this.#writes.done();
    return { totalCount: this.#totalCount, totalPages: this.#pages };
  }

  /** Waits for the pages in flight and writes no more: for a report whose pages are dropped. */
  async abandon(): Promise<void> {
    this.#closed.length = 0;
    await this.#writes.stopped();
  }

  /**
   * A page to fill: `[`, then items each followed by a comma. Its buffer holds the item that overflows the
   * page too, unless that one is very long: growing it would copy the whole page.
   */
  #newPage(): ByteSink {
    const json = new ByteSink(this.#writes.freeBuffer() ?? Buffer.allocUnsafeSlow(this.#budget.bytes + OVERFLOW_BYTES));
    json.byte(0x5b);
    return json;
  }
}

/** All pages of encoded chunks at once. */
export async function writeEncodedPages(store: Store, reportId: string, pageBytes: number, reserve: number, chunks: readonly EncodedItems[]): Promise<PageTotals> {
  const writer = new EncodedPageWriter(store, reportId, pageBytes, reserve);
  for (const chunk of chunks) await writer.add(chunk);
  return writer.finish();
}

function emptyPage(store: Store, reportId: string): Promise<void> {
  return putPage(store, reportId, 0, Buffer.from('[]'));
}

/** Writes an empty page 0: a failed report still has one (decisions §6). */
export async function writeEmptyPage(store: Store, reportId: string): Promise<void> {
  await emptyPage(store, reportId);
}

export function deletePages(store: Store, reportId: string): Promise<void> {
  return store.pageFiles.remove(reportId);
}
