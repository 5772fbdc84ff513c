// Plain-text tables for the terminal: the rows of a run and the extra figures some rows carry.
import type { BenchRow } from './harness.ts';

/** Large figures in full with thousands separators, small ones to three significant digits; '-' when unknown. */
export function formatNumber(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '-';
  if (Math.abs(value) >= 1000) return value.toLocaleString('en-US', { maximumFractionDigits: 0 });
  return value.toLocaleString('en-US', { maximumSignificantDigits: 3 });
}

/** Aligns cells in columns two spaces apart; columns listed in `right` are right-aligned (numbers). */
export function renderTable(header: readonly string[], body: readonly (readonly string[])[], right: ReadonlySet<number>): string {
  const widths = header.map((cell, column) => Math.max(cell.length, ...body.map((row) => row[column].length)));
  const line = (row: readonly string[]) =>
    row.map((cell, column) => (right.has(column) ? cell.padStart(widths[column]) : cell.padEnd(widths[column]))).join('  ').trimEnd();
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...body.map(line)].join('\n');
}

export function formatRows(rows: readonly BenchRow[]): string {
  const header = ['suite', 'name', 'size', 'rate', 'unit', 'mean ms', 'p50 ms', 'p99 ms', 'RSS MB'];
  const body = rows.map((row) => [
    row.suite, row.name, row.size, formatNumber(row.rate), row.unit,
    formatNumber(row.meanMs), formatNumber(row.p50Ms), formatNumber(row.p99Ms), formatNumber(row.rssMb),
  ]);
  return renderTable(header, body, new Set([3, 5, 6, 7, 8]));
}

/** One line per row with extra figures: baseline ratios, what the load generator was, where RSS was measured. */
export function formatExtras(rows: readonly BenchRow[]): string {
  return rows
    .filter((row) => row.extra !== undefined && Object.keys(row.extra).length > 0)
    .map((row) => {
      const figures = Object.entries(row.extra!).map(([key, value]) => `${key}=${typeof value === 'number' ? formatNumber(value) : value}`);
      return `${row.suite} / ${row.name}: ${figures.join(', ')}`;
    })
    .join('\n');
}
