// Time expressions (decisions §6.1): `Xd`, `Xm`, ISO 8601 and epoch ms, resolved to epoch ms against a given now.
import type { IToken } from 'chevrotain';
import { parseTimeExpression } from './grammar.ts';
import { IsoTime, NumberLiteral, RelativeTime } from './lexer.ts';
import { describe, Problem, withOrigin } from './problem.ts';

const DAY = 86_400_000;
// The range of a JavaScript Date.
const MAX_TIME = 8.64e15;

const TIME_FORMS = ['Xd (days before now)', 'Xm (months before now)', 'yyyy-MM-ddTHH:mm:ss.SSS with an optional zone (Z, +02:00, +0200)', 'epoch milliseconds'];

/**
 * What a time expression denotes, as an inclusive range of epoch ms: a day for `Xd`, `Xm` and a bare
 * date (`2026-11-21`), a single instant for a time of day or epoch ms.
 */
export interface TimeSpan {
  open: number;
  close: number;
}

function dayOf(start: number): TimeSpan {
  return { open: start, close: start + DAY - 1 };
}

// Date.UTC reads years 0–99 as 1900–1999; setUTCFullYear does not.
function utc(year: number, month: number, day: number, hour = 0, minute = 0, second = 0, ms = 0): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month, day);
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime();
}

function daysInMonth(year: number, month: number): number {
  return new Date(utc(year, month + 1, 0)).getUTCDate();
}

function inRange(span: TimeSpan, token: IToken): TimeSpan {
  if (Number.isFinite(span.open) && Number.isFinite(span.close) && Math.abs(span.open) <= MAX_TIME && Math.abs(span.close) <= MAX_TIME) return span;
  throw new Problem(`'${token.image}' is out of the range of representable times`, token.startOffset, token.image, TIME_FORMS);
}

function relative(token: IToken, now: number): TimeSpan {
  const count = Number(token.image.slice(0, -1));
  const today = new Date(now);
  if (token.image.slice(-1).toLowerCase() === 'd') {
    return inRange(dayOf(utc(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - count)), token);
  }
  // decisions §6.1: the same day of the month, clamped to the last day of a shorter month.
  const year = today.getUTCFullYear();
  const month = today.getUTCMonth() - count;
  const day = Math.min(today.getUTCDate(), daysInMonth(year, month));
  return inRange(dayOf(utc(year, month, day)), token);
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|([+-])(\d{2})(?::?(\d{2}))?)?)?$/;

function iso(token: IToken): TimeSpan {
  const bad = (what: string): Problem => new Problem(`'${token.image}' has ${what}`, token.startOffset, token.image, TIME_FORMS);
  const m = ISO.exec(token.image);
  if (m === null) throw bad('an unknown form');
  const [year, month, day] = [Number(m[1]), Number(m[2]) - 1, Number(m[3])];
  if (month < 0 || month > 11) throw bad(`no month ${m[2]}`);
  if (day < 1 || day > daysInMonth(year, month)) throw bad(`no day ${m[3]} in ${m[1]}-${m[2]}`);
  if (m[4] === undefined) return inRange(dayOf(utc(year, month, day)), token);
  const [hour, minute, second] = [Number(m[4]), Number(m[5]), Number(m[6] ?? 0)];
  if (hour > 23 || minute > 59 || second > 59) throw bad('no such time of day');
  // Digits past milliseconds are dropped: the service keeps epoch ms.
  const ms = Number((m[7] ?? '').padEnd(3, '0').slice(0, 3));
  let offset = 0;
  if (m[9] !== undefined) {
    const [hours, minutes] = [Number(m[10]), Number(m[11] ?? 0)];
    if (hours > 23 || minutes > 59) throw bad('no such zone offset');
    offset = (m[9] === '-' ? -1 : 1) * (hours * 60 + minutes) * 60_000;
  }
  const instant = utc(year, month, day, hour, minute, second, ms) - offset;
  return inRange({ open: instant, close: instant }, token);
}

function epoch(token: IToken): TimeSpan {
  if (!/^-?\d+$/.test(token.image)) {
    throw new Problem(`'${token.image}' is not whole epoch milliseconds`, token.startOffset, token.image, TIME_FORMS);
  }
  const instant = Number(token.image);
  return inRange({ open: instant, close: instant }, token);
}

/** The span of a lexed time token: IsoTime, RelativeTime or NumberLiteral (epoch ms). Throws Problem. */
export function timeSpanOfToken(token: IToken, now: number): TimeSpan {
  if (token.tokenType === RelativeTime) return relative(token, now);
  if (token.tokenType === IsoTime) return iso(token);
  if (token.tokenType === NumberLiteral) return epoch(token);
  throw new Problem(`'${token.image}' is not a time`, token.startOffset, token.image, TIME_FORMS);
}

/** The span of a time expression given as text. Throws Problem. */
export function timeSpanOfText(text: string, now: number): TimeSpan {
  try {
    return timeSpanOfToken(parseTimeExpression(text), now);
  } catch (error) {
    // The grammar lists token labels; a time's error lists the forms of decisions §6.1 instead.
    if (error instanceof Problem) throw new Problem(error.message, error.offset, error.text, TIME_FORMS);
    throw error;
  }
}

/**
 * A time parameter as epoch ms. A day (`Xd`, `Xm`, a bare date) resolves to its first millisecond when it
 * opens a window and to its last when it closes one (decisions §6.1); an instant resolves to itself.
 * Anything else is a BAD_TIME ApiError naming `parameter`.
 */
export function resolveTime(value: unknown, role: 'open' | 'close', now: number, parameter: string): number {
  const source = typeof value === 'string' ? value : describe(value);
  return withOrigin({ code: 'BAD_TIME', parameter, source }, () => {
    let span: TimeSpan;
    if (typeof value === 'string') span = timeSpanOfText(value, now);
    else if (typeof value === 'number' && Number.isSafeInteger(value) && Math.abs(value) <= MAX_TIME) span = { open: value, close: value };
    else throw new Problem('a time is a string or whole epoch milliseconds', 0, source, TIME_FORMS);
    return role === 'open' ? span.open : span.close;
  });
}
