// Times as `yyyy-MM-ddTHH:mm:ss.SSS` bytes, written without a Date per time: a report's million times fall on
// few days, so the date part is formatted once per day and the time of day in int32 arithmetic.

const DAY = 86_400_000;
/** `yyyy-MM-ddTHH:mm:ss.SSS` is 23 bytes. */
export const TIME_BYTES = 23;
/** `yyyy-MM-ddT` by day number; bounded, since any day may come up. */
const dates = new Map<number, Uint8Array>();
let lastDay = Number.NaN;
let lastDate: Uint8Array = new Uint8Array(0);

function dateBytes(day: number): Uint8Array {
  if (day === lastDay) return lastDate;
  let date = dates.get(day);
  if (date === undefined) {
    if (dates.size >= 100_000) dates.clear();
    date = Buffer.from(new Date(day * DAY).toISOString().slice(0, 11), 'latin1');
    dates.set(day, date);
  }
  lastDay = day;
  lastDate = date;
  return date;
}

/** "00" to "99" as byte pairs. */
const DIGIT_PAIRS = Uint8Array.from({ length: 200 }, (_, i) => 0x30 + (i % 2 === 0 ? Math.floor(i / 20) : (i >> 1) % 10));

/**
 * Writes `yyyy-MM-ddTHH:mm:ss.SSS` (no zone, interface §2.4) as toISOString writes it; reserve 23 bytes.
 * The date part is formatted once per day (a report's two million times fall on few days), the time of
 * day in int32 arithmetic.
 */
export function writeTimeBytes(bytes: Uint8Array, start: number, time: number): void {
  const day = Math.floor(time / DAY);
  const date = dateBytes(day);
  let at = start;
  for (let i = 0; i < date.length; i++) bytes[at++] = date[i];
  let ms = (time - day * DAY) | 0;
  const hours = (ms / 3_600_000) | 0;
  ms -= hours * 3_600_000;
  const minutes = (ms / 60_000) | 0;
  ms -= minutes * 60_000;
  const seconds = (ms / 1000) | 0;
  ms -= seconds * 1000;
  bytes[at++] = DIGIT_PAIRS[2 * hours];
  bytes[at++] = DIGIT_PAIRS[2 * hours + 1];
  bytes[at++] = 0x3a;
  bytes[at++] = DIGIT_PAIRS[2 * minutes];
  bytes[at++] = DIGIT_PAIRS[2 * minutes + 1];
  bytes[at++] = 0x3a;
  bytes[at++] = DIGIT_PAIRS[2 * seconds];
  bytes[at++] = DIGIT_PAIRS[2 * seconds + 1];
  bytes[at++] = 0x2e;
  const hundreds = (ms / 100) | 0;
  ms -= hundreds * 100;
  bytes[at++] = 0x30 + hundreds;
  bytes[at++] = DIGIT_PAIRS[2 * ms];
  bytes[at] = DIGIT_PAIRS[2 * ms + 1];
}

const scratch = Buffer.alloc(TIME_BYTES);

/** The time as code items carry it: `yyyy-MM-ddTHH:mm:ss.SSS`. */
export function codeTime(time: number): string {
  writeTimeBytes(scratch, 0, time);
  return scratch.toString('latin1');
}
