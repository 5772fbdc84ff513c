// What a cluster's log holds: every change to the data, as values every node applies the same way.
import { deflateRaw, deflateRawSync, inflateRawSync } from 'node:zlib';
import { promisify } from 'node:util';
import { Packr } from 'msgpackr';
import type { ReportMeta } from '../engine/reports/report-types.ts';
import type { AgentEvent, CodeEvent, CodeItem } from '../ingest/events.ts';
import { packRecords, unpackRecords } from '../msgpack-records.ts';
import { codeGroupOf } from '../storage/code-groups.ts';
import { batchEvents } from '../writes.ts';
import type { AgentBatch } from '../writes.ts';
import type { ApiKeyRecord } from '../storage/records.ts';
import type { TagEdit } from '../storage/vms.ts';
import type { Vulnerability } from '../vuln/osv.ts';

export type Command =
  /**
   * An agent batch's events as its gateway validated them (eventsCommand), and when it received them. Each
   * node unpacks them inside its write transaction, as a single node parses a body there. `events` holds the
   * events with their code items taken out, each code event naming its sourceNames in `sources`; `groups`
   * holds the code items of each code group (one, without groups) as columns: a node unpacks its own group's.
   */
  | { kind: 'events'; events: Uint8Array; receivedAt: number; sources: string[]; groups: Uint8Array[] }
  /**
   * An agent batch in a log written by an earlier jvmlens version: its events whole, or with each code
   * group's items apart as records (`code`); or its bytes as received, parsed and validated by each node.
   */
  | { kind: 'events'; events: Uint8Array; receivedAt: number; code?: Uint8Array[] }
  | { kind: 'events'; batch: AgentBatch }
  | { kind: 'tags'; edit: TagEdit }
  | { kind: 'key.put'; record: ApiKeyRecord }
  | { kind: 'key.revoke'; keyId: string; at: number }
  /** `at`: when the import ran (absent in commands of versions before it), the analysis time of the matches it changes. */
  | { kind: 'vulns'; records: Vulnerability[]; at?: number }
  /** A report accepted by its coordinator; every node stores the record, the coordinator generates it. */
  | { kind: 'report.create'; meta: ReportMeta }
  /**
   * One finished page, as the coordinator stored it; or, where one message would exceed the servers'
   * max_payload, consecutive parts of it, each `json` holding the page's bytes from `offset` on.
   * `coordinator`: the node that generated it (absent in logs of versions before it).
   */
  | { kind: 'report.page'; reportId: string; page: number; json: Uint8Array; offset?: number; coordinator?: string }
  /** The coordinator's final record, after all its pages. */
  | { kind: 'report.final'; meta: ReportMeta }
  /** A live node takes over the reports of a coordinator that left. */
  | { kind: 'report.claim'; reportId: string; coordinator: string }
  | { kind: 'report.delete'; reportId: string };

export const STREAM = 'JVMLENS_LOG';
/**
 * The format of the log's commands, which every node of a cluster must write, read and apply alike: 1 before
 * 60e165f (a batch's code items as msgpack records), 2 since (as columns), 3 since 3188e80 (the same
 * commands, but a write's copy is applied once, and a key's revocation is final: nodes of format 2 would
 * hold other data for the same log), 4 since a write's retries carry ids of their own (`<id>.retry<n>`, copies
 * that nodes of format 3 would apply again). A node announces it in its heartbeat and joins no cluster where a
 * live node announces another (src/cluster/node.ts).
 */
export const LOG_FORMAT = 4;
const PREFIX = 'jvmlens.log';
export const STREAM_SUBJECTS = [`${PREFIX}.>`];

/** Subjects group commands by what they change, so one family can be read alone (keys list). */
export function subjectOf(command: Command): string {
  return `${PREFIX}.${command.kind.split('.')[0]}`;
}
export const KEYS_SUBJECT = `${PREFIX}.key`;

// Records stay plain objects, so a value reads the same on every node and across versions.
const packr = new Packr({ useRecords: false, moreTypes: false });
const deflateRawOffThread = promisify(deflateRaw);
/** Level 1: code batches shrink about 3× for little CPU (research/scale-out.md), pages 36×. */
const DEFLATE = { level: 1 };
/** Packed commands this large are deflated off the event loop; a small one costs less than the thread hop. */
const OFF_THREAD_BYTES = 1 << 20;

/** A code event as the log holds it: its items in the groups' columns, its sourceNames as indexes into the command's `sources`. */
type LoggedCodeEvent = Omit<CodeEvent, 'sources'> & { sourceRefs: number[] };
/** A code event as logs of format 1 hold it (`code`): its sourceNames themselves. */
type LegacyCodeEvent = Omit<CodeEvent, 'sources'> & { sourceNames?: string[] };

/**
 * A code group's items of a batch as columns: the code events they belong to and how many each has, then
 * for every item its sourceName (an index into the command's `sources`), its className (an index into the
 * part's `classNames`) and its methodName. Over the cluster bench's bodies in three groups, the gateway's
 * split, pack and deflate took 0.50 µs per item this way against 0.81 as records, for 3.3 bytes per item
 * against 7.6 (`npm run bench -- --filter cluster-log`), and a node's events name the batch's few source
 * strings rather than one decoded string per run of items.
 */
type GroupColumns = [events: number[], counts: number[], sourceRefs: number[], classNames: string[], classRefs: number[], methodNames: string[]];

/** Distinct strings in order of first sight, each with its index; the last one's kept, as names come in runs. */
class StringTable {
  readonly values: string[] = [];
  readonly #indexes = new Map<string, number>();
  #last: string | undefined;
  #lastIndex = -1;

  indexOf(value: string): number {
    if (value === this.#last) return this.#lastIndex;
    let index = this.#indexes.get(value);
    if (index === undefined) {
      index = this.values.length;
      this.#indexes.set(value, index);
      this.values.push(value);
    }
    this.#last = value;
    this.#lastIndex = index;
    return index;
  }
}

class GroupColumnsBuilder {
  readonly classNames: string[] = [];
  readonly #events: number[] = [];
  readonly #counts: number[] = [];
  readonly #sourceRefs: number[] = [];
  readonly #classRefs: number[] = [];
  readonly #methodNames: string[] = [];

  add(event: number, sourceRef: number, classRef: number, methodName: string): void {
    const last = this.#events.length - 1;
    if (this.#events[last] === event) this.#counts[last]++;
    else {
      this.#events.push(event);
      this.#counts.push(1);
    }
    this.#sourceRefs.push(sourceRef);
    this.#classRefs.push(classRef);
    this.#methodNames.push(methodName);
  }

  pack(): Uint8Array {
    const columns: GroupColumns = [this.#events, this.#counts, this.#sourceRefs, this.classNames, this.#classRefs, this.#methodNames];
    return packRecords(columns);
  }
}

/** Classes per group of a batch at most: a class's place packs its group and its index in one number. */
const GROUP_CLASSES = 1 << 24;

/**
 * A batch's classes, each hashed to its group once: a batch names far fewer classes than it has runs of
 * items (842 classes in 8,614 runs in the cluster bench's bodies), and hashing each run took half the split.
 * A place is a number, not an object per class: with objects, the young collections of a process that
 * also applied batches took twice as long (28-41 against 15-18 ms per 20 batches, in process), which cost about
 * what hashing once saved.
 */
class ClassPlaces {
  readonly parts: GroupColumnsBuilder[];
  readonly #places = new Map<string, number>();
  #last: string | undefined;
  #lastPlace = 0;

  constructor(codeGroups: number) {
    this.parts = Array.from({ length: codeGroups }, () => new GroupColumnsBuilder());
  }

  of(className: string): number {
    if (className === this.#last) return this.#lastPlace;
    let place = this.#places.get(className);
    if (place === undefined) {
      const group = codeGroupOf(className, this.parts.length);
      place = group * GROUP_CLASSES + this.parts[group].classNames.push(className) - 1;
      this.#places.set(className, place);
    }
    this.#last = className;
    this.#lastPlace = place;
    return place;
  }
}

/**
 * The command of a batch's validated events received at `receivedAt`: each code event's items go to their
 * groups' columns (`codeGroups` of them), and the event keeps the sourceNames they came from, which every node stores.
 */
export function eventsCommand(events: readonly AgentEvent[], receivedAt: number, codeGroups: number): Command {
  const classes = new ClassPlaces(codeGroups);
  const sources = new StringTable();
  const withoutCode = events.map((event, index): AgentEvent | LoggedCodeEvent => {
    if (event.type !== 'code') return event;
    // Each once: every node interns them, while a run of items from one JAR may recur in an event.
    const sourceRefs = new Set<number>();
    for (const item of event.items) {
      const sourceRef = sources.indexOf(item.sourceName);
      sourceRefs.add(sourceRef);
      const place = classes.of(item.className);
      classes.parts[Math.floor(place / GROUP_CLASSES)].add(index, sourceRef, place % GROUP_CLASSES, item.methodName);
    }
    return { type: 'code', vmId: event.vmId, time: event.time, items: [], sourceRefs: [...sourceRefs] };
  });
  return { kind: 'events', events: packRecords(withoutCode), receivedAt, sources: sources.values, groups: classes.parts.map((part) => part.pack()) };
}

/** A code group's columns unpacked into the code items of the batch's events. */
function restoreItems(events: AgentEvent[], sources: readonly string[], packed: Uint8Array): void {
  const [eventIndexes, counts, sourceRefs, classNames, classRefs, methodNames] = unpackRecords(packed) as GroupColumns;
  let k = 0;
  eventIndexes.forEach((index, j) => {
    const items: CodeItem[] = new Array(counts[j]);
    for (let i = 0; i < counts[j]; i++, k++) items[i] = { sourceName: sources[sourceRefs[k]], className: classNames[classRefs[k]], methodName: methodNames[k] };
    (events[index] as CodeEvent).items = items;
  });
}

/** A logged batch's events for a node of `codeGroup`, decoded when `decode` is called, and when its batch was received. */
export function loggedEvents(command: Extract<Command, { kind: 'events' }>, codeGroup: number): { decode: () => AgentEvent[]; receivedAt: number } {
  if ('batch' in command) return { decode: () => batchEvents(command.batch), receivedAt: command.batch.now };
  const { receivedAt } = command;
  if ('groups' in command) {
    return {
      decode: () => {
        const logged = unpackRecords(command.events) as (AgentEvent | LoggedCodeEvent)[];
        const events = logged.map((event): AgentEvent => {
          if (!('sourceRefs' in event)) return event;
          const { type, vmId, time, sourceRefs } = event;
          return { type, vmId, time, items: [], sources: { names: command.sources, refs: sourceRefs } };
        });
        restoreItems(events, command.sources, command.groups[codeGroup]);
        return events;
      },
      receivedAt,
    };
  }
  const { code } = command;
  if (code === undefined) return { decode: () => unpackRecords(command.events) as AgentEvent[], receivedAt };
  return {
    decode: () => {
      const events = (unpackRecords(command.events) as (AgentEvent | LegacyCodeEvent)[]).map((event): AgentEvent => {
        if (event.type !== 'code' || !('sourceNames' in event) || event.sourceNames === undefined) return event as AgentEvent;
        const { sourceNames, ...rest } = event;
        return { ...rest, sources: { names: sourceNames, refs: sourceNames.map((_, ref) => ref) } };
      });
      for (const [index, items] of unpackRecords(code[codeGroup]) as [number, CodeItem[]][]) (events[index] as CodeEvent).items = items;
      return events;
    },
    receivedAt,
  };
}

/** msgpack then raw deflate at level 1: code batches shrink about 3× for little CPU (research/scale-out.md). */
export function encodeCommand(command: Command): Buffer {
  return encodeMessage(command);
}

/**
 * The same bytes, a large command (a report's page) deflated on libuv's threads: 13 ms of a coordinator's
 * event loop per 5.5 MB page, most of its time while it published a code report's pages.
 */
export async function encodeCommandOffThread(command: Command): Promise<Buffer> {
  const packed = packr.pack(command);
  return packed.length < OFF_THREAD_BYTES ? deflateRawSync(packed, DEFLATE) : deflateRawOffThread(packed, DEFLATE);
}

export function decodeCommand(bytes: Uint8Array): Command {
  return decodeMessage(bytes) as Command;
}

/** Any message between nodes, encoded as commands are (plain values; typed arrays do not survive it). */
export function encodeMessage(value: unknown): Buffer {
  return deflateRawSync(packr.pack(value), DEFLATE);
}

export function decodeMessage(bytes: Uint8Array): unknown {
  return packr.unpack(inflateRawSync(bytes));
}

/** A message of many objects of a few shapes between nodes (src/msgpack-records.ts), deflated. */
export function encodeRecords(value: unknown): Buffer {
  return deflateRawSync(packRecords(value), DEFLATE);
}

export function decodeRecords(bytes: Uint8Array): unknown {
  return unpackRecords(inflateRawSync(bytes));
}
