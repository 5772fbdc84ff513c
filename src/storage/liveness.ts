// In-memory start/heard/stop times of every VM: answers "VMs by state" without reading the store.
import type { VmRecord } from './records.ts';
import type { Store } from './store.ts';
import { readScanRow } from './vm-scan.ts';
import { VM_STATES, vmState } from './vm-state.ts';
import type { VmState, VmTimes } from './vm-state.ts';

export class Liveness {
  readonly #times = new Map<number, VmTimes>();

  /** Rebuilds from the store's binary scan rows: at start, and when another process wrote to it. */
  load(store: Store): void {
    this.#times.clear();
    const rows = (store.meta.get('rowNext') as number | undefined) ?? 0;
    for (let row = 0; row < rows; row++) {
      const scan = readScanRow(store, row);
      if (scan !== undefined) this.#times.set(row, { startTime: scan.startTime, lastHeardTime: scan.lastHeardTime, stopTime: Number.isNaN(scan.stopTime) ? null : scan.stopTime });
    }
  }

  update(record: VmRecord): void {
    this.#times.set(record.row, { startTime: record.startTime, lastHeardTime: record.lastHeardTime, stopTime: record.stopTime });
  }

  get size(): number {
    return this.#times.size;
  }

  countByState(now: number, offlineAfterMs: number): Record<VmState, number> {
    const counts = Object.fromEntries(VM_STATES.map((state) => [state, 0])) as Record<VmState, number>;
    for (const times of this.#times.values()) counts[vmState(times, now, offlineAfterMs)]++;
    return counts;
  }
}
