// VM state is derived when read (decisions §4), never stored, so it is always current.
import type { VmRecord } from './records.ts';

export type VmState = 'RUNNING' | 'OFFLINE' | 'TERMINATED';
export const VM_STATES: readonly VmState[] = ['RUNNING', 'OFFLINE', 'TERMINATED'];

export type VmTimes = Pick<VmRecord, 'startTime' | 'lastHeardTime' | 'stopTime'>;

export function isTerminated(vm: VmTimes): boolean {
  return vm.stopTime !== null && vm.stopTime >= vm.startTime;
}

export function vmState(vm: VmTimes, now: number, offlineAfterMs: number): VmState {
  if (isTerminated(vm)) return 'TERMINATED';
  return now - vm.lastHeardTime > offlineAfterMs ? 'OFFLINE' : 'RUNNING';
}
