// `--compare FILE`: each figure of this run beside the same row of a saved run, matched by suite and name, with new/old.
import type { BenchRow } from './harness.ts';
import { formatNumber, renderTable } from './table.ts';

export interface FigureComparison {
  figure: string;
  current: number;
  saved: number | null;
  /** current / saved; null when the saved run lacks the row or the figure is 0 there. */
  ratio: number | null;
}

export interface RowComparison {
  suite: string;
  name: string;
  size: string;
  inSaved: boolean;
  /** The saved row's size when it differs: its figures were measured on other data. */
  savedSize: string | null;
  figures: FigureComparison[];
}

function rowKey(row: Pick<BenchRow, 'suite' | 'name'>): string {
  return `${row.suite}\u0000${row.name}`;
}

function figure(label: string, current: number, saved: number | null | undefined): FigureComparison {
  const known = saved === null || saved === undefined || !Number.isFinite(saved) ? null : saved;
  return { figure: label, current, saved: known, ratio: known === null || known === 0 ? null : current / known };
}

export function compareRows(current: readonly BenchRow[], saved: readonly BenchRow[]): RowComparison[] {
  const savedByKey = new Map(saved.map((row) => [rowKey(row), row]));
  return current.map((row) => {
    const old = savedByKey.get(rowKey(row));
    const figures = [
      figure(row.unit, row.rate, old?.rate),
      figure('mean ms', row.meanMs, old?.meanMs),
      figure('p50 ms', row.p50Ms, old?.p50Ms),
      figure('p99 ms', row.p99Ms, old?.p99Ms),
      figure('RSS MB', row.rssMb, old?.rssMb),
    ];
    // Numeric extras (e.g. the ratio to the node:http baseline) are figures too.
    for (const [key, value] of Object.entries(row.extra ?? {})) {
      const oldValue = old?.extra?.[key];
      if (typeof value === 'number') figures.push(figure(key, value, typeof oldValue === 'number' ? oldValue : null));
    }
    return { suite: row.suite, name: row.name, size: row.size, inSaved: old !== undefined, savedSize: old !== undefined && old.size !== row.size ? old.size : null, figures };
  });
}

export function formatComparison(comparisons: readonly RowComparison[]): string {
  const body: string[][] = [];
  for (const comparison of comparisons) {
    const size = comparison.savedSize === null ? comparison.size : `${comparison.size} (saved: ${comparison.savedSize})`;
    // A row the saved run lacks gets one line, not one per figure.
    const figures = comparison.inSaved ? comparison.figures : comparison.figures.slice(0, 1);
    figures.forEach((entry, index) => {
      body.push([
        index === 0 ? comparison.suite : '',
        index === 0 ? comparison.name : '',
        index === 0 ? size : '',
        entry.figure,
        formatNumber(entry.current),
        comparison.inSaved ? formatNumber(entry.saved) : 'not in saved run',
        entry.ratio === null ? '-' : entry.ratio.toFixed(2),
      ]);
    });
  }
  return renderTable(['suite', 'name', 'size', 'figure', 'new', 'saved', 'new/old'], body, new Set([4, 5, 6]));
}
