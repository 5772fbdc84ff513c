// The fleet-wide class records, kept by a report worker between code reports while no write changed them
// (`fleetCodeSeq`): iterating 100k records through lmdb-js costs ~0.5 µs each and their views as much again,
// a quarter of a code report's encoding, and between two reports a settled fleet rarely gains a method.
// A report that reads them from LMDB copies them as it goes, for the next one, into the bytes of the last
// copy: memory this thread has used already (new memory costs most of such a copy on a virtual machine).
import { ByteSink } from '../../byte-sink.ts';
import { fleetCodeSeq } from '../../../storage/store.ts';
import type { Store } from '../../../storage/store.ts';

/**
 * Records kept up to this many bytes in all (about 7M methods): a larger fleet's code reports read
 * LMDB as they go, rather than hold a copy in each worker.
 */
const KEEP_BYTES = 256 << 20;

/** The records in key order: record k is class `classNames[k]` of `sourceNames[k]`, bytes[starts[k], starts[k + 1]). */
export interface KeptRecords {
  sourceNames: readonly string[];
  classNames: readonly string[];
  bytes: Buffer;
  starts: readonly number[];
}

export class ClassRecords {
  /** The `fleetCodeSeq` the kept records are of. */
  #seq = -1;
  #kept: KeptRecords | null = null;
  /** Where the next copy goes: the last one's bytes. */
  #bytes: Buffer | null = null;
  /** False once the records passed KEEP_BYTES: a fleet's code does not shrink. */
  #keeps = true;

  /** The kept records when no write changed them since they were read (as the store's snapshot tells), else null. */
  current(store: Store): KeptRecords | null {
    return this.#kept !== null && this.#seq === fleetCodeSeq(store) ? this.#kept : null;
  }

  /**
   * A collector for a report that reads every record from LMDB in this snapshot: once it is done, what it
   * collected is kept. Null when they are too many to keep. The kept records are gone from now on (the
   * collector writes over their bytes).
   */
  collect(store: Store): RecordCollector | null {
    if (!this.#keeps) return null;
    this.#kept = null;
    const seq = fleetCodeSeq(store);
    return new RecordCollector(this.#bytes, (kept) => {
      this.#keeps = kept !== null;
      this.#kept = kept;
      this.#bytes = kept === null ? null : kept.bytes;
      this.#seq = seq;
    });
  }
}

export class RecordCollector {
  /** The copies, one after the other; null once there are too many to keep. */
  #sink: ByteSink | null;
  #sourceNames: string[] = [];
  #classNames: string[] = [];
  #starts: number[] = [0];
  readonly #keep: (kept: KeptRecords | null) => void;

  constructor(bytes: Buffer | null, keep: (kept: KeptRecords | null) => void) {
    this.#sink = new ByteSink(bytes ?? 1 << 20);
    this.#keep = keep;
  }

  /**
   * The next record in key order, as a view of LMDB's read buffer; gives the copy, valid until the next
   * add, or null once there are too many to keep.
   */
  add(sourceName: string, className: string, view: Uint8Array): Uint8Array | null {
    const sink = this.#sink;
    if (sink === null) return null;
    const start = sink.length;
    if (start + view.length > KEEP_BYTES) {
      this.#sink = null;
      this.#sourceNames = [];
      this.#classNames = [];
      this.#starts = [];
      return null;
    }
    sink.reserve(view.length);
    sink.copy(view);
    this.#sourceNames.push(sourceName);
    this.#classNames.push(className);
    this.#starts.push(sink.length);
    return sink.bytes.subarray(start, sink.length);
  }

  /** Every record of the key range was added: keep them (unless there were too many). */
  done(): void {
    this.#keep(this.#sink === null ? null : { sourceNames: this.#sourceNames, classNames: this.#classNames, bytes: this.#sink.bytes, starts: this.#starts });
  }
}
