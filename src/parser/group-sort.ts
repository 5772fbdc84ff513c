// The groupBy and sortBy parameters of reports (decisions §6.3, §8): fields in order, and sort keys with directions.
import type { FieldCatalog, FieldDef } from './fields.ts';
import { CODE_PATH } from './fields.ts';
import { parseGroupByEntry, parseSortByEntry } from './grammar.ts';
import { didYouMean, entriesOf, Problem, withOrigin } from './problem.ts';

export interface SortKey {
  field: string;
  direction: 'ASC' | 'DESC';
}

function groupableNames(catalog: FieldCatalog, used: ReadonlySet<string>): string[] {
  return catalog.names().filter((name) => catalog.lookup(name)?.groupable !== false && !used.has(name));
}

/**
 * The groupBy fields in order: catalogue fields, `tags.K`, and the time buckets `year`, `month`, `week`,
 * `day`; for code reports a prefix of sourceName, className, methodName. Errors are BAD_GROUP_BY ApiErrors.
 */
export function parseGroupBy(entries: unknown, catalog: FieldCatalog): FieldDef[] {
  const fields: FieldDef[] = [];
  const used = new Set<string>();
  entriesOf(entries, 'BAD_GROUP_BY', 'groupBy').forEach((text, entry) => {
    withOrigin({ code: 'BAD_GROUP_BY', parameter: 'groupBy', source: text, entry }, () => {
      const token = parseGroupByEntry(text);
      const name = token.image;
      const field = catalog.lookup(name);
      const at = (reason: string, expected: readonly string[]) => new Problem(reason, token.startOffset, name, expected);
      if (catalog.family === 'codeInventory') {
        const next = CODE_PATH[entry];
        if (next === undefined) throw at('code reports group by at most sourceName, className and methodName', ['the end of groupBy']);
        if (name !== next) throw at(`code reports group by a prefix of ${CODE_PATH.join(', ')}`, [next]);
      } else if (used.has(name)) {
        throw at(`${name} is already in groupBy`, groupableNames(catalog, used));
      }
      if (field === undefined || field.groupable === false) {
        const names = groupableNames(catalog, used);
        throw at(`${name} is not a groupBy field${field === undefined ? didYouMean(name, names) : ''}`, names);
      }
      used.add(name);
      fields.push(field);
    });
  });
  return fields;
}

// An allowed entry `prefix.<key>` (as FieldCatalog.names() lists dynamic fields) admits every `prefix.K`.
function isAllowed(name: string, allowed: readonly string[]): boolean {
  return allowed.some((a) => (a.endsWith('.<key>') ? name.startsWith(a.slice(0, -5)) && name.length > a.length - 5 : a === name));
}

/**
 * The sortBy keys: entries `field=ASC|DESC` (direction in any case) on the fields of `allowed`, which
 * may hold `count` and patterns such as `tags.<key>`; a catalogue's names() fit. Errors are BAD_SORT_BY
 * ApiErrors that list `allowed`.
 */
export function parseSortBy(entries: unknown, allowed: readonly string[]): SortKey[] {
  const keys: SortKey[] = [];
  entriesOf(entries, 'BAD_SORT_BY', 'sortBy').forEach((text, entry) => {
    withOrigin({ code: 'BAD_SORT_BY', parameter: 'sortBy', source: text, entry }, () => {
      const { field, direction } = parseSortByEntry(text);
      if (!isAllowed(field.image, allowed)) {
        throw new Problem(`${field.image} is not a sortBy field${didYouMean(field.image, allowed)}`, field.startOffset, field.image, allowed);
      }
      if (keys.some((key) => key.field === field.image)) {
        throw new Problem(`${field.image} is already in sortBy`, field.startOffset, field.image, allowed.filter((name) => !keys.some((key) => key.field === name)));
      }
      keys.push({ field: field.image, direction: direction.image.toUpperCase() as SortKey['direction'] });
    });
  });
  return keys;
}
