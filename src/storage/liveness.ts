// In-memory start/heard/stop times of every VM: answers "VMs by state" without reading the store. Loaded when
// first asked (only /metrics asks), so start-up does not wait for it, and again after another process wrote.
import { grown } from '../typed-arrays.ts';
import type { VmRecord } from './records.ts';
import type { Store } from './store.ts';
import { decodeScanRow } from './vm-scan.ts';
import type { ScanRow } from './vm-scan.ts';
import { VM_STATES, vmState } from './vm-state.ts';
import type { VmState, VmTimes } from './vm-state.ts';

type Times = Pick<ScanRow, 'startTime' | 'lastHeardTime' | 'stopTime'>;

export class Liveness {
  readonly #store: Store;
  #loaded = false;
  // Columns by row, no object per VM; NaN start time where no VM is, NaN stop time for a VM never stopped.
  #startTime = new Float64Array(0);
  #lastHeardTime = new Float64Array(0);
  #stopTime = new Float64Array(0);
  #size = 0;

  constructor(store: Store) {
    this.#store = store;
  }

  /** Another process wrote to the store: the next question reloads the times. */
  invalidate(): void {
    this.#loaded = false;
  }

  update(record: VmRecord): void {
    // Not loaded yet: the load will read this record from the store.
    if (this.#loaded) this.#set(record.row, { startTime: record.startTime, lastHeardTime: record.lastHeardTime, stopTime: record.stopTime ?? Number.NaN });
  }

  get size(): number {
    this.#load();
    return this.#size;
  }

  countByState(now: number, offlineAfterMs: number): Record<VmState, number> {
    this.#load();
    const counts = Object.fromEntries(VM_STATES.map((state) => [state, 0])) as Record<VmState, number>;
    const times: VmTimes = { startTime: 0, lastHeardTime: 0, stopTime: null };
    for (let row = 0; row < this.#startTime.length; row++) {
      if (Number.isNaN(this.#startTime[row])) continue;
      times.startTime = this.#startTime[row];
      times.lastHeardTime = this.#lastHeardTime[row];
      times.stopTime = Number.isNaN(this.#stopTime[row]) ? null : this.#stopTime[row];
      counts[vmState(times, now, offlineAfterMs)]++;
    }
    return counts;
  }

  /** Reads every VM's binary scan row, in one range read, unless loaded. */
  #load(): void {
    if (this.#loaded) return;
    const rows = (this.#store.meta.get('rowNext') as number | undefined) ?? 0;
    this.#startTime = new Float64Array(rows).fill(Number.NaN);
    this.#lastHeardTime = new Float64Array(rows);
    this.#stopTime = new Float64Array(rows);
    this.#size = 0;
    const scan: ScanRow = { startTime: 0, lastHeardTime: 0, stopTime: 0, vmId: 0, hostName: 0 };
    for (const { key, value } of this.#store.vmScan.getRange()) this.#set(key, decodeScanRow(value, scan));
    this.#loaded = true;
  }

  #set(row: number, times: Times): void {
    if (row >= this.#startTime.length) {
      this.#startTime = grown(this.#startTime, row + 1, Number.NaN);
      this.#lastHeardTime = grown(this.#lastHeardTime, row + 1);
      this.#stopTime = grown(this.#stopTime, row + 1);
    }
    if (Number.isNaN(this.#startTime[row])) this.#size++;
    this.#startTime[row] = times.startTime;
    this.#lastHeardTime[row] = times.lastHeardTime;
    this.#stopTime[row] = times.stopTime;
  }
}
