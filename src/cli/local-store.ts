// The store of --data-dir for a command (keys, cve import, seed, backup): never a cluster node's for a write,
// which goes through the cluster's log (--cluster), or that one node alone would hold it. One process opens a
// store at a time (storage/writer-lock.ts): while a service runs, keys, imports and backups go through its inbox.
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { clusterNodeData } from '../cluster/log-identity.ts';
import { applyRequest, InboxRefusedError, InboxTimeoutError, sendToService } from '../storage/inbox.ts';
import type { InboxRequest, InboxResult } from '../storage/inbox.ts';
import { openStore, STORE_FILE, storageWriteFailure } from '../storage/store.ts';
import type { Store } from '../storage/store.ts';
import { takeWriterLock } from '../storage/writer-lock.ts';
import type { WriterHolder, WriterLock } from '../storage/writer-lock.ts';
import { UsageError } from './args.ts';
import { ServiceError, UnreachableError } from './client.ts';

/** Why a command is refused a cluster node's directory: what it writes, or lists, there is that node's alone. */
function oneNodeAlone(lists: boolean): string {
  const alone = lists ? 'what this command lists there is what that node applied alone, which can lag the cluster\'s log' : 'what this command writes there would reach that node alone';
  return `${alone}; give it --cluster URLS instead of --data-dir`;
}

/** How long a command waits for another command writing the same directory. */
const COMMAND_WAIT_MS = 60_000;
/** How long a command waits for the running service to apply its request (at once, unless busy). */
const SERVICE_WAIT_MS = 30_000;
/** A copy of a data directory takes about as long as the disk needs to write it: gigabytes, minutes. */
const BACKUP_WAIT_MS = 60 * 60_000;

export interface LocalStore {
  store: Store;
  /** Closes the store and gives the writer lock up. */
  close(): Promise<void>;
}

/** A command's requests (storage/inbox.ts), carried out on the store or by the service running on it. */
export interface LocalRequests {
  /** The pid of the service that carries them out, or null when the command does. */
  service: number | null;
  send(request: InboxRequest): Promise<InboxResult>;
  close(): Promise<void>;
}

/** The writer lock for a command, or the service that holds it; another command that keeps it too long is a usage error. */
function commandLock(dataDir: string): Promise<WriterLock | { service: WriterHolder }> {
  return takeWriterLock(dataDir, 'command', COMMAND_WAIT_MS).catch((error: Error) => {
    throw new UsageError(error.message);
  });
}

/** Opens the store for a command that writes it itself (seed); refused while a service runs on it. */
export async function openLocalStore(dataDir: string, whileServing: string): Promise<LocalStore> {
  const lock = await commandLock(dataDir);
  if (!('release' in lock)) throw new UsageError(`a jvmlens service (pid ${lock.service.pid}) is running on ${dataDir}: ${whileServing}`);
  return openLocked(dataDir, lock);
}

/**
 * A usage error unless `dataDir` holds a store or, for a command that may start one (`startsStore`: a key or
 * vulnerability data for a service's first start), is at least a directory: a mistyped path never becomes a
 * new, empty store that no service knows.
 */
export function requireDataDir(dataDir: string, startsStore = false): void {
  if (existsSync(join(dataDir, STORE_FILE))) return;
  if (!startsStore) throw new UsageError(`no jvmlens data directory at ${dataDir} (give --data-dir)`);
  if (!existsSync(dataDir) || !statSync(dataDir).isDirectory()) throw new UsageError(`no directory ${dataDir} (give --data-dir; a new data directory is made by serve or seed, or by mkdir)`);
}

/**
 * Where a command's requests go: the store when no service runs on it, else the service's inbox. A command
 * that only reads (`readsOnly`: backup) may also act on a cluster node's directory; one that lists (`lists`:
 * keys list) is refused it as one that writes is, in its own words; `startsStore`: see requireDataDir.
 */
export async function localRequests(dataDir: string, options: { readsOnly?: boolean; lists?: boolean; startsStore?: boolean } = {}): Promise<LocalRequests> {
  const readsOnly = options.readsOnly === true;
  const lists = options.lists === true;
  // Before the lock, which makes the directory.
  requireDataDir(dataDir, options.startsStore);
  const lock = await commandLock(dataDir);
  if (!('release' in lock) && lock.service.clusterNode === true && !readsOnly) throw new UsageError(`this data directory is a cluster node's (pid ${lock.service.pid} runs it): ${oneNodeAlone(lists)}`);
  if (!('release' in lock)) {
    const send = (request: InboxRequest) => sendToService(dataDir, request, request.kind === 'backup' ? BACKUP_WAIT_MS : SERVICE_WAIT_MS).catch((error: NodeJS.ErrnoException) => notSent(dataDir, error));
    return { service: lock.service.pid, send, close: async () => undefined };
  }
  const { store, close } = await openLocked(dataDir, lock, readsOnly, lists);
  return {
    service: null,
    send: (request) => applyRequest(store, request).catch(exitOnFailedWrite(dataDir)),
    close,
  };
}

async function openLocked(dataDir: string, lock: WriterLock, readsOnly = false, lists = false): Promise<LocalStore> {
  try {
    exitOnFailedCommit(dataDir);
    const store = openStore(dataDir);
    const clusterNode = readsOnly ? null : clusterNodeData(store);
    if (clusterNode !== null) {
      await store.close();
      throw new UsageError(`${clusterNode}: ${oneNodeAlone(lists)}`);
    }
    return {
      store,
      close: async () => {
        await store.close();
        lock.release();
      },
    };
  } catch (error) {
    lock.release();
    throw error;
  }
}

/**
 * A command's write that the disk refuses (full, I/O error) ends it with status 1 and says which directory.
 * lmdb-js then rejects promises nobody awaits (the transaction's other writes, the commit's error) and never
 * settles the awaited one: without this the process died on their stack, and with a listener that only
 * handled them it ended with status 0, having written nothing.
 */
export function exitOnFailedCommit(dataDir: string): void {
  process.on('unhandledRejection', (reason) => {
    const failure = storageWriteFailure(reason);
    if (failure === null) throw reason;
    exitUnwritable(dataDir, failure.message);
  });
}

/** A catch handler: a write the disk refused (a failed commit) ends the command saying which directory; another error is thrown on. */
export function exitOnFailedWrite(dataDir: string): (error: unknown) => never {
  return (error) => {
    const failure = storageWriteFailure(error);
    if (failure === null) throw error;
    return exitUnwritable(dataDir, failure.message);
  };
}

/**
 * A request the service did not carry out, told by exit status: refused by it (3), not answered (4), or one the
 * disk refused to take, which ends the command as a failed commit does (1).
 */
function notSent(dataDir: string, error: NodeJS.ErrnoException): never {
  if (error instanceof InboxRefusedError) throw new ServiceError(error.message);
  if (error instanceof InboxTimeoutError) throw new UnreachableError(error.message);
  if (!['ENOSPC', 'EDQUOT', 'EIO', 'EROFS'].includes(error.code ?? '')) throw error;
  return exitUnwritable(dataDir, error.message);
}

function exitUnwritable(dataDir: string, reason: string): never {
  process.stderr.write(`jvmlens: ${dataDir} cannot be written: ${reason}\n`);
  process.exit(1);
}
