// What a cluster's log holds: every change to the data, as values every node applies the same way.
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { Packr } from 'msgpackr';
import type { ReportMeta } from '../engine/reports/report-types.ts';
import type { AgentEvent, CodeEvent, CodeItem } from '../ingest/events.ts';
import { packRecords, unpackRecords } from '../msgpack-records.ts';
import { ClassGroups } from '../storage/code-groups.ts';
import { batchEvents } from '../writes.ts';
import type { AgentBatch } from '../writes.ts';
import type { ApiKeyRecord } from '../storage/records.ts';
import type { TagEdit } from '../storage/vms.ts';
import type { Vulnerability } from '../vuln/osv.ts';

export type Command =
  /**
   * An agent batch's events as its gateway validated them (eventsCommand), and when it received them. Each
   * node unpacks them inside its write transaction, as a single node parses a body there. In a cluster
   * with code groups, `code` holds each group's code items apart, and `events` the code events without
   * them: a node unpacks its own group's.
   */
  | { kind: 'events'; events: Uint8Array; receivedAt: number; code?: Uint8Array[] }
  /** An agent batch in a log written by an earlier jvmlens version: its bytes as received, parsed and validated by each node. */
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
   */
  | { kind: 'report.page'; reportId: string; page: number; json: Uint8Array; offset?: number }
  /** The coordinator's final record, after all its pages. */
  | { kind: 'report.final'; meta: ReportMeta }
  /** A live node takes over the reports of a coordinator that left. */
  | { kind: 'report.claim'; reportId: string; coordinator: string }
  | { kind: 'report.delete'; reportId: string };

export const STREAM = 'JVMLENS_LOG';
const PREFIX = 'jvmlens.log';
export const STREAM_SUBJECTS = [`${PREFIX}.>`];

/** Subjects group commands by what they change, so one family can be read alone (keys list). */
export function subjectOf(command: Command): string {
  return `${PREFIX}.${command.kind.split('.')[0]}`;
}
export const KEYS_SUBJECT = `${PREFIX}.key`;
/** What truncating the log removes: every family but the keys, which `keys list --cluster` reads from the log. */
export const TRUNCATED_SUBJECTS = ['events', 'tags', 'vulns', 'report'].map((family) => `${PREFIX}.${family}`);

// Records stay plain objects, so a value reads the same on every node and across versions.
const packr = new Packr({ useRecords: false, moreTypes: false });
/** A code group's items of a batch: [index of their code event, the items]. */
type GroupItems = [number, CodeItem[]][];

/**
 * The command of a batch's validated events received at `receivedAt`. With code groups, each code event's
 * items go to their groups' parts, and the event keeps the sourceNames they came from, which every node stores.
 */
export function eventsCommand(events: readonly AgentEvent[], receivedAt: number, codeGroups: number): Command {
  if (codeGroups === 1) return { kind: 'events', events: packRecords(events), receivedAt };
  const groups = new ClassGroups(codeGroups);
  const code: GroupItems[] = Array.from({ length: codeGroups }, () => []);
  const withoutCode = events.map((event, index): AgentEvent => {
    if (event.type !== 'code') return event;
    const parts: CodeItem[][] = Array.from({ length: codeGroups }, () => []);
    // Each once: every node interns them, while a run of items from one JAR may recur in an event.
    const sourceNames = new Set<string>();
    let lastSource: string | undefined;
    for (const item of event.items) {
      parts[groups.of(item.className)].push(item);
      if (item.sourceName !== lastSource) sourceNames.add((lastSource = item.sourceName));
    }
    parts.forEach((items, group) => {
      if (items.length > 0) code[group].push([index, items]);
    });
    return { ...event, items: [], sourceNames: [...sourceNames] };
  });
  return { kind: 'events', events: packRecords(withoutCode), code: code.map((items) => packRecords(items)), receivedAt };
}

/** An events command's events for a node of `codeGroup`, decoded when `decode` is called, and when its batch was received. */
export function loggedEvents(command: Extract<Command, { kind: 'events' }>, codeGroup: number): { decode: () => AgentEvent[]; receivedAt: number } {
  // Commands of logs written by earlier versions carry the body as received.
  if ('batch' in command) return { decode: () => batchEvents(command.batch), receivedAt: command.batch.now };
  const { code } = command;
  if (code === undefined) return { decode: () => unpackRecords(command.events) as AgentEvent[], receivedAt: command.receivedAt };
  return {
    decode: () => {
      const events = unpackRecords(command.events) as AgentEvent[];
      for (const [index, items] of unpackRecords(code[codeGroup]) as GroupItems) (events[index] as CodeEvent).items = items;
      return events;
    },
    receivedAt: command.receivedAt,
  };
}

/** msgpack then raw deflate at level 1: code batches shrink about 3× for little CPU (research/scale-out.md). */
export function encodeCommand(command: Command): Buffer {
  return encodeMessage(command);
}

export function decodeCommand(bytes: Uint8Array): Command {
  return decodeMessage(bytes) as Command;
}

/** Any message between nodes, encoded as commands are (plain values; typed arrays do not survive it). */
export function encodeMessage(value: unknown): Buffer {
  return deflateRawSync(packr.pack(value), { level: 1 });
}

export function decodeMessage(bytes: Uint8Array): unknown {
  return packr.unpack(inflateRawSync(bytes));
}

/** A message of many objects of a few shapes between nodes (src/msgpack-records.ts), deflated. */
export function encodeRecords(value: unknown): Buffer {
  return deflateRawSync(packRecords(value), { level: 1 });
}

export function decodeRecords(bytes: Uint8Array): unknown {
  return unpackRecords(inflateRawSync(bytes));
}
