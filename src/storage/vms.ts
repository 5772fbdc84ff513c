// Reads and tag writes of single VMs for the explorer (decisions §5).
import { isVmId } from '../ingest/events.ts';
import type { Dictionary } from './dictionary.ts';
import type { Annotation, VmDetails, VmRecord } from './records.ts';
import type { Store } from './store.ts';
import { countWrite } from './store.ts';
import { readTags, writeTags } from './vm-tags.ts';

export interface TagRecord {
  key: string;
  value: string;
}

/** The VM's record, or undefined when no VM has this vmId (the route decides what that means). */
export function findVm(store: Store, vmId: string): VmRecord | undefined {
  // An id no agent could have sent is not looked up: a key past LMDB's limit would throw.
  const row = isVmId(vmId) ? store.vmRows.get(vmId) : undefined;
  return row === undefined ? undefined : store.vms.get(row);
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

/** Applies a tag edit durably and returns the VM's tags (undefined: no such VM). */
export function editTags(store: Store, dict: Dictionary, edit: TagEdit): Promise<TagRecord[] | undefined> {
  if (edit.op !== 'remove') {
    const { op, records } = edit;
    return updateTags(store, dict, edit.vmId, (current) => {
      const tags = op === 'replace' ? new Map<string, string>() : current;
      for (const { key, value } of records) tags.set(key, value);
      return tags;
    });
  }
  const { vmId, key } = edit;
  return updateTags(store, dict, vmId, (current) => {
    if (!current.delete(key)) throw new MissingTagError(`VM '${vmId}' has no tag '${key}'`);
    return current;
  });
}

/**
 * Changes the tags of a VM in one durable transaction and returns them all (undefined: no such VM).
 * `change` gets the current tags and returns the new ones, or throws.
 */
async function updateTags(
  store: Store,
  dict: Dictionary,
  vmId: string,
  change: (tags: Map<string, string>) => Map<string, string>,
): Promise<TagRecord[] | undefined> {
  let result: Map<string, string> | undefined;
  let seq = 0;
  try {
    await store.env.childTransaction(() => {
      const record = findVm(store, vmId);
      if (record === undefined) return;
      result = change(readTags(store, dict, record.row));
      writeTags(store, dict, record.row, result);
      seq = countWrite(store);
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
