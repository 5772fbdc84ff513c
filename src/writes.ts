// The writes every reader must see, applied to this node's store: by the API on a single node, or by a
// cluster node replaying its log (src/cluster/replica.ts). One code path either way.
import type { AgentEvent } from './ingest/events.ts';
import type { Metrics } from './http/metrics.ts';
import type { Dictionary } from './storage/dictionary.ts';
import type { IngestResult, Ingestor } from './storage/ingest.ts';
import type { Liveness } from './storage/liveness.ts';
import type { Store } from './storage/store.ts';
import { editTags } from './storage/vms.ts';
import type { TagEdit, TagRecord } from './storage/vms.ts';

export interface Writes {
  /** Stores a batch of agent events (`decode` gives them or throws the batch's 400); the number accepted once durable. */
  events(decode: () => readonly AgentEvent[]): Promise<number>;
  /** Applies a tag edit; the VM's tags after it, undefined when there is no such VM. */
  tags(edit: TagEdit): Promise<TagRecord[] | undefined>;
}

export interface LocalWriteParts {
  store: Store;
  dict: Dictionary;
  ingestor: Ingestor;
  liveness: Liveness;
  metrics: Metrics;
  /** What the in-memory views (fleet columns, CVE index, instance cache) do after a batch or a tag edit. */
  afterIngest: (result: IngestResult) => void;
  afterTagsChange: (vmId: string) => void;
}

export function localWrites(parts: LocalWriteParts): Writes {
  return {
    async events(decode) {
      const result = await parts.ingestor.ingest(decode);
      for (const record of result.touched) parts.liveness.update(record);
      for (const [type, count] of result.eventCounts) parts.metrics.recordEvents(type, count);
      parts.afterIngest(result);
      return result.accepted;
    },
    async tags(edit) {
      const tags = await editTags(parts.store, parts.dict, edit);
      if (tags !== undefined) parts.afterTagsChange(edit.vmId);
      return tags;
    },
  };
}
