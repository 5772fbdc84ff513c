// Short uint32 lists, one per row, packed in one growing array: an index of 100,000 VMs allocates no object per VM.
import { grown } from '../../typed-arrays.ts';

export class PackedLists {
  /** Row r's list is values[at[r] .. at[r] + length[r]). */
  values: Uint32Array;
  at: Uint32Array;
  length: Uint32Array;
  #end = 0;

  /** Room for `rows` lists of about `perRow` values before any growth. */
  constructor(rows: number, perRow: number) {
    this.values = new Uint32Array(Math.max(4096, rows * perRow));
    this.at = new Uint32Array(rows);
    this.length = new Uint32Array(rows);
  }

  /** Sets a row's list to count values of source: in place when it fits (lists rarely grow), else at the end. */
  set(row: number, source: ArrayLike<number>, count: number): void {
    if (row >= this.at.length) {
      this.at = grown(this.at, row + 1);
      this.length = grown(this.length, row + 1);
    }
    if (count > this.length[row]) {
      this.values = grown(this.values, this.#end + count);
      this.at[row] = this.#end;
      this.#end += count;
    }
    for (let k = 0; k < count; k++) this.values[this.at[row] + k] = source[k];
    this.length[row] = count;
  }

  /** A copy of a row's list. */
  copy(row: number): Uint32Array {
    return row < this.at.length ? this.values.slice(this.at[row], this.at[row] + this.length[row]) : new Uint32Array(0);
  }
}
