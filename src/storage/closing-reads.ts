// Reads of an LMDB environment whose close has begun: refused at their caller, where they can be handled.
// lmdb-js would renew its read transaction, which the close made invalid, then throw from a timer, which
// ends the process ("Attempt to reset an invalid read txn"). A reader that outlived its service's shutdown
// did so in a cluster node restarting in process (log checks, the CVE index rebuild).
import type { Logger } from '../log.ts';

/** lmdb-js's database methods that renew its read transaction (read.js). */
const READS = [
  'get', 'getBinary', 'getBinaryFast', 'getString', 'getSharedBinary', 'getEntry', 'getMany', 'getAsync', 'getSync',
  'getRange', 'getKeys', 'getValues', 'getCount', 'getKeysCount', 'getValuesCount', 'doesExist', 'prefetch',
  'ensureReadTxn', 'useReadTransaction', 'getStats',
] as const;

export class StoreClosedError extends Error {
  constructor(what: string, method: string) {
    super(`${what} is closed: ${method} after its close began`);
    this.name = 'StoreClosedError';
  }
}

/**
 * A read refused because its store closed, and unhandled: whatever made it was stopped with that store (a
 * service shut down, in a process that goes on with another), so it is logged, and the process goes on.
 * Returns whether `reason` was such a read.
 */
export function toleratedStrayRead(reason: unknown, logger: Logger): boolean {
  if (!(reason instanceof StoreClosedError)) return false;
  logger.warn('a read outlived its store\'s close; what made it had stopped with the store', { stack: reason.stack });
  return true;
}

/** A database as lmdb-js makes it: `env` is its native environment, whose `writeTxn` is set inside a write transaction. */
interface LmdbDatabase {
  env?: { writeTxn?: unknown };
}

/**
 * From now on, each of `databases`' reads throws StoreClosedError, except inside a write transaction: one
 * queued before the close still runs as the close flushes the writes, and reads through its own transaction.
 * Call it right before the environment's `close()`.
 */
export function refuseReads(what: string, databases: readonly object[]): void {
  for (const database of databases) {
    const env = (database as LmdbDatabase).env;
    const methods = database as Record<string, unknown>;
    for (const method of READS) {
      const read = methods[method];
      if (typeof read !== 'function') continue;
      Object.defineProperty(database, method, {
        configurable: true,
        value(this: unknown, ...args: unknown[]): unknown {
          if (env?.writeTxn) return read.apply(this, args);
          throw new StoreClosedError(what, method);
        },
      });
    }
  }
}
