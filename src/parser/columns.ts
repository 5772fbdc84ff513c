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

// Per condition, the outcome of each dictionary id seen so far: 0 not tested yet, 1 passes, 2 fails,
// so that `outcome & PASS` counts a passing row without a branch.
const PASS = 1;
const FAIL = 2;

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

// The cold path: the first row with this id tests its string once for every later row.
function learn(memo: Memo, condition: Condition, id: number): Uint8Array {
  if (id >= memo.outcomes.length) {
    const grown = new Uint8Array(Math.max(id + 1, memo.outcomes.length * 2));
    grown.set(memo.outcomes);
    memo.outcomes = grown;
  }
  memo.outcomes[id] = condition.test(memo.lookup(id)) ? PASS : FAIL;
  return memo.outcomes;
}

// Rows are filtered a block at a time into a selection vector (the rows still passing, ascending): the
// first condition scans the block, each later one only the survivors, and the mask is written once.
// This is several times faster than one full pass per condition over the mask.
const BLOCK = 4096;

function dictScan(condition: Condition, memo: Memo, ids: Uint32Array, sel: Uint32Array, start: number, end: number): number {
  let outcomes = memo.outcomes;
  let known = outcomes.length;
  let kept = 0;
  for (let row = start; row < end; row++) {
    const id = ids[row];
    let outcome = id < known ? outcomes[id] : 0;
    if (outcome === 0) {
      outcomes = learn(memo, condition, id);
      known = outcomes.length;
      outcome = outcomes[id];
    }
    sel[kept] = row;
    kept += outcome & PASS;
  }
  return kept;
}

function dictSelect(condition: Condition, memo: Memo, ids: Uint32Array, sel: Uint32Array, count: number): number {
  let outcomes = memo.outcomes;
  let known = outcomes.length;
  let kept = 0;
  for (let k = 0; k < count; k++) {
    const row = sel[k];
    const id = ids[row];
    let outcome = id < known ? outcomes[id] : 0;
    if (outcome === 0) {
      outcomes = learn(memo, condition, id);
      known = outcomes.length;
      outcome = outcomes[id];
    }
    sel[kept] = row;
    kept += outcome & PASS;
  }
  return kept;
}

function inside(bounds: Float64Array, v: number): number {
  for (let k = 0; k < bounds.length; k += 2) {
    if (v >= bounds[k] && v <= bounds[k + 1]) return 1;
  }
  return 0;
}

// Comparisons combine with `&`, not `&&`: random data would mispredict the branch. NaN fails both.
function numberScan(numeric: NumericTest, values: Float64Array, sel: Uint32Array, start: number, end: number): number {
  const { bounds } = numeric;
  const flip = numeric.negate ? 1 : 0;
  let kept = 0;
  if (bounds.length === 2) {
    const low = bounds[0];
    const high = bounds[1];
    for (let row = start; row < end; row++) {
      const v = values[row];
      sel[kept] = row;
      kept += ((v >= low ? 1 : 0) & (v <= high ? 1 : 0)) ^ flip;
    }
    return kept;
  }
  for (let row = start; row < end; row++) {
    sel[kept] = row;
    kept += inside(bounds, values[row]) ^ flip;
  }
  return kept;
}

function numberSelect(numeric: NumericTest, values: Float64Array, sel: Uint32Array, count: number): number {
  const { bounds } = numeric;
  const flip = numeric.negate ? 1 : 0;
  let kept = 0;
  if (bounds.length === 2) {
    const low = bounds[0];
    const high = bounds[1];
    for (let k = 0; k < count; k++) {
      const row = sel[k];
      const v = values[row];
      sel[kept] = row;
      kept += ((v >= low ? 1 : 0) & (v <= high ? 1 : 0)) ^ flip;
    }
    return kept;
  }
  for (let k = 0; k < count; k++) {
    const row = sel[k];
    sel[kept] = row;
    kept += inside(bounds, values[row]) ^ flip;
  }
  return kept;
}

/** A condition bound to its column, ready to filter blocks. */
interface Stage {
  scan(sel: Uint32Array, start: number, end: number): number;
  select(sel: Uint32Array, count: number): number;
}

function stageOf(condition: Condition, column: Column, rowCount: number): Stage {
  const name = condition.field.name;
  if (column.kind === 'dict') {
    if (column.ids.length < rowCount) throw new RangeError(`column ${name} holds ${column.ids.length} rows, not ${rowCount}`);
    const memo = memoFor(condition, column.lookup);
    const ids = column.ids;
    return {
      scan: (sel, start, end) => dictScan(condition, memo, ids, sel, start, end),
      select: (sel, count) => dictSelect(condition, memo, ids, sel, count),
    };
  }
  if (column.values.length < rowCount) throw new RangeError(`column ${name} holds ${column.values.length} rows, not ${rowCount}`);
  const numeric = condition.numeric;
  if (numeric === undefined) throw new TypeError(`${name} (${condition.field.type}) is not numeric: give it a dict column`);
  const values = column.values;
  return {
    scan: (sel, start, end) => numberScan(numeric, values, sel, start, end),
    select: (sel, count) => numberSelect(numeric, values, sel, count),
  };
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
  const [first, ...rest] = stages;
  const sel = new Uint32Array(BLOCK);
  for (let start = 0; start < rowCount; start += BLOCK) {
    const end = Math.min(rowCount, start + BLOCK);
    let count = first.scan(sel, start, end);
    for (const stage of rest) count = stage.select(sel, count);
    mask.fill(0, start, end);
    for (let k = 0; k < count; k++) mask[sel[k]] = 1;
  }
  return mask;
}
