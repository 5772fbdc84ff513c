// Schema 3 → 4: report pages move out of LMDB (`pageJson`, and `pages`, the msgpack kept at a client's first
// msgpack GET) into files (page-files.ts), once, when a version that reads them there first opens an older
// data directory. The msgpack copies are not moved: they are made again when asked for.
import type { Database, RootDatabase } from 'lmdb';
import type { PageFiles } from './page-files.ts';

/** What the migration reads and writes of the store that store.ts is opening. */
interface MigratedStore {
  env: RootDatabase;
  meta: Database<number | string, string>;
  pageFiles: PageFiles;
}

/** Pages moved between progress lines. */
const PAGES_PER_STEP = 100;

/**
 * Writes every page to its file (each synced), then empties the LMDB databases and sets the version in one
 * transaction that first checks it: a migration cut short leaves the pages in LMDB, and running it again
 * writes the same files.
 */
export function migrateReportPagesToFiles(store: MigratedStore, progress: (line: string) => void): void {
  if (store.meta.get('schemaVersion') !== 3) return;
  const started = performance.now();
  const pageJson = store.env.openDB<Buffer, [string, number]>({ name: 'pageJson', encoding: 'binary' });
  const msgpack = store.env.openDB<Buffer, [string, number]>({ name: 'pages', encoding: 'binary' });
  const total = (pageJson.getStats() as { entryCount: number }).entryCount;
  progress(`migrating the data directory from schema 3 to 4: ${total} report pages from LMDB to ${store.pageFiles.dir}`);
  let moved = 0;
  for (const { key, value } of pageJson.getRange()) {
    store.pageFiles.putJsonSync(key[0], key[1], value);
    if (++moved % PAGES_PER_STEP === 0) progress(`migrating: ${moved} of ${total} report pages written`);
  }
  const keys = [...pageJson.getKeys(), ...msgpack.getKeys()];
  store.env.transactionSync(() => {
    if (store.meta.get('schemaVersion') !== 3) return;
    for (const key of keys) {
      pageJson.remove(key);
      msgpack.remove(key);
    }
    store.meta.put('schemaVersion', 4);
  });
  progress(`migrated to schema 4 in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
