// The JSON of a VM instance (interface §2.2) for GET /public/instance/{vmId}, and the cache that keeps it.
import { ApiError } from '../../errors.ts';
import type { Dictionary } from '../../storage/dictionary.ts';
import type { Store } from '../../storage/store.ts';
import { readTags } from '../../storage/vm-tags.ts';
import { vmState } from '../../storage/vm-state.ts';
import type { VmState, VmTimes } from '../../storage/vm-state.ts';
import { findVm, vmDetails } from '../../storage/vms.ts';

/** The 404 of an unknown vmId; a long id is cut in the message. */
export function vmNotFound(vmId: string): ApiError {
  return new ApiError('VM_NOT_FOUND', `no VM with vmId '${vmId.length > 128 ? `${vmId.slice(0, 128)}…` : vmId}'`);
}

/** The VM instance of interface.md §2.2, plus its tags as a map (decisions §5); `state` is left to the caller. */
function vmInstanceBody(store: Store, dict: Dictionary, vmId: string): { body: Record<string, unknown>; times: VmTimes } {
  const record = findVm(store, vmId);
  if (record === undefined) throw vmNotFound(vmId);
  const details = vmDetails(store, record);
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

