// The writes every reader must see, applied to this node's store: by the API on a single node, or by a
// cluster node replaying its log (src/cluster/replica.ts). One code path either way.
import { decodeEventBody, validateEvents } from './ingest/events.ts';
import type { AgentEvent } from './ingest/events.ts';
import type { Dictionary } from './storage/dictionary.ts';
import type { IngestResult, Ingestor, LogHooks } from './storage/ingest.ts';
import type { Liveness } from './storage/liveness.ts';
import type { Store } from './storage/store.ts';
import { editTags } from './storage/vms.ts';
import type { TagEdit, TagRecord } from './storage/vms.ts';

/** An agent batch as the gateway received it, with the service clock it is validated against. */
export interface AgentBatch {
  body: Uint8Array;
  contentType: string;
  now: number;
}

/** The validated events of a batch, or the batch's 400. */
export function batchEvents(batch: AgentBatch): AgentEvent[] {
  const body = Buffer.isBuffer(batch.body) ? batch.body : Buffer.from(batch.body.buffer, batch.body.byteOffset, batch.body.byteLength);
  return validateEvents(decodeEventBody(body, batch.contentType), batch.now);
}

export interface Writes {
  /** Stores an agent batch (or throws its 400); the number of events accepted once durable. */
  events(batch: AgentBatch): Promise<number>;
  /** Applies a tag edit; the VM's tags after it, undefined when there is no such VM. */
  tags(edit: TagEdit): Promise<TagRecord[] | undefined>;
}

export interface LocalWriteParts {
  store: Store;
  dict: Dictionary;
  ingestor: Ingestor;
  liveness: Liveness;
  /** Events of a stored batch by type (the service counts them in its metrics). */
  countEvents: (counts: ReadonlyMap<AgentEvent['type'], number>) => void;
  /** What the in-memory views (fleet columns, CVE index, instance cache) do after a batch or a tag edit. */
  afterIngest: (result: IngestResult) => void;
  afterTagsChange: (vmId: string) => void;
}

/** A node's own writes: also events decoded elsewhere (a cluster's log), applied as a batch is. */
export interface LocalWrites extends Writes {
  /**
   * Stores the events `decode` gives inside the write transaction (see Ingestor.ingest), received at
   * `receivedAt`; what was stored once durable.
   */
  decoded(decode: () => readonly AgentEvent[], receivedAt: number, log?: LogHooks): Promise<IngestResult>;
}

export function localWrites(parts: LocalWriteParts): LocalWrites {
  const decoded = async (decode: () => readonly AgentEvent[], receivedAt: number, log?: LogHooks): Promise<IngestResult> => {
    const result = await parts.ingestor.ingest(decode, receivedAt, log);
    for (const record of result.touched) parts.liveness.update(record);
    parts.countEvents(result.eventCounts);
    parts.afterIngest(result);
    return result;
  };
  return {
    decoded,
    events: async (batch) => (await decoded(() => batchEvents(batch), batch.now)).accepted,
    async tags(edit) {
      const tags = await editTags(parts.store, parts.dict, edit);
      if (tags !== undefined) parts.afterTagsChange(edit.vmId);
      return tags;
    },
  };
}
