// Reads and tag writes of single VMs for the explorer (decisions §5).
import { ApiError } from '../errors.ts';
import { isVmId } from '../ingest/events.ts';
import type { Dictionary } from './dictionary.ts';
import type { Annotation, VmRecord } from './records.ts';
import type { Store } from './store.ts';
import { countWrite } from './store.ts';
import { readTags, writeTags } from './tags.ts';
import { vmState } from './vm-state.ts';
import type { VmState, VmTimes } from './vm-state.ts';

export interface TagRecord {
  key: string;
  value: string;
}

export function findVm(store: Store, vmId: string): VmRecord {
  // An id no agent could have sent is not looked up: a key past LMDB's limit would throw.
  const row = isVmId(vmId) ? store.vmRows.get(vmId) : undefined;
  const record = row === undefined ? undefined : store.vms.get(row);
  if (record === undefined) throw new ApiError('VM_NOT_FOUND', `no VM with vmId '${vmId.length > 128 ? `${vmId.slice(0, 128)}…` : vmId}'`);
  return record;
}

/** The VM instance of interface.md §2.2, plus its tags as a map (decisions §5); `state` is left to the caller. */
export function vmInstanceBody(store: Store, dict: Dictionary, vmId: string): { body: Record<string, unknown>; times: VmTimes } {
  const record = findVm(store, vmId);
  const details = store.vmDetails.get(record.row);
  const inventory = details?.inventory ?? {};
  const body = {
    vmId: record.vmId,
    agentVersion: dict.lookup(record.agentVersion) ?? '',
    agentRevision: dict.lookup(record.agentRevision) ?? '',
    inventory: {
      systemProperties: inventory.systemProperties ?? {},
      hostName: inventory.hostName ?? '',
      osEnvironment: inventory.osEnvironment ?? {},
      mainMethod: inventory.mainMethod ?? '',
      cpuInfo: inventory.cpuInfo ?? {},
    },
    startTime: record.startTime,
    lastHeardTime: record.lastHeardTime,
    mailbox: dict.lookup(record.mailbox) ?? '',
    state: null as string | null,
    jvmInfo: details?.jvmInfo ?? {},
    tags: Object.fromEntries(readTags(store, dict, record.row)),
  };
  return { body, times: record };
}

/**
 * Instance bodies by vmId, as JSON bytes per state, so a repeated GET is one map lookup: no store reads,
 * no decoding, no serialising. The state is computed per request (it changes with time); writes
 * invalidate entries.
 */
export class InstanceCache {
  readonly #entries = new Map<string, { body: Record<string, unknown>; times: VmTimes; json: Partial<Record<VmState, Buffer>> }>();
  readonly #limit: number;

  constructor(limit = 50_000) {
    this.#limit = limit;
  }

  /** The instance's JSON body (interface §2.2). */
  get(store: Store, dict: Dictionary, vmId: string, now: number, offlineAfterMs: number): Buffer {
    let entry = this.#entries.get(vmId);
    if (entry === undefined) {
      entry = { ...vmInstanceBody(store, dict, vmId), json: {} };
      if (this.#entries.size >= this.#limit) this.#entries.clear();
      this.#entries.set(vmId, entry);
    }
    const state = vmState(entry.times, now, offlineAfterMs);
    return (entry.json[state] ??= Buffer.from(JSON.stringify({ ...entry.body, state })));
  }

  invalidate(vmId: string): void {
    this.#entries.delete(vmId);
  }

  clear(): void {
    this.#entries.clear();
  }
}

export function vmAnnotations(store: Store, vmId: string): Annotation[] {
  return store.annotations.get(findVm(store, vmId).row) ?? [];
}

export function vmTags(store: Store, dict: Dictionary, vmId: string): TagRecord[] {
  return tagRecords(readTags(store, dict, findVm(store, vmId).row));
}

function tagRecords(tags: ReadonlyMap<string, string>): TagRecord[] {
  return [...tags].map(([key, value]) => ({ key, value }));
}

/**
 * Changes the tags of a VM in one durable transaction and returns them all.
 * `change` gets the current tags and returns the new ones, or throws.
 */
export async function updateTags(
  store: Store,
  dict: Dictionary,
  vmId: string,
  change: (tags: Map<string, string>) => Map<string, string>,
): Promise<TagRecord[]> {
  let result: Map<string, string> | undefined;
  let seq = 0;
  try {
    await store.env.childTransaction(() => {
      const record = findVm(store, vmId);
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
  return tagRecords(new Map([...result!].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))));
}
