// Times as `yyyy-MM-ddTHH:mm:ss.SSS` bytes, written without a Date per time: a code report writes two million
// of them, so the calendar date (once per day, kept) and the time of day come from int32 arithmetic.

const DAY = 86_400_000;
/** `yyyy-MM-ddTHH:mm:ss.SSS` is 23 bytes. */
export const TIME_BYTES = 23;
/** Day numbers of 0000-03-01 and 9999-12-31: the arithmetic below holds between them. */
const FIRST_DAY = -719_468;
const LAST_DAY = 2_932_896;

/** "00" to "99" as byte pairs. */
const DIGIT_PAIRS = Uint8Array.from({ length: 200 }, (_, i) => 0x30 + (i % 2 === 0 ? Math.floor(i / 20) : (i >> 1) % 10));

/** `yyyy-MM-ddT` is 11 bytes. */
const DATE_BYTES = 11;
/**
 * The dates of recent days as bytes, by day number modulo DAY_SLOTS, with the day each slot holds: a report's
 * times fall on a few days, and the calendar arithmetic costs as much as the rest of a time.
 */
const DAY_SLOTS = 256;
const slotDay = new Float64Array(DAY_SLOTS).fill(Number.NaN);
const slotDates = new Uint8Array(DAY_SLOTS * DATE_BYTES);

/**
 * Writes `yyyy-MM-ddT` for a day number into `slotDates` at `start`. The date is H. Hinnant's
 * civil_from_days.
 */
function writeDate(day: number, start: number): void {
  // Days since 0000-03-01, in 400-year eras of 146,097 days; a year from March, so leap days come last.
  const days = day - FIRST_DAY;
  const era = (days / 146_097) | 0;
  const dayOfEra = days - era * 146_097;
  const yearOfEra = ((dayOfEra - ((dayOfEra / 1460) | 0) + ((dayOfEra / 36_524) | 0) - ((dayOfEra / 146_096) | 0)) / 365) | 0;
  const dayOfYear = dayOfEra - (365 * yearOfEra + ((yearOfEra / 4) | 0) - ((yearOfEra / 100) | 0));
  const monthFromMarch = ((5 * dayOfYear + 2) / 153) | 0;
  const date = dayOfYear - (((153 * monthFromMarch + 2) / 5) | 0) + 1;
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
  const year = era * 400 + yearOfEra + (month <= 2 ? 1 : 0);
  const century = (year / 100) | 0;
  const yearOfCentury = year - century * 100;
  const bytes = slotDates;
  let at = start;
  bytes[at++] = DIGIT_PAIRS[2 * century];
  bytes[at++] = DIGIT_PAIRS[2 * century + 1];
  bytes[at++] = DIGIT_PAIRS[2 * yearOfCentury];
  bytes[at++] = DIGIT_PAIRS[2 * yearOfCentury + 1];
  bytes[at++] = 0x2d;
  bytes[at++] = DIGIT_PAIRS[2 * month];
  bytes[at++] = DIGIT_PAIRS[2 * month + 1];
  bytes[at++] = 0x2d;
  bytes[at++] = DIGIT_PAIRS[2 * date];
  bytes[at++] = DIGIT_PAIRS[2 * date + 1];
  bytes[at] = 0x54;
}

/**
 * Writes `yyyy-MM-ddTHH:mm:ss.SSS` (no zone, interface §2.4) as toISOString writes it; reserve 23 bytes.
 * A time outside years 0–9999 (never stored: ingestion refuses it) goes through a Date.
 */
export function writeTimeBytes(bytes: Uint8Array, start: number, time: number): void {
  const day = Math.floor(time / DAY);
  if (day < FIRST_DAY || day > LAST_DAY) {
    bytes.set(Buffer.from(new Date(time).toISOString().slice(0, TIME_BYTES), 'latin1'), start);
    return;
  }
  const slot = day & (DAY_SLOTS - 1);
  const from = slot * DATE_BYTES;
  if (slotDay[slot] !== day) {
    writeDate(day, from);
    slotDay[slot] = day;
  }
  let at = start;
  for (let k = 0; k < DATE_BYTES; k++) bytes[at++] = slotDates[from + k];
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
