// Deterministic pseudo-random numbers (mulberry32): the same seed always gives the same fleet.

export class Random {
  #state: number;

  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    let t = (this.#state = (this.#state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }

  /** Picks with the given weights (not necessarily summing to 1). */
  weighted<T>(items: readonly (readonly [T, number])[]): T {
    const total = items.reduce((sum, [, weight]) => sum + weight, 0);
    let point = this.next() * total;
    for (const [item, weight] of items) {
      point -= weight;
      if (point < 0) return item;
    }
    return items[items.length - 1][0];
  }

  /** A hex string shaped like a UUID, for vmIds. */
  uuid(): string {
    const hex = (n: number) => Array.from({ length: n }, () => this.int(16).toString(16)).join('');
    return `${hex(8)}-${hex(4)}-4${hex(3)}-${(8 + this.int(4)).toString(16)}${hex(3)}-${hex(12)}`;
  }
}

/** A uniform [0, 1) generator from a seed, for code that wants a plain function. */
export function seeded(seed: number): () => number {
  const random = new Random(seed);
  return () => random.next();
}
