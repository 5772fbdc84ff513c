// Group keys of a VM row: its VM-field values crossed with the time buckets it was alive in.
import type { FieldDef } from '../../parser/fields.ts';
import type { FleetSlice } from '../fleet-slice.ts';
import type { GroupValue } from '../report-types.ts';
import { timeTuples } from '../time-buckets.ts';

export interface GroupPlan {
  fields: FieldDef[];
  vmFields: FieldDef[];
  timeFields: string[];
}

export function groupPlan(fields: FieldDef[]): GroupPlan {
  return {
    fields,
    vmFields: fields.filter((field) => field.scope !== 'time'),
    timeFields: fields.filter((field) => field.scope === 'time').map((field) => field.name),
  };
}

/** Every group tuple (values in groupBy order) row i belongs to, within the window [from, to]. */
export function rowGroups(plan: GroupPlan, slice: FleetSlice, i: number, from: number, to: number): GroupValue[][] {
  const vmValues = plan.vmFields.map((field) => slice.groupValue(field, i));
  if (plan.timeFields.length === 0) return [vmValues];
  const start = slice.records[i].startTime;
  return timeTuples(plan.timeFields, start, slice.lifeEnd(i), from, to).map((tuple) => {
    let vm = 0;
    let time = 0;
    return plan.fields.map((field) => (field.scope === 'time' ? tuple[time++] : vmValues[vm++]));
  });
}

/** A Map key for a tuple of group values. */
export function tupleKey(values: readonly GroupValue[]): string {
  return JSON.stringify(values);
}
