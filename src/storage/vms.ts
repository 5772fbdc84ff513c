// Reads and tag writes of single VMs for the explorer (decisions §5).
import { isVmId } from '../ingest/events.ts';
import type { Dictionary } from './dictionary.ts';
import type { Annotation, VmDetails, VmRecord } from './records.ts';
import type { Store } from './store.ts';
import { countWrite } from './store.ts';
import { readVmRecord } from './vm-scan.ts';
import { readTags, writeTags } from './vm-tags.ts';

export interface TagRecord {
  key: string;
  value: string;
}

/** The VM's record, or undefined when no VM has this vmId (the route decides what that means). */
export function findVm(store: Store, vmId: string): VmRecord | undefined {
  // An id no agent could have sent is not looked up: a key past LMDB's limit would throw.
  const row = isVmId(vmId) ? store.vmRows.get(vmId) : undefined;
  return row === undefined ? undefined : readVmRecord(store, row, vmId);
}

/** The VM's details as stored (inventory, jvmInfo). */
export function vmDetails(store: Store, record: VmRecord): VmDetails | undefined {
  return store.vmDetails.get(record.row);
}

/** undefined: no such VM. */
export function vmAnnotations(store: Store, vmId: string): Annotation[] | undefined {
  const record = findVm(store, vmId);
  return record === undefined ? undefined : (store.annotations.get(record.row) ?? []);
}

/** undefined: no such VM. */
export function vmTags(store: Store, dict: Dictionary, vmId: string): TagRecord[] | undefined {
  const record = findVm(store, vmId);
  return record === undefined ? undefined : tagRecords(readTags(store, dict, record.row));
}

function tagRecords(tags: ReadonlyMap<string, string>): TagRecord[] {
  return [...tags].map(([key, value]) => ({ key, value }));
}

/** A tag change as a value: the API applies it directly, or a cluster node applies it from the log. */
export type TagEdit =
  | { vmId: string; op: 'merge' | 'replace'; records: TagRecord[] }
  | { vmId: string; op: 'remove'; key: string };

/** The VM has no tag with that key (a `remove` edit). */
export class MissingTagError extends Error {}

/** The VM's tags after `edit`, given the current ones; throws MissingTagError for a `remove` of a tag it lacks. */
function edited(tags: Map<string, string>, edit: TagEdit): Map<string, string> {
  if (edit.op === 'remove') {
    if (!tags.delete(edit.key)) throw new MissingTagError(`VM '${edit.vmId}' has no tag '${edit.key}'`);
    return tags;
  }
  const result = edit.op === 'replace' ? new Map<string, string>() : tags;
  for (const { key, value } of edit.records) result.set(key, value);
  return result;
}

/**
 * Writes a tag edit in the caller's write transaction and gives the VM's tags (undefined: no such VM): a
 * cluster node applies an edit that waited for its VM's start in the transaction of that start's batch.
 */
export function writeTagEdit(store: Store, dict: Dictionary, edit: TagEdit): Map<string, string> | undefined {
  const record = findVm(store, edit.vmId);
  if (record === undefined) return undefined;
  const tags = edited(readTags(store, dict, record.row), edit);
  writeTags(store, dict, record.row, tags);
  return tags;
}

/** Applies a tag edit in one durable transaction and returns the VM's tags (undefined: no such VM). */
export async function editTags(store: Store, dict: Dictionary, edit: TagEdit): Promise<TagRecord[] | undefined> {
  let result: Map<string, string> | undefined;
  let seq = 0;
  try {
    await store.env.childTransaction(() => {
      result = writeTagEdit(store, dict, edit);
      if (result !== undefined) seq = countWrite(store);
    });
    await store.env.flushed;
  } catch (error) {
    store.ownSeqs.delete(seq);
    dict.clearCache();
    throw error;
  }
  if (result === undefined) return undefined;
  return tagRecords(new Map([...result].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))));
}
