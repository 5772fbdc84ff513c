// Maven version order: the semantics of maven-artifact 3.9's ComparableVersion, on cached parsed forms.
//
// A version parses into a list of items. Each list holds scalars (numbers, qualifiers) and at most one
// sub-list, always last: a `-` or a digit↔letter transition opens a sub-list that takes every item after
// it. So a parsed version is a chain of lists, and every walk below is a loop, never a recursion: a
// hostile version of a million `-` cannot overflow the stack.

/**
 * One item of a parsed version. Numbers keep ComparableVersion's size classes, which decide the order
 * before the value does (IntItem < LongItem < BigIntegerItem): up to 9 digits a `number`, up to 18 a
 * `bigint`, beyond a `BigNumber`. A qualifier is its comparable form (see `comparableQualifier`).
 */
type Item = number | bigint | BigNumber | string | Item[];

interface BigNumber {
  readonly big: bigint;
}

/** A parsed version: compare two with `compareParsedMavenVersions`. */
export interface MavenVersion {
  readonly version: string;
  readonly items: readonly unknown[];
  /** The order of a plain version as one number (see `plainKey`), or -1. */
  readonly key: number;
}

// Known qualifiers in ascending order; the empty qualifier is a release (ComparableVersion.QUALIFIERS).
const QUALIFIERS = ['alpha', 'beta', 'milestone', 'rc', 'snapshot', '', 'sp'];
const ALIASES: Record<string, string> = { ga: '', final: '', release: '', cr: 'rc' };
const RELEASE = String(QUALIFIERS.indexOf(''));
const UNKNOWN_PREFIX = `${QUALIFIERS.length}-`;

const NUMBER = 0;
const LONG = 1;
const BIG = 2;
const QUALIFIER = 3;
const LIST = 4;

function kindOf(item: Item): number {
  switch (typeof item) {
    case 'number':
      return NUMBER;
    case 'bigint':
      return LONG;
    case 'string':
      return QUALIFIER;
    default:
      return Array.isArray(item) ? LIST : BIG;
  }
}

/** Known qualifiers become their rank, unknown ones sort after them, lexically (ComparableVersion). */
function comparableQualifier(value: string, followedByDigit: boolean): string {
  let qualifier = value;
  if (followedByDigit && value.length === 1) {
    // a1 = alpha-1, b1 = beta-1, m1 = milestone-1
    if (value === 'a') qualifier = 'alpha';
    else if (value === 'b') qualifier = 'beta';
    else if (value === 'm') qualifier = 'milestone';
  }
  qualifier = Object.hasOwn(ALIASES, qualifier) ? ALIASES[qualifier] : qualifier;
  const rank = QUALIFIERS.indexOf(qualifier);
  return rank === -1 ? UNKNOWN_PREFIX + qualifier : String(rank);
}

function qualifierText(comparable: string): string {
  return comparable.startsWith(UNKNOWN_PREFIX) ? comparable.slice(UNKNOWN_PREFIX.length) : QUALIFIERS[Number(comparable)];
}

// Java's Character.isDigit: Unicode category Nd, tested per UTF-16 unit as Java does.
const UNICODE_DIGIT = /^\p{Nd}$/u;

function isDigitAt(text: string, index: number): boolean {
  const c = text.charCodeAt(index);
  if (c < 0x80) return c >= 0x30 && c <= 0x39;
  return UNICODE_DIGIT.test(text[index]);
}

/** Unicode Nd digits come in aligned runs of ten (0 to 9), so a digit's value is its offset in its run. */
function unicodeDigitValue(c: number): number {
  let offset = 0;
  while (UNICODE_DIGIT.test(String.fromCharCode(c - offset - 1))) offset++;
  return offset % 10;
}

function toAsciiDigits(digits: string): string {
  let ascii = '';
  for (let i = 0; i < digits.length; i++) {
    const c = digits.charCodeAt(i);
    ascii += c < 0x80 ? digits[i] : String(unicodeDigitValue(c));
  }
  return ascii;
}

function parseNumber(digits: string): Item {
  // ComparableVersion strips leading ASCII '0's only, and keeps an all-zero run whole; the length left
  // picks the size class.
  let start = 0;
  while (start < digits.length && digits.charCodeAt(start) === 0x30) start++;
  const stripped = start === digits.length ? digits : digits.slice(start);
  const ascii = toAsciiDigits(stripped);
  if (stripped.length <= 9) return Number(ascii);
  if (stripped.length <= 18) return BigInt(ascii);
  return { big: BigInt(ascii) };
}

function parseItem(isDigit: boolean, text: string): Item {
  return isDigit ? parseNumber(text) : comparableQualifier(text, false);
}

function isNull(item: Item): boolean {
  switch (kindOf(item)) {
    case NUMBER:
      return item === 0;
    case LONG:
      return item === 0n;
    case BIG:
      return (item as BigNumber).big === 0n;
    case QUALIFIER:
      return item === RELEASE;
    default:
      return (item as Item[]).length === 0;
  }
}

/** Removes trailing null items (0, release qualifiers, empty lists), looking through sub-lists. */
function normalize(list: Item[]): void {
  for (let i = list.length - 1; i >= 0; i--) {
    const item = list[i];
    if (isNull(item)) list.splice(i, 1);
    else if (!Array.isArray(item)) break;
  }
}

function parseItems(version: string): Item[] {
  const text = version.toLowerCase();
  const root: Item[] = [];
  const chain: Item[][] = [root];
  let list = root;
  const nest = (): void => {
    const sub: Item[] = [];
    list.push(sub);
    list = sub;
    chain.push(sub);
  };
  let isDigit = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x2e /* . */) {
      list.push(i === start ? 0 : parseItem(isDigit, text.slice(start, i)));
      start = i + 1;
    } else if (c === 0x2d /* - */) {
      list.push(i === start ? 0 : parseItem(isDigit, text.slice(start, i)));
      start = i + 1;
      nest();
    } else if (isDigitAt(text, i)) {
      if (!isDigit && i > start) {
        // 1.0.0.X1 < 1.0.0-X2: a qualifier after a dot nests like one after a hyphen (MNG-7644)
        if (list.length > 0) nest();
        list.push(comparableQualifier(text.slice(start, i), true));
        start = i;
        nest();
      }
      isDigit = true;
    } else {
      if (isDigit && i > start) {
        list.push(parseNumber(text.slice(start, i)));
        start = i;
        nest();
      }
      isDigit = false;
    }
  }
  if (text.length > start) {
    if (!isDigit && list.length > 0) nest();
    list.push(parseItem(isDigit, text.slice(start)));
  }
  // Innermost first, so a sub-list emptied by normalisation is null to its parent.
  for (let i = chain.length - 1; i >= 0; i--) normalize(chain[i]);
  return root;
}

function sign(n: number): number {
  return n < 0 ? -1 : n > 0 ? 1 : 0;
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function numericValue(item: Item): number | bigint {
  return typeof item === 'object' ? (item as BigNumber).big : (item as number | bigint);
}

/** A scalar (not a list) against a missing item, as `item.compareTo(null)`. */
function compareScalarToNull(item: Item): number {
  if (typeof item === 'string') return compareStrings(item, RELEASE); // 1-rc < 1, 1-sp > 1
  return isNull(item) ? 0 : 1; // 1.0 == 1, 1.1 > 1
}

/** A list against a missing item: its first non-null item decides (MNG-6964). */
function compareListToNull(list: Item[]): number {
  let current = list;
  for (;;) {
    let next: Item[] | undefined;
    for (const item of current) {
      if (Array.isArray(item)) {
        next = item;
        break;
      }
      const result = compareScalarToNull(item);
      if (result !== 0) return result;
    }
    if (next === undefined) return 0;
    current = next;
  }
}

/** Two scalars, or a scalar and a list (the list never on both sides). */
function compareMixed(left: Item, right: Item): number {
  const l = kindOf(left);
  const r = kindOf(right);
  if (l <= BIG && r <= BIG) {
    if (l !== r) return l < r ? -1 : 1;
    const a = numericValue(left);
    const b = numericValue(right);
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (l === QUALIFIER && r === QUALIFIER) return compareStrings(left as string, right as string);
  // Numbers > lists > qualifiers: 1.1 > 1-1 > 1-sp
  const rank = (kind: number): number => (kind <= BIG ? 2 : kind === LIST ? 1 : 0);
  return sign(rank(l) - rank(r));
}

function compareItemLists(left: Item[], right: Item[]): number {
  let a = left;
  let b = right;
  for (;;) {
    const length = Math.max(a.length, b.length);
    let nextA: Item[] | undefined;
    let nextB: Item[] | undefined;
    for (let i = 0; i < length; i++) {
      const l = a[i];
      const r = b[i];
      // The common case, two numbers of at most 9 digits (2.14.1 against 2.15.0), first.
      if (typeof l === 'number' && typeof r === 'number') {
        if (l !== r) return l < r ? -1 : 1;
        continue;
      }
      let result: number;
      if (l === undefined) result = -(Array.isArray(r) ? compareListToNull(r) : compareScalarToNull(r));
      else if (r === undefined) result = Array.isArray(l) ? compareListToNull(l) : compareScalarToNull(l);
      else if (Array.isArray(l) && Array.isArray(r)) {
        // Both sub-lists are last in their lists: continue the walk inside them.
        nextA = l;
        nextB = r;
        break;
      } else result = compareMixed(l, r);
      if (result !== 0) return result;
    }
    if (nextA === undefined || nextB === undefined) return 0;
    a = nextA;
    b = nextB;
  }
}

/** Maven's getCanonical(): items joined by '.', a sub-list by '-', each separator only after text. */
function canonicalOf(items: Item[]): string {
  const segments: string[] = [];
  let current: Item[] | undefined = items;
  while (current !== undefined) {
    let text = '';
    let next: Item[] | undefined;
    for (const item of current) {
      if (Array.isArray(item)) {
        next = item;
        break;
      }
      if (text.length > 0) text += '.';
      text += typeof item === 'string' ? qualifierText(item) : String(numericValue(item));
    }
    segments.push(text);
    current = next;
  }
  let canonical = segments[segments.length - 1];
  for (let i = segments.length - 2; i >= 0; i--) {
    canonical = segments[i].length > 0 ? `${segments[i]}-${canonical}` : canonical;
  }
  return canonical;
}

// Versions repeat across a fleet and are compared millions of times when sorting and matching: keep the
// parsed forms of recently used versions in two generations. A full young generation becomes the old one
// (the previous old one is dropped), and a hit in the old generation moves back into the young one: an
// approximate LRU of 50k to 100k versions at O(1) per call. (Deleting a Map's oldest entry one by one
// would not be O(1): V8 then scans its tombstones on every eviction.)
const GENERATION_SIZE = 50_000;
let young = new Map<string, MavenVersion>();
let old = new Map<string, MavenVersion>();

/** Parses a version once (cached) into the form `compareParsedMavenVersions` compares. */
export function parseMavenVersion(version: string): MavenVersion {
  let parsed = young.get(version);
  if (parsed !== undefined) return parsed;
  parsed = old.get(version);
  if (parsed === undefined) {
    const items = parseItems(version);
    parsed = { version, items, key: plainKey(items) };
  }
  if (young.size >= GENERATION_SIZE) {
    old = young;
    young = new Map();
  }
  young.set(version, parsed);
  return parsed;
}

// A plain version, up to four numbers below 8192 once normalised (2.14.1, 4.3.30.RELEASE), orders as the
// number with those four base-8192 digits, a missing one as 0: in a list of numbers only, a missing item
// compares as 0 does (1 = 1.0, 1 < 1.0.1). Four digits of 13 bits stay below 2^53, so exact. Sorting and
// range matching then compare two numbers instead of walking two lists of boxed items.
const KEY_DIGITS = 4;
const KEY_BASE = 8192;

function plainKey(items: Item[]): number {
  if (items.length > KEY_DIGITS) return -1;
  let key = 0;
  for (let i = 0; i < KEY_DIGITS; i++) {
    const item = i < items.length ? items[i] : 0;
    if (typeof item !== 'number' || item >= KEY_BASE) return -1;
    key = key * KEY_BASE + item;
  }
  return key;
}

/** Maven's getCanonical(): the parsed form written back, e.g. `1-alpha-1` for `1.0a1`. */
export function canonicalMavenVersion(version: string): string {
  return canonicalOf(parseMavenVersion(version).items as Item[]);
}

/** Maven order of two parsed versions: negative, zero or positive. */
export function compareParsedMavenVersions(a: MavenVersion, b: MavenVersion): number {
  if (a === b) return 0;
  if (a.key >= 0 && b.key >= 0) return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
  return compareItemLists(a.items as Item[], b.items as Item[]);
}

/**
 * Maven `ComparableVersion` order: negative when a < b, zero when equal in order, positive when a > b.
 * Like Maven's, the order is not transitive on some contrived versions (1.sp.1 < 1-alpha < 1 < 1.sp.1),
 * so a sort of such versions depends on the algorithm; versions that releases use are unaffected.
 */
export function compareMavenVersions(a: string, b: string): number {
  if (a === b) return 0;
  return compareParsedMavenVersions(parseMavenVersion(a), parseMavenVersion(b));
}
