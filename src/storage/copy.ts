// A consistent copy of a data directory, made by the process that has its store open (`jvmlens backup`
// through the service's inbox, a cluster node's copy for a node the log was truncated past). A second
// process that opens a store beside its writer can make that writer lose committed transactions (see
// writer-lock.ts), and LMDB's own copy fails on a file mapped in chunks (EFAULT, or a compacting copy's
// MDB_TXN_FULL), so the copy reads the file as LMDB's plain copy does: a read transaction keeps the pages of
// the last commit from being reused, the two meta pages are read while no commit can run, and the rest of
// the file is copied as it is; pages no commit reaches may hold anything.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { copyFile, cp, mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { syncPath } from './page-files.ts';
import { PAGES_DIR, STORE_FILE } from './store.ts';
import type { Store } from './store.ts';

/** LMDB's two meta pages open its file: the newer names the root of the last commit. */
const META_PAGES = 2;
const PARTIAL = '.partial';

const isMissing = (error: unknown): boolean => (error as NodeJS.ErrnoException).code === 'ENOENT';

/**
 * Copies the store's data directory into `target` (made if missing, expected empty): the LMDB file as of the
 * last commit when the copy starts, then the report pages; the LMDB file takes its name last. Returns the
 * bytes of the LMDB file copied. A copy that fails removes what it wrote.
 */
export async function copyStore(store: Store, target: string): Promise<number> {
  await mkdir(target, { recursive: true });
  // Named as a store only once whole: a copy cut short (the process ended, the disk full) is no store to start on.
  const partial = join(target, `${STORE_FILE}${PARTIAL}`);
  try {
    const size = await copyLastCommit(store, partial);
    await copyPages(store, join(target, PAGES_DIR));
    await syncTree(join(target, PAGES_DIR));
    await rename(partial, join(target, STORE_FILE));
    await syncPath(target);
    return size;
  } catch (error) {
    await rm(partial, { force: true });
    await rm(join(target, PAGES_DIR), { recursive: true, force: true });
    throw error;
  }
}

/** The LMDB file as of its last commit, into `copied`; returns its size. */
async function copyLastCommit(store: Store, copied: string): Promise<number> {
  const pageSize = (store.env.getStats() as { pageSize: number }).pageSize;
  const reading = store.env.useReadTransaction();
  try {
    const metas = Buffer.alloc(META_PAGES * pageSize);
    const file = openSync(store.file, 'r');
    let size: number;
    try {
      // A write transaction of its own holds LMDB's write lock: no commit moves the metas or grows the file meanwhile.
      size = store.env.transactionSync(() => {
        readSync(file, metas, 0, metas.length, 0);
        return fstatSync(file).size;
      });
    } finally {
      closeSync(file);
    }
    // The file as it is now, its meta pages as they were: every page the last commit reaches stays unchanged
    // while the read transaction lasts; the pages written since are beyond its reach.
    await copyFile(store.file, copied);
    const out = await open(copied, 'r+');
    try {
      await out.write(metas, 0, metas.length, 0);
      await out.truncate(size);
      await out.sync();
    } finally {
      await out.close();
    }
    return size;
  } finally {
    reading.done();
  }
}

/** The copied pages' files and names on disk before the LMDB file is named: it holds their reports as finished. */
async function syncTree(path: string): Promise<void> {
  const entries = await readdir(path, { withFileTypes: true }).catch((error: unknown) => (isMissing(error) ? [] : Promise.reject(error)));
  for (const entry of entries) {
    await (entry.isDirectory() ? syncTree(join(path, entry.name)) : syncPath(join(path, entry.name)));
  }
  if (entries.length > 0) await syncPath(path);
}

/**
 * After the LMDB copy, so that every page of a report it holds as finished is there: a page is on disk before
 * its report's final record. A report deleted meanwhile may be missing or half copied; a cluster node started
 * on the copy applies that delete from the log.
 */
async function copyPages(store: Store, target: string): Promise<void> {
  const reports = await readdir(store.pageFiles.dir).catch((error: unknown) => (isMissing(error) ? [] : Promise.reject(error)));
  for (const reportId of reports) {
    await cp(join(store.pageFiles.dir, reportId), join(target, reportId), { recursive: true }).catch((error: unknown) => {
      if (!isMissing(error)) throw error;
    });
  }
}
