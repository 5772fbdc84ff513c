// Writes of the log that name a VM this node does not hold yet, kept in its store until the VM's start.
//
// A gateway takes a batch or a tag edit only for a VM its node holds, so in the log as it took them the VM's
// start comes first. nats-server 2.9.10 gave nodes histories in which it did not: a start the log lost and
// its node appended again after the writes that followed it (acknowledged-writes.ts). Such a write used to be
// skipped, and lost on every node reading that history. Now it is kept, in the transaction that applies its
// sequence, and applied in the transaction of the batch that starts its VMs. Every node reading the history
// keeps and applies it alike, so the replicas stay equal.
import type { AgentEvent } from '../ingest/events.ts';
import type { Dictionary } from '../storage/dictionary.ts';
import type { Store } from '../storage/store.ts';
import { MissingTagError, writeTagEdit } from '../storage/vms.ts';
import type { TagEdit } from '../storage/vms.ts';
import { decodeCommand, loggedEvents } from './commands.ts';

/** `awaitingStart.write.<seq>`: a kept write, `{ vmIds, data }` (its bytes as logged, base64) as JSON. */
const WRITE = 'awaitingStart.write.';
/** `awaitingStart.vm.<vmId>/<seq>`: the writes waiting for each VM (a vmId has no `/`). */
const BY_VM = 'awaitingStart.vm.';
const COUNT = 'awaitingStart.count';
/** Kept at most: past it a write naming unknown VMs is skipped, as before (logged). A history that far off the gateways' is not one a node should hold. */
export const AWAITING_MAX = 1_000;

/** What a node logs for a write it keeps until its VM starts. */
export const KEPT_UNTIL_START = 'a write names a VM this node does not hold yet: kept until its start, as every node reading this history does';
/** What a node logs for a kept write it applies. */
export const APPLIED_AFTER_START = 'a write kept until its VM started is applied with the batch that started it';

interface KeptWrite {
  vmIds: string[];
  data: string;
}

/** A kept write the VMs it waited for now have: its sequence and what it changes. */
export type ReadyWrite = { seq: number; events: AgentEvent[] } | { seq: number; edit: TagEdit };

/** Sequences as keys in their order. */
function seqKey(seq: number): string {
  return String(seq).padStart(16, '0');
}

function kept(store: Store, seq: number): KeptWrite | undefined {
  const json = store.meta.get(WRITE + seqKey(seq));
  return typeof json === 'string' ? (JSON.parse(json) as KeptWrite) : undefined;
}

/**
 * Keeps the write logged at `seq` (`data`, its bytes) until every VM of `vmIds` is started. False when
 * AWAITING_MAX writes are kept already: the write is skipped. Call in the transaction that applies `seq`.
 */
export function keepUntilStarted(store: Store, seq: number, data: Uint8Array, vmIds: readonly string[]): boolean {
  const count = (store.meta.get(COUNT) as number | undefined) ?? 0;
  if (count >= AWAITING_MAX) return false;
  const write: KeptWrite = { vmIds: [...vmIds], data: Buffer.from(data).toString('base64') };
  store.meta.put(WRITE + seqKey(seq), JSON.stringify(write));
  for (const vmId of vmIds) store.meta.put(`${BY_VM}${vmId}/${seqKey(seq)}`, '');
  store.meta.put(COUNT, count + 1);
  return true;
}

/** How many writes this node keeps. */
export function keptCount(store: Pick<Store, 'meta'>): number {
  return (store.meta.get(COUNT) as number | undefined) ?? 0;
}

/**
 * The kept writes that `events` make ready (they start the VMs the writes wait for), then those that these
 * make ready in turn, in the order to apply them: after `events`, each after the starts it needs. They stay
 * kept until `release`. Call in the transaction that applies `events`. `codeGroup`: this node's.
 */
export function readyWrites(store: Store, events: readonly AgentEvent[], codeGroup: number): ReadyWrite[] {
  if (keptCount(store) === 0) return [];
  const started = new Set<string>();
  const queue: string[] = [];
  const start = (vmId: string) => {
    if (started.has(vmId)) return;
    started.add(vmId);
    queue.push(vmId);
  };
  for (const event of events) if (event.type === 'vm.start') start(event.vmId);
  const ready: ReadyWrite[] = [];
  const taken = new Set<number>();
  const known = (vmId: string) => started.has(vmId) || store.vmRows.get(vmId) !== undefined;
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const key of store.meta.getKeys({ start: `${BY_VM}${next}/`, end: `${BY_VM}${next}/\uffff` })) {
      const seq = Number(String(key).slice(String(key).lastIndexOf('/') + 1));
      const write = taken.has(seq) ? undefined : kept(store, seq);
      if (write === undefined || !write.vmIds.every(known)) continue;
      taken.add(seq);
      const command = decodeCommand(Buffer.from(write.data, 'base64'));
      if (command.kind === 'tags') ready.push({ seq, edit: command.edit });
      else if (command.kind === 'events') {
        const writeEvents = loggedEvents(command, codeGroup).decode();
        ready.push({ seq, events: writeEvents });
        for (const event of writeEvents) if (event.type === 'vm.start') start(event.vmId);
      }
    }
  }
  return ready;
}

/**
 * Applies the ready writes' tag edits (their batches' events are applied with the batch that made them ready)
 * and keeps them no longer. Call in that batch's transaction, once its events are written. Gives what to log.
 */
export function release(store: Store, dict: Dictionary, ready: readonly ReadyWrite[]): { seq: number; skipped?: string }[] {
  const applied: { seq: number; skipped?: string }[] = [];
  for (const write of ready) {
    let skipped: string | undefined;
    if ('edit' in write) {
      try {
        writeTagEdit(store, dict, write.edit);
      } catch (error) {
        // A remove of a tag the VM lacks: skipped, as on every node reading this history.
        if (!(error instanceof MissingTagError)) throw error;
        skipped = error.message;
      }
    }
    const { vmIds } = kept(store, write.seq)!;
    store.meta.remove(WRITE + seqKey(write.seq));
    for (const vmId of vmIds) store.meta.remove(`${BY_VM}${vmId}/${seqKey(write.seq)}`);
    applied.push(skipped === undefined ? { seq: write.seq } : { seq: write.seq, skipped });
  }
  if (applied.length > 0) store.meta.put(COUNT, keptCount(store) - applied.length);
  return applied;
}
