// Time buckets of groupBy (decisions §6.3): a VM counts once in every UTC year, month, ISO week or day it was alive in.

const DAY = 86_400_000;
export const TIME_FIELDS: readonly string[] = ['year', 'month', 'week', 'day'];

/** ISO-8601 week number (1–53) of a UTC day: the week of its Thursday, counted from that year's first week. */
export function isoWeek(time: number): number {
  const date = new Date(Math.floor(time / DAY) * DAY);
  const weekday = date.getUTCDay() || 7;
  date.setUTCDate(date.getUTCDate() + 4 - weekday);
  const yearStart = Date.UTC(date.getUTCFullYear(), 0, 1);
  return Math.ceil(((date.getTime() - yearStart) / DAY + 1) / 7);
}

function bucketValue(field: string, day: number): number {
  const date = new Date(day);
  switch (field) {
    case 'year':
      return date.getUTCFullYear();
    case 'month':
      return date.getUTCMonth() + 1;
    case 'week':
      return isoWeek(day);
    default:
      return date.getUTCDate();
  }
}

/**
 * The distinct tuples of the given time fields over the UTC days of [start, end] ∩ [from, to];
 * empty when the life is outside the window.
 */
export function timeTuples(fields: readonly string[], start: number, end: number, from: number, to: number): number[][] {
  const first = Math.max(start, from);
  const last = Math.min(end, to);
  if (first > last) return [];
  const tuples: number[][] = [];
  const seen = new Set<string>();
  for (let day = Math.floor(first / DAY) * DAY; day <= last; day += DAY) {
    const tuple = fields.map((field) => bucketValue(field, day));
    const key = tuple.join(',');
    if (!seen.has(key)) {
      seen.add(key);
      tuples.push(tuple);
    }
  }
  return tuples;
}
