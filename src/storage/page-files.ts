// Report pages as files, one folder per report (decisions §6): a report's hundreds of megabytes of JSON go
// to disk in one copy each, where LMDB copied them into its overflow pages first and kept them in its map.
import { closeSync, constants, fsyncSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

/** Report ids are UUIDs; anything else never names a path. */
const REPORT_ID = /^[0-9A-Za-z-]{1,100}$/;

const isMissing = (error: unknown): boolean => (error as NodeJS.ErrnoException).code === 'ENOENT';

/** `<dataDir>/pages/<reportId>/<page>.json`, and beside it `<page>.msgpack` once a client asked for msgpack. */
export class PageFiles {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  /**
   * Stores a page's JSON, or with `offset` a later part of it (the bytes before are written already);
   * resolves once the file is on disk (its name is, once `sync` has run). Four steps
   * on libuv's threads (open, one write, fsync, close): a report worker busy encoding starts the next step
   * of a write only when it yields, so each step saved keeps its pages in flight moving.
   */
  async putJson(reportId: string, page: number, json: Uint8Array, offset = 0): Promise<void> {
    const folder = this.#folder(reportId);
    const path = join(folder, `${page}.json`);
    // A page's first bytes replace the file; a later part's go at their offset, in a file made if missing:
    // a backup skips the folder of a report deleted while it copies, and that delete, later in the log,
    // removes what the remaining parts write.
    const flags = offset === 0 ? 'w' : constants.O_WRONLY | constants.O_CREAT;
    // The report's first page makes its folder.
    const file = await open(path, flags).catch(async (error: unknown) => {
      if (!isMissing(error)) throw error;
      await mkdir(folder, { recursive: true });
      return open(path, flags);
    });
    try {
      for (let at = 0; at < json.length; ) at += (await file.write(json, at, json.length - at, offset + at)).bytesWritten;
      await file.sync();
    } finally {
      await file.close();
    }
  }

  /**
   * Puts the names of a report's page files on disk: before its final state is stored. A report without
   * pages (deleted meanwhile) has nothing to sync.
   */
  async sync(reportId: string): Promise<void> {
    try {
      await syncPath(this.#folder(reportId));
    } catch (error) {
      if (isMissing(error)) return;
      throw error;
    }
    // The report's folder is a new name in the pages folder.
    await syncPath(this.dir);
  }

  /** The same, synchronously: for the migration that moves pages out of LMDB. */
  putJsonSync(reportId: string, page: number, json: Uint8Array): void {
    const folder = this.#folder(reportId);
    mkdirSync(folder, { recursive: true });
    const file = openSync(join(folder, `${page}.json`), 'w');
    try {
      for (let at = 0; at < json.length; ) at += writeSync(file, json, at);
      fsyncSync(file);
    } finally {
      closeSync(file);
    }
    const names = openSync(folder, 'r');
    try {
      fsyncSync(names);
    } finally {
      closeSync(names);
    }
  }

  /**
   * A page's JSON, or undefined when the report has no such page. Read off the calling thread: a page the
   * kernel has evicted costs a disk read, which must not hold the service's event loop.
   */
  json(reportId: string, page: number): Promise<Buffer | undefined> {
    return this.#read(reportId, page, 'json');
  }

  /** A page's msgpack kept by `putMsgpack`, or undefined. */
  msgpack(reportId: string, page: number): Promise<Buffer | undefined> {
    return this.#read(reportId, page, 'msgpack');
  }

  /**
   * Keeps a page's msgpack beside its JSON, written whole under another name and renamed, so that a read
   * never sees half of it; nothing is kept for a report deleted meanwhile (its folder is gone).
   */
  async putMsgpack(reportId: string, page: number, msgpack: Uint8Array): Promise<void> {
    const folder = this.#folder(reportId);
    const temporary = join(folder, `${page}.msgpack.partial`);
    const file = await open(temporary, 'w');
    try {
      await file.writeFile(msgpack);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temporary, join(folder, `${page}.msgpack`));
  }

  /** Removes a report's pages; nothing to do when it has none. */
  async remove(reportId: string): Promise<void> {
    await rm(this.#folder(reportId), { recursive: true, force: true });
  }

  #folder(reportId: string): string {
    if (!REPORT_ID.test(reportId)) throw new Error(`'${reportId.slice(0, 64)}' is not a report id`);
    return join(this.dir, reportId);
  }

  /**
   * The file in one read on libuv's threads: readFile reads 512 KiB at a time, each step waiting for this
   * thread's event loop, so a 5.5 MB page took 10 to 60 ms on a busy cluster node instead of one step.
   */
  async #read(reportId: string, page: number, kind: 'json' | 'msgpack'): Promise<Buffer | undefined> {
    let file: FileHandle;
    try {
      file = await open(join(this.#folder(reportId), `${page}.${kind}`), 'r');
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
    try {
      const { size } = await file.stat();
      const bytes = Buffer.allocUnsafe(size);
      let length = 0;
      while (length < size) {
        const { bytesRead } = await file.read(bytes, length, size - length, length);
        if (bytesRead === 0) break;
        length += bytesRead;
      }
      return length === size ? bytes : bytes.subarray(0, length);
    } finally {
      await file.close();
    }
  }
}

/**
 * Puts a folder's new names on disk (a page whose file is synced could otherwise lose its name in a crash), or,
 * given a file, its content.
 */
export async function syncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
