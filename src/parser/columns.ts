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
// so that `mask &= outcome` clears failing rows without a branch.
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

function applyDict(condition: Condition, ids: Uint32Array, lookup: Memo['lookup'], mask: Uint8Array, rowCount: number): void {
  const memo = memoFor(condition, lookup);
  let outcomes = memo.outcomes;
  let known = outcomes.length;
  for (let i = 0; i < rowCount; i++) {
    const id = ids[i];
    let outcome = id < known ? outcomes[id] : 0;
    if (outcome === 0) {
      outcomes = learn(memo, condition, id);
      known = outcomes.length;
      outcome = outcomes[id];
    }
    mask[i] &= outcome;
  }
}

function applyNumber(numeric: NumericTest, values: Float64Array, mask: Uint8Array, rowCount: number): void {
  const { bounds, negate } = numeric;
  if (bounds.length === 2) {
    // One interval, the common case, in a loop of its own. NaN fails both comparisons.
    const low = bounds[0];
    const high = bounds[1];
    const inside = negate ? 0 : 1;
    const outside = negate ? 1 : 0;
    for (let i = 0; i < rowCount; i++) {
      const v = values[i];
      mask[i] &= v >= low && v <= high ? inside : outside;
    }
    return;
  }
  for (let i = 0; i < rowCount; i++) {
    const v = values[i];
    let hit = false;
    for (let k = 0; k < bounds.length; k += 2) {
      if (v >= bounds[k] && v <= bounds[k + 1]) {
        hit = true;
        break;
      }
    }
    mask[i] &= hit !== negate ? 1 : 0;
  }
}

/**
 * A 0/1 mask of the rows (0 ≤ row < rowCount) that pass every condition. `columnFor` gives each
 * condition's field as a column of at least rowCount entries; `into` (at least rowCount long) is reused
 * when given, and only its first rowCount bytes are written.
 */
export function evaluateConditions(conditions: readonly Condition[], columnFor: (field: FieldDef) => Column, rowCount: number, into?: Uint8Array): Uint8Array {
  const mask = into ?? new Uint8Array(rowCount);
  if (mask.length < rowCount) throw new RangeError(`mask holds ${mask.length} rows, not ${rowCount}`);
  mask.fill(1, 0, rowCount);
  for (const condition of conditions) {
    const column = columnFor(condition.field);
    if (column.kind === 'dict') {
      if (column.ids.length < rowCount) throw new RangeError(`column ${condition.field.name} holds ${column.ids.length} rows, not ${rowCount}`);
      applyDict(condition, column.ids, column.lookup, mask, rowCount);
    } else {
      if (column.values.length < rowCount) throw new RangeError(`column ${condition.field.name} holds ${column.values.length} rows, not ${rowCount}`);
      if (condition.numeric === undefined) throw new TypeError(`${condition.field.name} (${condition.field.type}) is not numeric: give it a dict column`);
      applyNumber(condition.numeric, column.values, mask, rowCount);
    }
  }
  return mask;
}
