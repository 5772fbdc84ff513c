// What each report family can filter, group, sort and list (decisions §7, §8, §9): shared by the
// request validation at the edge and the kernels that bind its plan.
import { codeInventoryFields, componentFields, jvmInventoryFields } from '../../parser/fields.ts';
import type { FieldCatalog } from '../../parser/fields.ts';
import type { ReportFamily } from './report-types.ts';

export const CATALOGS: Record<ReportFamily, FieldCatalog> = {
  jvmInventory: jvmInventoryFields,
  codeInventory: codeInventoryFields,
  component: componentFields,
};

/** The fields of an ungrouped JVM inventory item (decisions §7). */
export const JVM_ITEM_FIELDS = ['vmId', 'hostName', 'state', 'agentVersion', 'javaVersion', 'javaVendor', 'startTime', 'lastHeardTime'] as const;
export const CODE_ITEM_FIELDS = ['sourceName', 'className', 'methodName', 'firstSeen', 'lastSeen'] as const;

/** The fields sortBy may name, given the groupBy fields (decisions §6.3, §7, §8, §9). */
export function sortableFields(family: ReportFamily, groupBy: readonly string[]): string[] {
  if (family === 'component') return [...groupBy, 'componentName', 'componentVersion', 'count'];
  if (family === 'jvmInventory') return groupBy.length > 0 ? [...groupBy, 'count'] : [...JVM_ITEM_FIELDS, 'tags.<key>'];
  return groupBy.length > 0 ? [...groupBy, 'firstSeen', 'lastSeen', 'count'] : [...CODE_ITEM_FIELDS];
}
