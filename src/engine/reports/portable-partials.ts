// A partition's result as another node can read it: a component partial names its components (name and
// version) instead of using this node's component ids, and every array is a plain one, so the value
// crosses the network as msgpack and is read back into the receiving node's ids (src/cluster/fan-out.ts).
import { findComponentId } from '../../storage/components.ts';
import type { Store } from '../../storage/store.ts';
import type { ComponentPartial } from './kernels/component.ts';
import { countStart } from './kernels/component-counts.ts';
import type { JvmPartial } from './kernels/jvm.ts';
import type { GroupValue, ReportRequest } from './report-types.ts';
import type { PartialResult } from './tasks.ts';

export interface PortableComponentPartial {
  kind: 'component';
  groups: GroupValue[][];
  /** [componentName, componentVersion] of each component counted: `counts` and `vmIds` refer to them by position. */
  components: [string, string][];
  /** Every group's [position, count, …], group after group; group g's end at `countEnds[g]`. */
  counts: number[];
  countEnds: number[];
  vmIds: Record<number, string[]>[] | null;
  vmCount: number;
}

export type JvmGroupsPartial = Extract<JvmPartial, { kind: 'groups' }>;

export type PortablePartial = PortableComponentPartial | JvmGroupsPartial;

/**
 * Whether a report's partitions give results small beside the work (counts per group): only those are worth
 * sending between nodes. A list of VMs or of code is as large as the report itself.
 */
export function hasPortablePartials(request: ReportRequest): boolean {
  return request.family === 'component' || (request.family === 'jvmInventory' && request.groupBy.length > 0);
}

/** A partition's result for another node; `store` names this node's component ids. */
export function toPortable(store: Store, request: ReportRequest, partial: PartialResult): PortablePartial {
  if (request.family === 'jvmInventory') {
    const jvm = partial as JvmPartial;
    if (jvm.kind !== 'groups') throw new Error(`a JVM partition of kind ${jvm.kind} is not portable`);
    return jvm;
  }
  const component = partial as ComponentPartial;
  const position = new Map<number, number>();
  const components: [string, string][] = [];
  for (const id of component.components) {
    const record = store.components.get(id);
    if (record === undefined) throw new Error(`component ${id} is not in this node's store`);
    position.set(id, components.length);
    components.push([record.componentName, record.componentVersion]);
  }
  const at = (id: number): number => position.get(id)!;
  const counts = Array.from(component.counts, (value, k) => (k % 2 === 0 ? at(value) : value));
  const vmIds = component.vmIds?.map((byId) => Object.fromEntries(Object.entries(byId).map(([id, ids]) => [at(Number(id)), ids]))) ?? null;
  return { kind: 'component', groups: component.groups, components, counts, countEnds: Array.from(component.countEnds), vmIds, vmCount: component.vmCount };
}

/**
 * Another node's partition result in this node's ids. Throws when it counts a component this node does not
 * know: the caller first applies the log as far as the other node had.
 */
export function fromPortable(store: Store, portable: PortablePartial): PartialResult {
  if (portable.kind === 'groups') return portable;
  const ids = portable.components.map(([name, version]) => {
    const id = findComponentId(store, name, version);
    if (id === undefined) throw new Error(`component ${name} ${version} is not known on this node`);
    return id;
  });
  // Each group's pairs ascend by component id, as a partition's do.
  const counts = new Uint32Array(portable.counts.length);
  const pairs: [number, number][] = [];
  for (let g = 0; g < portable.groups.length; g++) {
    pairs.length = 0;
    const start = countStart(portable, g);
    for (let k = start; k < portable.countEnds[g]; k += 2) pairs.push([ids[portable.counts[k]], portable.counts[k + 1]]);
    pairs.sort((a, b) => a[0] - b[0]);
    pairs.forEach(([id, count], p) => {
      counts[start + 2 * p] = id;
      counts[start + 2 * p + 1] = count;
    });
  }
  const vmIds = portable.vmIds?.map((byPosition) => Object.fromEntries(Object.entries(byPosition).map(([position, list]) => [ids[Number(position)], list]))) ?? null;
  return {
    groups: portable.groups,
    counts,
    countEnds: Uint32Array.from(portable.countEnds),
    vmIds,
    vmCount: portable.vmCount,
    components: Uint32Array.from(ids).sort(),
  } satisfies ComponentPartial;
}
