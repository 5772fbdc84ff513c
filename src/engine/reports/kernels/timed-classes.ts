// A code group's classes as they cross threads and nodes (src/cluster/code-reports.ts): the methods a scan
// kept, with their times, as bytes. The giving node copies each name from its class records, and the thread
// that writes the report's pages copies it into their JSON (CodeItemEncoder.addTimed): no string, array or
// msgpack value per method, which is what the groups' classes cost as ClassMethods.
import { ByteSink } from '../../byte-sink.ts';
import { utf8Slice } from '../../../storage/class-code.ts';
import { RecordMethods } from '../../../storage/code-times.ts';
import type { SlotTimes } from '../../../storage/code-times.ts';
import type { ClassMethods } from './class-methods.ts';

/** Bytes before a method's name: firstSeen and lastSeen (f64), the name's UTF-8 length (u32), little-endian. */
export const METHOD_HEAD = 20;

/**
 * Classes in key order: class k is `classNames[k]` of `sourceNames[k]`, with `counts[k]` methods from
 * byte `starts[k]` of `methods`, each its METHOD_HEAD then its name's UTF-8.
 */
export interface TimedClasses {
  sourceNames: string[];
  classNames: string[];
  counts: number[];
  starts: number[];
  methods: Uint8Array;
}

function timesView(methods: Uint8Array): DataView {
  return new DataView(methods.buffer, methods.byteOffset, methods.byteLength);
}

/** Classes added one after the other, in key order; `ready` once they hold `limit` methods. */
export class TimedClassesBuilder {
  /** Methods added so far. */
  methods = 0;
  readonly #limit: number;
  readonly #sourceNames: string[] = [];
  readonly #classNames: string[] = [];
  readonly #counts: number[] = [];
  readonly #starts: number[] = [];
  readonly #bytes = new ByteSink(1 << 16);
  #view = timesView(this.#bytes.bytes);
  #count = 0;
  readonly #recordMethods = new RecordMethods();

  constructor(limit = Number.POSITIVE_INFINITY) {
    this.#limit = limit;
  }

  get ready(): boolean {
    return this.methods >= this.#limit;
  }

  add(cls: ClassMethods): void {
    this.#startClass();
    for (let m = 0; m < cls.methods.length; m++) {
      const name = cls.methods[m];
      const at = this.#method(Buffer.byteLength(name), cls.firstSeen[m], cls.lastSeen[m]);
      this.#bytes.bytes.write(name, at, 'utf8');
    }
    this.#endClass(cls.sourceName, cls.className);
  }

  /**
   * A fleet-wide class record's methods seen in the window, each name copied from its bytes; false, with
   * nothing added, for a record whose names are not all ASCII (RecordMethods), which the caller decodes and adds.
   */
  addRecord(sourceName: string, className: string, record: Uint8Array, times: SlotTimes, window: { from: number; to: number }): boolean {
    const methods = this.#recordMethods;
    if (!methods.read(record, times, window)) return false;
    this.#startClass();
    while (methods.next()) {
      const { start, end } = methods;
      let at = this.#method(end - start, methods.firstSeen, methods.lastSeen);
      // After #method, which may have moved the bytes. Names are short: a loop beats a view and set() per method.
      const bytes = this.#bytes.bytes;
      for (let from = start; from < end; from++) bytes[at++] = record[from];
    }
    this.#endClass(sourceName, className);
    return true;
  }

  finish(): TimedClasses {
    return { sourceNames: this.#sourceNames, classNames: this.#classNames, counts: this.#counts, starts: this.#starts, methods: this.#bytes.bytes.subarray(0, this.#bytes.length) };
  }

  #startClass(): void {
    this.#count = 0;
    this.#starts.push(this.#bytes.length);
  }

  /** Ends the class started last: one without a method in the window is left out. */
  #endClass(sourceName: string, className: string): void {
    if (this.#count === 0) {
      this.#starts.pop();
      return;
    }
    this.#sourceNames.push(sourceName);
    this.#classNames.push(className);
    this.#counts.push(this.#count);
    this.methods += this.#count;
  }

  /** Writes a method's head and makes room for its name: gives where the name goes. */
  #method(length: number, firstSeen: number, lastSeen: number): number {
    const sink = this.#bytes;
    const before = sink.bytes;
    sink.reserve(METHOD_HEAD + length);
    if (sink.bytes !== before) this.#view = timesView(sink.bytes);
    const at = sink.length;
    this.#view.setFloat64(at, firstSeen, true);
    this.#view.setFloat64(at + 8, lastSeen, true);
    this.#view.setUint32(at + 16, length, true);
    sink.length = at + METHOD_HEAD + length;
    this.#count++;
    return at + METHOD_HEAD;
  }
}

/** The classes as ClassMethods, for a report that groups or sorts them (codeFinalize). */
export function classMethodsOf(timed: TimedClasses): ClassMethods[] {
  const { methods: bytes } = timed;
  const view = timesView(bytes);
  return timed.sourceNames.map((sourceName, k) => {
    const cls: ClassMethods = { sourceName, className: timed.classNames[k], methods: [], firstSeen: [], lastSeen: [] };
    let at = timed.starts[k];
    for (let m = 0; m < timed.counts[k]; m++) {
      const length = view.getUint32(at + 16, true);
      cls.firstSeen.push(view.getFloat64(at, true));
      cls.lastSeen.push(view.getFloat64(at + 8, true));
      cls.methods.push(utf8Slice(bytes, at + METHOD_HEAD, at + METHOD_HEAD + length));
      at += METHOD_HEAD + length;
    }
    return cls;
  });
}

/** Class `index` of `timed`, as the merge of the groups' classes in key order takes it; `view` views its methods. */
export interface TimedClass {
  sourceName: string;
  className: string;
  timed: TimedClasses;
  view: DataView;
  index: number;
}

/** A group's chunks (one after the other in key order) as one list of classes. */
export function timedClassList(chunks: readonly TimedClasses[]): TimedClass[] {
  return chunks.flatMap((timed) => {
    const view = timesView(timed.methods);
    return timed.sourceNames.map((sourceName, index) => ({ sourceName, className: timed.classNames[index], timed, view, index }));
  });
}
