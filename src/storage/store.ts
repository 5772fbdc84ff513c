// The LMDB environment and its named databases: the one place that knows how data is laid out on disk.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open } from 'lmdb';
import type { Database, DatabaseOptions, RootDatabase } from 'lmdb';
import type { Vulnerability } from '../vuln/osv.ts';
import { classCodeEncoder, fleetClassCodeEncoder } from './class-code.ts';
import { migrateToFleetCode } from './fleet-code-migration.ts';
import { refuseReads } from './closing-reads.ts';
import { PageFiles } from './page-files.ts';
import { migrateReportPagesToFiles } from './report-pages-migration.ts';
import { migrateVmRecordsToScanRows } from './vm-records-migration.ts';
import type { Annotation, ApiKeyRecord, ClassCode, ComponentCve, ComponentRecord, FleetClassCode, VmDetails } from './records.ts';

/**
 * 2: code times moved out of the class records into slot blocks (`codeTimes`); class records in bytes (class-code.ts).
 * 3: fleet-wide class records (`fleetCode`), built from the AppEnv ones at the first open (fleet-code-migration.ts).
 * 4: report pages in files (page-files.ts), moved out of LMDB at the first open (report-pages-migration.ts).
 * 5: a VM's record in its scan row only (vm-scan.ts), its msgpack copy (`vms`) dropped at the first open
 *    (vm-records-migration.ts).
 */
export const SCHEMA_VERSION = 5;

/** lmdb-js takes a custom encoder for a database, though its types do not say so. */
const CODE_OPTIONS: DatabaseOptions & { name: string; encoder: typeof classCodeEncoder } = { name: 'code', encoder: classCodeEncoder };
const FLEET_CODE_OPTIONS: DatabaseOptions & { name: string; encoder: typeof fleetClassCodeEncoder } = { name: 'fleetCode', encoder: fleetClassCodeEncoder };
/** A decoder that hands out the read buffer itself (lmdb-js copies a value for a decoder unless asked not to). */
const viewEncoder = { encode: (value: Uint8Array) => value, decode: (bytes: Uint8Array, size: number) => bytes.subarray(0, size), needsStableBuffer: false };
const FLEET_CODE_VIEWS: DatabaseOptions & { name: string; encoder: typeof viewEncoder } = { name: 'fleetCode', encoder: viewEncoder };

export interface Store {
  env: RootDatabase;
  /** The LMDB file's path (copy.ts reads it). */
  file: string;
  /** Counters and flags: schemaVersion, dictNext, rowNext, componentNext, codeSlotNext, writeSeq, codeSeq. */
  meta: Database<number | string, string>;
  /** String dictionary, both directions; id 0 is reserved for "none". */
  dictIds: Database<number, string>;
  dictStrings: Database<string, number>;
  vmRows: Database<number, string>;
  /** Per VM row: its record as the fixed-width binary row of vm-scan.ts, what report scans read. */
  vmScan: Database<Buffer, number>;
  vmDetails: Database<VmDetails, number>;
  /** Uint32 pairs [keyId, valueId, …] sorted by key string. */
  tags: Database<Buffer, number>;
  annotations: Database<Annotation[], number>;
  componentIds: Database<number, string>;
  components: Database<ComponentRecord, number>;
  /**
   * Per VM: Uint32 pairs [componentId, sourceNameId] sorted by componentId, then sourceNameId: a component
   * found in several JARs of the VM has a pair for each.
   */
  vmComponents: Database<Buffer, number>;
  /** Per VM: sorted Uint32 ids of the sourceNames it loaded code from. */
  usedSources: Database<Buffer, number>;
  /**
   * Key [sourceName, className, appEnv] → the class's methods and their time slots. Written only when a
   * class gains a method; LMDB key order is the code report's default order.
   */
  code: Database<ClassCode, string[]>;
  /**
   * Key [sourceName, className] → the class's methods in every AppEnv, each with its slots in the AppEnv
   * records: what a code report without an AppEnv filter reads, one record per class.
   */
  fleetCode: Database<FleetClassCode, string[]>;
  /**
   * The same records as views of LMDB's read buffer, for the report scan that copies names without
   * decoding them: a view is valid only until the next read in its thread (no copy per record).
   */
  fleetCodeViews: Database<Uint8Array, string[]>;
  /** Block number → Float64 [firstSeen, lastSeen] per slot of the block (code-times.ts). */
  codeTimes: Database<Buffer, number>;
  /** Per component id: the CVEs its name and version match (filled by vulnerability matching). */
  componentCves: Database<ComponentCve[], number>;
  /** Vulnerability records by OSV id. */
  vulns: Database<Vulnerability, string>;
  keys: Database<ApiKeyRecord, string>;
  keyHashes: Database<string, string>;
  reports: Database<Record<string, unknown>, string>;
  /** Reports' pages: each page's data as JSON bytes, which a JSON GET splices into its envelope. */
  pageFiles: PageFiles;
  /** The `writeSeq` values of this process's write batches; the others came from other processes. */
  ownSeqs: Set<number>;
  close(): Promise<void>;
}

/** The LMDB environment's file in a data directory (report pages are in PAGES_DIR beside it). */
export const STORE_FILE = 'jvmlens.mdb';
export const PAGES_DIR = 'pages';

/** Whether a field of the store is one of its lmdb-js databases (not the page files, the sequence set or `close`). */
function isDatabase(value: unknown): value is Database<unknown, import('lmdb').Key> {
  return typeof value === 'object' && value !== null && typeof (value as { getBinaryFast?: unknown }).getBinaryFast === 'function';
}

export function openStore(dataDir: string, options: { readOnly?: boolean } = {}): Store {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, STORE_FILE);
  const env = open({
    path: file,
    maxDbs: 32,
    readOnly: options.readOnly ?? false,
    // Large maps keep remaps rare; LMDB only uses what it writes.
    mapSize: 64 * 1024 ** 3,
    // The file is mapped in 64 KiB chunks, unmapped once unused, instead of whole: a page read once stays
    // out of the resident size (at 1M VMs the 2.6 GB file was all resident after ingestion). lmdb-js then
    // copies every value it returns rather than handing out views of the map. LMDB's own copy needs the
    // map whole, so copy.ts copies the file itself.
    remapChunks: true,
  });
  const msgpack = <V, K extends import('lmdb').Key>(name: string, keyEncoding?: 'uint32' | 'ordered-binary'): Database<V, K> =>
    env.openDB<V, K>({ name, encoding: 'msgpack', ...(keyEncoding ? { keyEncoding } : {}) });
  const binary = <K extends import('lmdb').Key>(name: string, keyEncoding?: 'uint32' | 'ordered-binary'): Database<Buffer, K> =>
    env.openDB<Buffer, K>({ name, encoding: 'binary', ...(keyEncoding ? { keyEncoding } : {}) });

  const store: Store = {
    env,
    file,
    meta: msgpack('meta'),
    dictIds: msgpack('dictIds'),
    dictStrings: msgpack('dictStrings', 'uint32'),
    vmRows: msgpack('vmRows'),
    vmScan: binary('vmScan', 'uint32'),
    vmDetails: msgpack('vmDetails', 'uint32'),
    tags: binary('tags', 'uint32'),
    annotations: msgpack('annotations', 'uint32'),
    componentIds: msgpack('componentIds'),
    components: msgpack('components', 'uint32'),
    vmComponents: binary('vmComponents', 'uint32'),
    usedSources: binary('usedSources', 'uint32'),
    code: env.openDB<ClassCode, string[]>(CODE_OPTIONS),
    fleetCode: env.openDB<FleetClassCode, string[]>(FLEET_CODE_OPTIONS),
    fleetCodeViews: env.openDB<Uint8Array, string[]>(FLEET_CODE_VIEWS),
    codeTimes: binary('codeTimes', 'uint32'),
    componentCves: msgpack('componentCves', 'uint32'),
    vulns: msgpack('vulns'),
    keys: msgpack('keys'),
    keyHashes: msgpack('keyHashes'),
    reports: msgpack('reports'),
    pageFiles: new PageFiles(join(dataDir, PAGES_DIR)),
    ownSeqs: new Set(),
    close: () => {
      refuseReads(`the store in ${dataDir}`, [env, ...Object.values(store).filter((value) => value !== env && isDatabase(value))]);
      return env.close();
    },
  };
  if (!store.meta.get('schemaVersion') && !options.readOnly) {
    store.meta.putSync('schemaVersion', SCHEMA_VERSION);
  }
  if (!options.readOnly) {
    const progress = (line: string) => process.stderr.write(`jvmlens: ${line}\n`);
    if (store.meta.get('schemaVersion') === 2) migrateToFleetCode(store, progress);
    if (store.meta.get('schemaVersion') === 3) migrateReportPagesToFiles(store, progress);
    if (store.meta.get('schemaVersion') === 4) migrateVmRecordsToScanRows(store, progress);
  }
  const version = store.meta.get('schemaVersion');
  if (version !== undefined && version !== SCHEMA_VERSION) {
    // Closed first: the process may open the directory again (a cluster node looks before it restores).
    void env.close();
    throw new Error(`data directory ${dataDir} has schema version ${version}; this jvmlens reads version ${SCHEMA_VERSION}, and migrates versions 2 to 4 when it opens it for writing`);
  }
  return store;
}

/**
 * A write that storage could not commit (disk full, I/O error): the batch is not stored, and the service
 * should answer 507 and report DOWN until a write succeeds again.
 */
export class StorageWriteError extends Error {
  constructor(cause: string) {
    super(cause);
    this.name = 'StorageWriteError';
  }
}

/**
 * Recognises lmdb-js's failed commit: it rejects every write of the transaction with an error whose
 * `commitError` promise rejects too (with the I/O error, which lmdb-js also prints). Nothing else handles
 * that promise, and an unhandled rejection would end the process, so it is handled here. Returns null for
 * any other error.
 */
export function storageWriteFailure(error: unknown): StorageWriteError | null {
  if (error instanceof StorageWriteError) return error;
  const commitError = (error as { commitError?: unknown } | null)?.commitError;
  if (!(commitError instanceof Promise)) return null;
  commitError.catch(() => undefined);
  return new StorageWriteError('commit failed (disk full or I/O error)');
}

export function writeSeq(store: Store): number {
  return (store.meta.get('writeSeq') as number | undefined) ?? 0;
}

/**
 * Marks a write batch inside its transaction, so other processes can notice it, and remembers it as
 * this process's own (see `ownSeqs`). Returns the sequence number to forget if the transaction fails.
 */
export function countWrite(store: Store): number {
  const seq = writeSeq(store) + 1;
  store.meta.put('writeSeq', seq);
  store.ownSeqs.add(seq);
  return seq;
}

/**
 * How many write batches changed the fleet-wide class records (`fleetCode`): a report worker keeps them
 * between reports while it stays the same. Ingestion advances it with every write of `fleetCode`
 * (`noteFleetCodeChange`); the migration that first builds them runs at open, before any worker reads them.
 */
export function fleetCodeSeq(store: Store): number {
  return (store.meta.get('codeSeq') as number | undefined) ?? 0;
}

/** Advances `fleetCodeSeq` inside the write transaction that changes `fleetCode`. */
export function noteFleetCodeChange(store: Pick<Store, 'meta'>): void {
  nextId(store, 'codeSeq', 0);
}

/** Reads a counter inside a write transaction and advances it: safe across processes. */
export function nextId(store: Pick<Store, 'meta'>, counter: string, first = 1): number {
  const current = store.meta.get(counter);
  const id = typeof current === 'number' ? current : first;
  store.meta.put(counter, id + 1);
  return id;
}

/** Uint32 view of a binary value; copies because LMDB buffers are only valid until the next read. */
export function uint32s(buffer: Buffer | undefined): Uint32Array {
  if (buffer === undefined || buffer.length === 0) return new Uint32Array(0);
  const copy = new Uint32Array(buffer.length >>> 2);
  // getBinaryFast's buffer reports its value's length but spans LMDB's whole shared buffer: copy by view.
  new Uint8Array(copy.buffer).set(new Uint8Array(buffer.buffer, buffer.byteOffset, copy.byteLength));
  return copy;
}

const NO_UINT32S = new Uint32Array(0);

/** Uint32 view of a getBinaryFast value, copied only when unaligned: valid until the next read reuses LMDB's buffer. */
export function uint32View(buffer: Buffer | undefined): Uint32Array {
  if (buffer === undefined || buffer.length === 0) return NO_UINT32S;
  return (buffer.byteOffset & 3) === 0 ? new Uint32Array(buffer.buffer, buffer.byteOffset, buffer.length >>> 2) : uint32s(buffer);
}

export function bufferOf(values: Uint32Array): Buffer {
  return Buffer.from(values.buffer, values.byteOffset, values.byteLength);
}
