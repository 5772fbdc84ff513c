// The fields each report family exposes to filter, groupBy and sortBy, with their types (decisions §7, §8, §9).
import { validateTagKey } from '../ingest/tag-rules.ts';
import type { Operator } from './grammar.ts';

export type FieldType = 'string' | 'integer' | 'number' | 'time' | 'version' | 'enum';

/** What a field belongs to: the VM, the component of a (VM, component) pair, a code record, or a time bucket. */
export type FieldScope = 'vm' | 'component' | 'code' | 'time';

export interface FieldDef {
  name: string;
  type: FieldType;
  scope: FieldScope;
  /** The values of an `enum` field. */
  values?: readonly string[];
  /** For `tags.K` (and `AppEnv`, the AppEnv tag): the tag key K. */
  tagKey?: string;
  /** For `systemProperties.K`: the property name K. */
  propertyKey?: string;
  /** Operators a filter may use on the field, when fewer than its type admits; empty: not filterable. */
  operators?: readonly Operator[];
  /** false when the field cannot be a groupBy field. */
  groupable?: boolean;
}

export interface FieldCatalog {
  family: 'jvmInventory' | 'codeInventory' | 'component';
  lookup(name: string): FieldDef | undefined;
  /** The static field names, then the dynamic ones as patterns (`tags.<key>`): for error messages. */
  names(): string[];
}

/** A dynamic field family such as `tags.<key>`: the prefix and how a key becomes a field. */
export interface DynamicFields {
  prefix: string;
  define(key: string): FieldDef | undefined;
}

export function createCatalog(family: FieldCatalog['family'], fields: readonly FieldDef[], dynamic: readonly DynamicFields[] = []): FieldCatalog {
  const byName = new Map(fields.map((field) => [field.name, field]));
  const dynamicNames = dynamic.map((d) => `${d.prefix}<key>`);
  return {
    family,
    lookup(name) {
      const known = byName.get(name);
      if (known !== undefined) return known;
      const family = dynamic.find((d) => name.startsWith(d.prefix));
      return family?.define(name.slice(family.prefix.length));
    },
    names: () => [...byName.keys(), ...dynamicNames],
  };
}

const VM_STATES = ['RUNNING', 'OFFLINE', 'TERMINATED'] as const;

// decisions §6.3: time buckets group (never filter) jvmInventory and component reports.
const timeBuckets: FieldDef[] = ['year', 'month', 'week', 'day'].map((name) => ({ name, type: 'integer', scope: 'time', operators: [] }));

const tags: DynamicFields = {
  prefix: 'tags.',
  define: (key) => (validateTagKey(key) === null ? { name: `tags.${key}`, type: 'string', scope: 'vm', tagKey: key } : undefined),
};

const systemProperties: DynamicFields = {
  prefix: 'systemProperties.',
  define: (key) => (key.length > 0 ? { name: `systemProperties.${key}`, type: 'string', scope: 'vm', propertyKey: key } : undefined),
};

function vmString(name: string): FieldDef {
  return { name, type: 'string', scope: 'vm' };
}

const state: FieldDef = { name: 'state', type: 'enum', scope: 'vm', values: VM_STATES };
// The AppEnv tag, which also keys code records (decisions §4).
const appEnvTag: FieldDef = { name: 'AppEnv', type: 'string', scope: 'vm', tagKey: 'AppEnv' };

export const jvmInventoryFields: FieldCatalog = createCatalog(
  'jvmInventory',
  [
    vmString('vmId'), vmString('hostName'), state, vmString('agentVersion'), vmString('agentRevision'),
    vmString('mailbox'), vmString('mainMethod'),
    { name: 'startTime', type: 'time', scope: 'vm' }, { name: 'lastHeardTime', type: 'time', scope: 'vm' },
    vmString('javaVersion'), vmString('javaVendor'), vmString('osName'), vmString('osArch'), appEnvTag,
    ...timeBuckets,
  ],
  [tags, systemProperties],
);

export const codeInventoryFields: FieldCatalog = createCatalog('codeInventory', [
  { name: 'sourceName', type: 'string', scope: 'code' },
  { name: 'className', type: 'string', scope: 'code' },
  { name: 'methodName', type: 'string', scope: 'code' },
  { name: 'AppEnv', type: 'string', scope: 'code' },
  // Sort keys of the items, not filter fields: the report window (`from`, `to`) selects on them.
  { name: 'firstSeen', type: 'time', scope: 'code', operators: [] },
  { name: 'lastSeen', type: 'time', scope: 'code', operators: [] },
]);

/** The code-report fields `field:value` applies to, and the only groupBy prefix (decisions §8). */
export const CODE_PATH = ['sourceName', 'className', 'methodName'] as const;

export const componentFields: FieldCatalog = createCatalog(
  'component',
  [
    { name: 'componentName', type: 'string', scope: 'component' },
    { name: 'componentVersion', type: 'version', scope: 'component' },
    vmString('vmId'), vmString('hostName'), state, appEnvTag,
    // A component has any number of CVEs: a filter asks whether it has one (that matches), and no single
    // value could be its group.
    { name: 'cveId', type: 'string', scope: 'component', operators: ['=', '!=', 'IN', '= null', '!= null'], groupable: false },
    { name: 'score', type: 'number', scope: 'component' },
    ...timeBuckets,
  ],
  [tags],
);
