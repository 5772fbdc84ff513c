// What a cluster's log holds: every change to the data, as values every node applies the same way.
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { createRequire } from 'node:module';
import { Packr } from 'msgpackr';
import type { ReportMeta } from '../engine/reports/report-types.ts';
import type { AgentEvent } from '../ingest/events.ts';
import { batchEvents } from '../writes.ts';
import type { AgentBatch } from '../writes.ts';
import type { ApiKeyRecord } from '../storage/records.ts';
import type { TagEdit } from '../storage/vms.ts';
import type { Vulnerability } from '../vuln/osv.ts';

export type Command =
  /**
   * An agent batch's events as its gateway validated them (packEvents), and when it received them. Each
   * node unpacks them inside its write transaction, as a single node parses a body there.
   */
  | { kind: 'events'; events: Uint8Array; receivedAt: number }
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
/**
 * Events are many objects of a few shapes: msgpack records (each message defines its own, so any node
 * reads any message) unpack in a quarter of the time JSON takes to parse and validate the batch's body
 * (0.13 against 0.55 µs per code item, inflate included), which every node of the cluster paid.
 * They are packed by msgpackr's CommonJS build, a second copy of its code. With the copy lmdb-js packs the
 * store's values with, packing took a gateway ~4 µs per item where a script takes 0.25 (a CPU profile; most
 * likely V8's feedback for that shared code, shaped by the store's many kinds of record), and the cluster's
 * ingestion fell from 250-272k to 218k items/s. With this copy it rose to 278-285k, and a node applying the
 * log alone went from 611-668k to 829-833k items/s (the cluster bench against the body parsed by each node).
 */
const { Packr: EventPackr } = createRequire(import.meta.url)('msgpackr') as { Packr: typeof Packr };
const eventPackr = new EventPackr({ useRecords: true, moreTypes: false });

export function packEvents(events: readonly AgentEvent[]): Uint8Array {
  return eventPackr.pack(events);
}

/** An events command's events, decoded when `decode` is called, and when its batch was received. */
export function loggedEvents(command: Extract<Command, { kind: 'events' }>): { decode: () => AgentEvent[]; receivedAt: number } {
  // Commands of logs written by earlier versions carry the body as received.
  if ('batch' in command) return { decode: () => batchEvents(command.batch), receivedAt: command.batch.now };
  return { decode: () => eventPackr.unpack(command.events) as AgentEvent[], receivedAt: command.receivedAt };
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
