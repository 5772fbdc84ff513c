// Many objects of a few shapes (agent events, code classes) as msgpack records: each message defines its
// own, so any node or thread reads any message. They unpack in a quarter of the time JSON takes to parse and
// validate an agent batch's body (0.13 against 0.55 µs per code item, inflate included).
//
// They are packed by msgpackr's CommonJS build, a second copy of its code. With the copy lmdb-js packs the
// store's values with, packing took a cluster's gateway ~4 µs per code item where a script takes 0.25 (a
// CPU profile; most likely V8's feedback for that shared code, shaped by the store's many kinds of record),
// and the cluster's ingestion fell from 250-272k to 218k items/s. With this copy it rose to 278-285k, and a
// node applying the log alone went from 611-668k to 829-833k items/s; a code report's chunks of classes
// took their giving nodes 1.2 s of `pack` each with the shared copy.
import { createRequire } from 'node:module';
import type { Packr } from 'msgpackr';

const { Packr: RecordPackr } = createRequire(import.meta.url)('msgpackr') as { Packr: typeof Packr };
const records = new RecordPackr({ useRecords: true, moreTypes: false });

export function packRecords(value: unknown): Uint8Array {
  return records.pack(value);
}

export function unpackRecords(bytes: Uint8Array): unknown {
  return records.unpack(bytes);
}
