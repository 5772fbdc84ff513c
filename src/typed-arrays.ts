// Typed-array helpers: growing columns (indexes keep one typed array per field instead of one object per row), and look-ups in sorted ones.

/** The array, or a copy at least twice as long when it is shorter than size; new slots hold `fill`. */
export function grown<T extends Uint8Array | Uint32Array | Float64Array>(array: T, size: number, fill = 0): T {
  if (array.length >= size) return array;
  const next = new (array.constructor as new (length: number) => T)(Math.max(size, array.length * 2, 1024));
  next.set(array);
  if (fill !== 0) next.fill(fill, array.length);
  return next;
}

/** Whether the first count values of a sorted array hold a value. */
export function sortedHas(sorted: ArrayLike<number>, count: number, value: number): boolean {
  let low = 0;
  let high = count;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (sorted[mid] < value) low = mid + 1;
    else high = mid;
  }
  return low < count && sorted[low] === value;
}
