// What one agent event may hold (README "Limits"): enforced at validation, so storage never sees a value it
// cannot store. Strings that become LMDB keys (dictionary strings, class keys, component identities) must
// stay well under LMDB's 1,978-byte key limit, together with what shares their key.

/** Times outside this window are rejected: a JavaScript Date cannot hold them, or a clock is broken. */
export const EARLIEST_TIME = Date.UTC(2000, 0, 1);
/** How far ahead of the service clock an event may be (agents' clocks drift; a year ahead is a bug). */
export const FUTURE_SLACK_MS = 24 * 3_600_000;

/** Longest values in UTF-8 bytes, by field. */
export const MAX_BYTES = {
  agentVersion: 128,
  agentRevision: 128,
  mailbox: 256,
  hostName: 255,
  mainMethod: 1024,
  /** System properties the service keeps as dictionary strings (Java version, vendor, OS). */
  keyedProperty: 256,
  systemProperty: 256 * 1024,
  annotationKey: 128,
  annotationValue: 4096,
  /** A code item's key is [sourceName, className, AppEnv]: 512 + 1024 + 256 bytes stay under LMDB's limit. */
  sourceName: 512,
  className: 1024,
  methodName: 1024,
  componentName: 256,
  componentVersion: 128,
  groupId: 256,
  /** Any string inside inventory.osEnvironment, inventory.cpuInfo or jvmInfo. */
  freeText: 64 * 1024,
} as const;

/** A code item's `methodNames` holds at most this many: a class file has at most 65,535 methods. */
export const MAX_METHODS_PER_CLASS = 65_535;

/** Objects inside inventory and jvmInfo nest at most this deep (msgpack encoding recurses). */
export const MAX_DEPTH = 8;

/** Whether a string's UTF-8 encoding fits `maxBytes`; counts bytes only when its length cannot decide. */
export function fitsBytes(value: string, maxBytes: number): boolean {
  if (value.length * 3 <= maxBytes) return true;
  if (value.length > maxBytes) return false;
  return Buffer.byteLength(value, 'utf8') <= maxBytes;
}
