// Evaluates compiled conditions over integer-encoded columns into a row mask: the report hot path.
import type { FieldDef } from './fields.ts';
import type { Condition } from './filter.ts';
import type { NumericTest } from './predicate.ts';

/**
 * One field over the rows: dictionary ids (0 = missing) with the dictionary's lookup, or numbers
 * (NaN = missing). `lookup` must always give the same string for an id: its results are memoised per
 * condition for as long as the same lookup function is passed.
 */
export type Column =
  | { kind: 'dict'; ids: Uint32Array; lookup(id: number): string | null }
  | { kind: 'number'; values: Float64Array };

// Per condition, the outcome of each dictionary id seen so far: 0 not tested yet, 0b11 passes, 0b10
// fails. Bit 0 counts a passing row and bit 1 says the id was tested, both without a branch.
const PASS = 0b11;
const FAIL = 0b10;

interface Memo {
  lookup: (id: number) => string | null;
  outcomes: Uint8Array;
}

const memos = new WeakMap<Condition, Memo>();

function memoFor(condition: Condition, lookup: Memo['lookup']): Memo {
  let memo = memos.get(condition);
  if (memo === undefined || memo.lookup !== lookup) {
    memo = { lookup, outcomes: new Uint8Array(1024) };
    memos.set(condition, memo);
  }
  return memo;
}

// The cold path: the first row with this id tests its string, once for every later row.
function learn(memo: Memo, condition: Condition, id: number): void {
  if (id >= memo.outcomes.length) {
    const grown = new Uint8Array(Math.max(id + 1, memo.outcomes.length * 2));
    grown.set(memo.outcomes);
    memo.outcomes = grown;
  }
  memo.outcomes[id] = condition.test(memo.lookup(id)) ? PASS : FAIL;
}

// Rows are filtered a block at a time into selection vectors (the rows still passing, ascending): the
// first condition scans the block, each later one only the survivors, and the mask is written once.
// That is several times faster than one full pass per condition over the mask.
const BLOCK = 4096;

// The hot loops read outcomes without checking them; they only note whether some id was not learned yet
// (outcome 0, or undefined past the table's end: both shift to 0), and the caller then learns the
// block's ids and reruns it.
// A check-and-learn inside the loop costs about twice as much per row.
function dictScan(outcomes: Uint8Array, ids: Uint32Array, out: Uint32Array, start: number, end: number): number {
  let kept = 0;
  let tested = 1;
  for (let row = start; row < end; row++) {
    const outcome = outcomes[ids[row]];
    out[kept] = row;
    kept += outcome & 1;
    tested &= outcome >> 1;
  }
  return tested === 1 ? kept : -1;
}

function dictSelect(outcomes: Uint8Array, ids: Uint32Array, rows: Uint32Array, count: number, out: Uint32Array): number {
  let kept = 0;
  let tested = 1;
  for (let k = 0; k < count; k++) {
    const row = rows[k];
    const outcome = outcomes[ids[row]];
    out[kept] = row;
    kept += outcome & 1;
    tested &= outcome >> 1;
  }
  return tested === 1 ? kept : -1;
}

function learnRows(memo: Memo, condition: Condition, ids: Uint32Array, rows: Uint32Array | null, from: number, to: number): void {
  for (let k = from; k < to; k++) {
    const id = ids[rows === null ? k : rows[k]];
    if (id >= memo.outcomes.length || memo.outcomes[id] === 0) learn(memo, condition, id);
  }
}

function inside(bounds: Float64Array, v: number): number {
  for (let k = 0; k < bounds.length; k += 2) {
    if (+(v >= bounds[k]) & +(v <= bounds[k + 1])) return 1;
  }
  return 0;
}

// Comparisons combine with `&`, not `&&`, and become numbers with unary `+`, not `? 1 : 0`: V8 compiles
// both of those to branches, which mispredict on random data (3 to 4 times slower). NaN fails both.
function numberScan(numeric: NumericTest, values: Float64Array, out: Uint32Array, start: number, end: number): number {
  const { bounds } = numeric;
  const flip = numeric.negate ? 1 : 0;
  let kept = 0;
  if (bounds.length === 2) {
    const low = bounds[0];
    const high = bounds[1];
    for (let row = start; row < end; row++) {
      const v = values[row];
      out[kept] = row;
      kept += (+(v >= low) & +(v <= high)) ^ flip;
    }
    return kept;
  }
  for (let row = start; row < end; row++) {
    out[kept] = row;
    kept += inside(bounds, values[row]) ^ flip;
  }
  return kept;
}

function numberSelect(numeric: NumericTest, values: Float64Array, rows: Uint32Array, count: number, out: Uint32Array): number {
  const { bounds } = numeric;
  const flip = numeric.negate ? 1 : 0;
  let kept = 0;
  if (bounds.length === 2) {
    const low = bounds[0];
    const high = bounds[1];
    for (let k = 0; k < count; k++) {
      const row = rows[k];
      const v = values[row];
      out[kept] = row;
      kept += (+(v >= low) & +(v <= high)) ^ flip;
    }
    return kept;
  }
  for (let k = 0; k < count; k++) {
    const row = rows[k];
    out[kept] = row;
    kept += inside(bounds, values[row]) ^ flip;
  }
  return kept;
}

/** A condition bound to its column: `scan` filters a block of rows, `select` the survivors of earlier stages. */
interface Stage {
  scan(out: Uint32Array, start: number, end: number): number;
  select(rows: Uint32Array, count: number, out: Uint32Array): number;
}

function dictStage(condition: Condition, memo: Memo, ids: Uint32Array): Stage {
  return {
    scan(out, start, end) {
      const kept = dictScan(memo.outcomes, ids, out, start, end);
      if (kept >= 0) return kept;
      learnRows(memo, condition, ids, null, start, end);
      return dictScan(memo.outcomes, ids, out, start, end);
    },
    select(rows, count, out) {
      const kept = dictSelect(memo.outcomes, ids, rows, count, out);
      if (kept >= 0) return kept;
      learnRows(memo, condition, ids, rows, 0, count);
      return dictSelect(memo.outcomes, ids, rows, count, out);
    },
  };
}

function stageOf(condition: Condition, column: Column, rowCount: number): Stage {
  const name = condition.field.name;
  if (column.kind === 'dict') {
    if (column.ids.length < rowCount) throw new RangeError(`column ${name} holds ${column.ids.length} rows, not ${rowCount}`);
    return dictStage(condition, memoFor(condition, column.lookup), column.ids);
  }
  if (column.values.length < rowCount) throw new RangeError(`column ${name} holds ${column.values.length} rows, not ${rowCount}`);
  const numeric = condition.numeric;
  if (numeric === undefined) throw new TypeError(`${name} (${condition.field.type}) is not numeric: give it a dict column`);
  const values = column.values;
  return {
    scan: (out, start, end) => numberScan(numeric, values, out, start, end),
    select: (rows, count, out) => numberSelect(numeric, values, rows, count, out),
  };
}

/**
 * The stages by how few rows of the first block pass them, so that later stages see fewer survivors.
 * The conditions are ANDed: the order changes the cost, never the result.
 */
function bySelectivity(stages: Stage[], scratch: Uint32Array, sample: number): Stage[] {
  if (stages.length < 2) return stages;
  const passing = stages.map((stage) => stage.scan(scratch, 0, sample));
  return stages.map((stage, k) => ({ stage, kept: passing[k] })).sort((a, b) => a.kept - b.kept).map(({ stage }) => stage);
}

/**
 * A 0/1 mask of the rows (0 ≤ row < rowCount) that pass every condition. `columnFor` gives each
 * condition's field as a column of at least rowCount entries; `into` (at least rowCount long) is reused
 * when given, and only its first rowCount bytes are written.
 */
export function evaluateConditions(conditions: readonly Condition[], columnFor: (field: FieldDef) => Column, rowCount: number, into?: Uint8Array): Uint8Array {
  const mask = into ?? new Uint8Array(rowCount);
  if (mask.length < rowCount) throw new RangeError(`mask holds ${mask.length} rows, not ${rowCount}`);
  const stages = conditions.map((condition) => stageOf(condition, columnFor(condition.field), rowCount));
  if (stages.length === 0) return mask.fill(1, 0, rowCount);
  let rows = new Uint32Array(BLOCK);
  let spare = new Uint32Array(BLOCK);
  const [first, ...rest] = bySelectivity(stages, rows, Math.min(rowCount, BLOCK));
  for (let start = 0; start < rowCount; start += BLOCK) {
    const end = Math.min(rowCount, start + BLOCK);
    let count = first.scan(rows, start, end);
    for (const stage of rest) {
      count = stage.select(rows, count, spare);
      const passed = spare;
      spare = rows;
      rows = passed;
    }
    mask.fill(0, start, end);
    for (let k = 0; k < count; k++) mask[rows[k]] = 1;
  }
  return mask;
}
