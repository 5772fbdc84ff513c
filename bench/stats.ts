// Summary statistics of measured samples (latencies in ms): mean and nearest-rank percentiles.

export interface Summary {
  count: number;
  mean: number;
  min: number;
  p50: number;
  p99: number;
  max: number;
}

/** One decimal, as figures are shown. */
export function round1(value: number): number {
  return Math.round(value * 10) / 10;
}

/** Samples grow in a typed array: a long HTTP run records millions of latencies without boxing them. */
export class Samples {
  #values = new Float64Array(1024);
  #count = 0;

  add(value: number): void {
    if (this.#count === this.#values.length) {
      const grown = new Float64Array(this.#values.length * 2);
      grown.set(this.#values);
      this.#values = grown;
    }
    this.#values[this.#count++] = value;
  }

  addAll(other: Samples): void {
    for (const value of other.values()) this.add(value);
  }

  values(): Float64Array {
    return this.#values.subarray(0, this.#count);
  }

  get count(): number {
    return this.#count;
  }
}

/** The value at rank ceil(p/100 * n) of sorted samples (nearest-rank percentile). */
function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export function summarize(values: ArrayLike<number>): Summary {
  if (values.length === 0) return { count: 0, mean: Number.NaN, min: Number.NaN, p50: Number.NaN, p99: Number.NaN, max: Number.NaN };
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (const value of sorted) sum += value;
  return {
    count: sorted.length,
    mean: sum / sorted.length,
    min: sorted[0],
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1],
  };
}
