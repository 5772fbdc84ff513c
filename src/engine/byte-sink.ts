// A growable byte buffer written at its end: the report engine's encoded items and the CVE events page's items.

type Latin1Writer = Buffer & { latin1Write(value: string, offset: number): number };

/**
 * Buffer's own latin1Write (undocumented, in Node and Deno) when there is one: write()'s argument
 * checks cost ~300 ns a call, which is most of the cost of writing a short string.
 */
const latin1Write: (bytes: Buffer, value: string, at: number) => number =
  typeof (Buffer.prototype as Partial<Latin1Writer>).latin1Write === 'function'
    ? (bytes, value, at) => (bytes as Latin1Writer).latin1Write(value, at)
    : (bytes, value, at) => bytes.write(value, at, 'latin1');

/**
 * A buffer of its own (never Node's shared pool), so that it can be transferred; not zero-filled, so
 * the memory of its unwritten tail is never touched and costs address space only.
 */
const ownBuffer = (size: number): Buffer => Buffer.allocUnsafeSlow(size);

/** A growable byte buffer; callers reserve room, then write at `length`. */
export class ByteSink {
  bytes: Buffer;
  length = 0;

  /** `from`: a size to allocate, or a buffer to write into from its start (grown into a new one if need be). */
  constructor(from: number | Buffer = 1 << 20) {
    this.bytes = typeof from === 'number' ? ownBuffer(from) : from;
  }

  reserve(extra: number): void {
    if (this.length + extra <= this.bytes.length) return;
    this.growTo(Math.max(this.length + extra, this.bytes.length * 2));
  }

  /** Moves the bytes to a buffer of `size`: for a writer that knows how far it will grow. */
  growTo(size: number): void {
    const grown = ownBuffer(size);
    this.bytes.copy(grown, 0, 0, this.length);
    this.bytes = grown;
  }

  /** UTF-8 of `value`; room for 3 bytes per UTF-16 unit must be reserved. */
  utf8(value: string): void {
    this.length += this.bytes.write(value, this.length);
  }

  /** One byte per character (each below 256): ASCII text, or bytes carried in a string. */
  latin1(value: string): void {
    this.length += latin1Write(this.bytes, value, this.length);
  }

  copy(value: Uint8Array): void {
    if (value.length < 32) {
      // A loop beats set() on the short pieces items are made of (a call costs more than the bytes).
      const { bytes } = this;
      let at = this.length;
      for (let i = 0; i < value.length; i++) bytes[at++] = value[i];
      this.length = at;
      return;
    }
    this.bytes.set(value, this.length);
    this.length += value.length;
  }

  /** Bytes [from, to) written earlier, again. */
  repeat(from: number, to: number): void {
    this.bytes.copyWithin(this.length, from, to);
    this.length += to - from;
  }

  byte(value: number): void {
    this.bytes[this.length++] = value;
  }

  /** The bytes written, without copying. */
  written(): Uint8Array {
    return new Uint8Array(this.bytes.buffer, this.bytes.byteOffset, this.length);
  }
}
