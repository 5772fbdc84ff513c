// The fleet's rows in the ungrouped JVM report's default order (hostName, then vmId, by code point; a null
// hostName last), kept between reports by a worker thread: sorting 100,000 VMs by two strings took a third
// of that report's kernel, and between two reports a fleet mostly gains rows rather than changing hosts.
import { codePointComparator, compareCodePoints } from '../../../collation.ts';
import type { FleetColumnsView } from '../../../storage/fleet-columns.ts';

type Lookup = (id: number) => string | null;
type Compare = (a: string, b: string) => number;

/** hostName then vmId, by `compare`; a null hostName sorts last (decisions §6.3). */
export function compareHostVm(compare: Compare, hostA: string | null, vmA: string, hostB: string | null, vmB: string): number {
  if (hostA !== hostB) {
    if (hostA === null) return 1;
    if (hostB === null) return -1;
    const order = compare(hostA, hostB);
    if (order !== 0) return order;
  }
  return compare(vmA, vmB);
}

export class RowOrder {
  /** The hostName id of each row when the order was made: a row keeps its vmId, but may change host. */
  #hosts: Uint32Array = new Uint32Array(0);
  #order: Uint32Array = new Uint32Array(0);

  /**
   * Every row of the fleet in the default order: the kept order when no row changed host, with the
   * rows added since merged in; sorted afresh otherwise.
   */
  rows(fleet: FleetColumnsView, lookup: Lookup): Uint32Array {
    const hosts = fleet.strings.hostName;
    const known = this.#hosts.length;
    let changed = known > fleet.rows;
    for (let row = 0; row < known && !changed; row++) changed = hosts[row] !== this.#hosts[row];
    if (!changed && known === fleet.rows) return this.#order;
    if (changed || known === 0) this.#order = sortRows(fleet, lookup, 0, fleet.rows);
    else this.#order = mergeRows(fleet, lookup, this.#order, sortRows(fleet, lookup, known, fleet.rows));
    this.#hosts = hosts.slice(0, fleet.rows);
    return this.#order;
  }
}

/** Rows [start, end) in the default order. */
function sortRows(fleet: FleetColumnsView, lookup: Lookup, start: number, end: number): Uint32Array {
  const hosts: (string | null)[] = [];
  const vms: string[] = [];
  for (let row = start; row < end; row++) {
    hosts.push(lookup(fleet.strings.hostName[row]));
    vms.push(lookup(fleet.strings.vmId[row]) ?? '');
  }
  const by = codePointComparator([...hosts, ...vms]);
  const order = Array.from({ length: end - start }, (_, k) => k).sort((a, b) => compareHostVm(by, hosts[a], vms[a], hosts[b], vms[b]));
  return Uint32Array.from(order, (k) => start + k);
}

/** Two runs of rows, each in the default order, as one. */
function mergeRows(fleet: FleetColumnsView, lookup: Lookup, a: Uint32Array, b: Uint32Array): Uint32Array {
  const merged = new Uint32Array(a.length + b.length);
  const host = (row: number) => lookup(fleet.strings.hostName[row]);
  const vm = (row: number) => lookup(fleet.strings.vmId[row]) ?? '';
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) {
    merged[k++] = compareHostVm(compareCodePoints, host(b[j]), vm(b[j]), host(a[i]), vm(a[i])) < 0 ? b[j++] : a[i++];
  }
  merged.set(a.subarray(i), k);
  merged.set(b.subarray(j), k + a.length - i);
  return merged;
}
