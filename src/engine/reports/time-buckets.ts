// Time buckets of groupBy (decisions §6.3): a VM counts once in every UTC year, month, ISO week or day it was alive in.

const DAY = 86_400_000;

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

/** The values of the time fields (year, month, ISO week, day of month) for one UTC day. */
export function bucketTuple(fields: readonly string[], day: number): number[] {
  return fields.map((field) => bucketValue(field, day));
}
