// Items as a command writes them: a JSON array, NDJSON (one item a line) or CSV (one row an item, nested
// component groups flattened into columns).
export const FORMATS = ['json', 'ndjson', 'csv'] as const;
export type Format = (typeof FORMATS)[number];

type Item = Record<string, unknown>;

/**
 * Component report pages nest items under their group values (interface §2.4): each level is
 * `{field: value, data: [...]}`. Flattened, an item carries its groups' values as fields of its own.
 */
export function flattenNested(level: readonly Item[], outer: Item = {}, into: Item[] = []): Item[] {
  for (const entry of level) {
    if (Array.isArray(entry.data)) {
      const { data, ...values } = entry;
      flattenNested(data as Item[], { ...outer, ...values }, into);
    } else into.push({ ...outer, ...entry });
  }
  return into;
}

function csvCell(value: unknown): string {
  let text: string;
  if (value === null || value === undefined) text = '';
  else if (Array.isArray(value)) text = value.join(' ');
  else if (typeof value === 'object') text = Object.entries(value).map(([key, inner]) => `${key}=${String(inner)}`).join(';');
  else text = String(value);
  // RFC 4180: quote a cell holding a separator, a quote or a line break, doubling its quotes.
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** Writes items in a format, as they come: `write` gets each piece of text in order. */
export class ItemWriter {
  readonly #format: Format;
  readonly #write: (text: string) => void;
  #columns: string[] | null = null;
  /** The header of CSV without items: a script reading the file by its columns finds them. */
  #emptyColumns: readonly string[] = [];
  #count = 0;
  #started = false;

  /** Nothing is written before the first page arrives (`add` or `finish`): a request that fails writes nothing. */
  constructor(format: Format, write: (text: string) => void) {
    this.#format = format;
    this.#write = write;
  }

  /** The columns the items would have, written as CSV's header should none come. */
  expectColumns(columns: readonly string[]): void {
    this.#emptyColumns = columns;
  }

  add(items: readonly Item[]): void {
    this.#start();
    for (const item of items) {
      if (this.#format === 'ndjson') this.#write(`${JSON.stringify(item)}\n`);
      else if (this.#format === 'json') this.#write(`${this.#count === 0 ? '\n' : ',\n'}${JSON.stringify(item)}`);
      else {
        // Columns are the fields of the first page's items, all of them (a report list's items differ: reportName is optional).
        if (this.#columns === null) {
          this.#columns = [...new Set(items.flatMap((each) => Object.keys(each)))];
          this.#write(`${this.#columns.map(csvCell).join(',')}\r\n`);
        }
        this.#write(`${this.#columns.map((column) => csvCell(item[column])).join(',')}\r\n`);
      }
      this.#count++;
    }
  }

  finish(): number {
    this.#start();
    if (this.#format === 'json') this.#write(this.#count === 0 ? ']\n' : '\n]\n');
    if (this.#format === 'csv' && this.#count === 0 && this.#emptyColumns.length > 0) this.#write(`${this.#emptyColumns.map(csvCell).join(',')}\r\n`);
    return this.#count;
  }

  #start(): void {
    if (this.#started) return;
    this.#started = true;
    if (this.#format === 'json') this.#write('[');
  }
}
