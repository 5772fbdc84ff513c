// The query language's public surface: what the report engine and the HTTP layer import.
export type { Column } from './columns.ts';
export { evaluateConditions } from './columns.ts';
export type { FieldCatalog, FieldDef, FieldScope, FieldType } from './fields.ts';
export { codeInventoryFields, componentFields, jvmInventoryFields } from './fields.ts';
export type { CompiledFilter, Condition, PlannedCondition } from './filter.ts';
export { bindFilter, compileFilter, planFilter } from './filter.ts';
export type { Operator } from './grammar.ts';
export type { SortKey } from './group-sort.ts';
export { parseGroupBy, parseSortBy } from './group-sort.ts';
export { resolveTime } from './time.ts';
