// Growing typed-array columns: indexes keep one typed array per field instead of one object per row.

/** The array, or a copy at least twice as long when it is shorter than size; new slots hold `fill`. */
export function grown<T extends Uint8Array | Uint32Array | Float64Array>(array: T, size: number, fill = 0): T {
  if (array.length >= size) return array;
  const next = new (array.constructor as new (length: number) => T)(Math.max(size, array.length * 2, 1024));
  next.set(array);
  if (fill !== 0) next.fill(fill, array.length);
  return next;
}
