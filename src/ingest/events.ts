// Agent events (decisions §4): decoding of the four body formats and validation of every event.
import { Buffer, isAscii } from 'node:buffer';
import { Unpackr } from 'msgpackr';
import { ApiError } from '../errors.ts';
import { parseJson } from '../json-text.ts';
import type { JsonSyntaxError } from '../json-text.ts';
import { EARLIEST_TIME, FUTURE_SLACK_MS, fitsBytes, MAX_BYTES, MAX_DEPTH, MAX_METHODS_PER_CLASS } from './limits.ts';
import { validateTagKey, validateTagValue } from './tag-rules.ts';

export interface CodeItem {
  sourceName: string;
  className: string;
  methodName: string;
}

export interface ComponentItem {
  componentName: string;
  componentVersion: string;
  sourceName: string | null;
  groupId: string | null;
}

export interface VmStartEvent {
  type: 'vm.start';
  vmId: string;
  time: number;
  agentVersion: string;
  agentRevision: string;
  mailbox: string;
  inventory: Record<string, unknown>;
  jvmInfo: Record<string, unknown>;
  tags: Record<string, string>;
  annotations: Record<string, string>;
}

export interface VmEvent {
  type: 'vm.heartbeat' | 'vm.stop';
  vmId: string;
  time: number;
}

export interface CodeEvent {
  type: 'code';
  vmId: string;
  time: number;
  items: CodeItem[];
  /**
   * In a cluster with code groups, a node is given the items of its own group only (src/cluster/commands.ts),
   * and with them every sourceName the event's items came from (what the VM loaded code from): indexes into
   * `names`, which the code events of a batch share, so that a node interns each of a batch's sourceNames
   * once rather than once per event (8,460 names in 78 events per batch of the cluster bench).
   */
  sources?: { names: readonly string[]; refs: readonly number[] };
}

export interface ComponentsEvent {
  type: 'components';
  vmId: string;
  time: number;
  items: ComponentItem[];
}

export type AgentEvent = VmStartEvent | VmEvent | CodeEvent | ComponentsEvent;

export const EVENT_TYPES = ['vm.start', 'vm.heartbeat', 'vm.stop', 'code', 'components'] as const;

const VM_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** decisions §4: a vmId is 1-128 characters of [A-Za-z0-9._:-]. */
export function isVmId(value: string): boolean {
  return VM_ID.test(value);
}
/** A batch's problems are listed up to this many; validation stops there (a 16 MiB body of bad events answers at once). */
const MAX_PROBLEMS = 100;
/** Python's msgpack and Java's msgpack-core write epoch milliseconds as uint64: read 64-bit integers as numbers. */
const unpackr = new Unpackr({ int64AsType: 'number', mapsAsObjects: true });
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The body as text; invalid UTF-8 is a 400, not silently replaced characters. Agent bodies are ASCII but
 * for a rare name: checked at SIMD speed and copied byte for byte, they cost about a third of what the
 * UTF-8 decoder takes, 0.3 µs less per code item of a 10,000-item NDJSON batch (bench "cluster-log", row
 * "body parsed and validated"; bench/HISTORY.md, "Ingestion: agent bodies as text").
 */
export function decodeUtf8(body: Uint8Array): string {
  if (isAscii(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('latin1');
  try {
    return utf8.decode(body);
  } catch {
    throw new ApiError('MALFORMED_BODY', 'body is not valid UTF-8');
  }
}

/** A JSON body's value; JSON that does not parse is a 400 that says where, as `details` do too. */
export function parseJsonBody(text: string): unknown {
  try {
    return parseJson(text);
  } catch (error) {
    const { line, column, offset, message } = error as JsonSyntaxError;
    throw new ApiError('MALFORMED_JSON', `body is not valid JSON at line ${line}, column ${column}: ${message}`, [{ line, column, offset }]);
  }
}

/** Decodes a request body into raw events, by content type (decisions §4). */
export function decodeEventBody(body: Buffer, contentType: string): unknown[] {
  const type = contentType.split(';')[0].trim().toLowerCase();
  if (type === 'application/msgpack' || type === 'application/x-msgpack') {
    let value: unknown;
    try {
      value = unpackr.unpack(body);
    } catch (error) {
      throw new ApiError('MALFORMED_BODY', `body is not valid MessagePack: ${(error as Error).message}`);
    }
    return Array.isArray(value) ? value : [value];
  }
  if (type === 'application/x-ndjson' || type === 'application/ndjson') {
    const events: unknown[] = [];
    const text = decodeUtf8(body);
    let lineNo = 0;
    for (const line of text.split('\n')) {
      lineNo++;
      if (line.trim() === '') continue;
      try {
        events.push(parseJson(line));
      } catch (error) {
        const { column, message } = error as JsonSyntaxError;
        throw new ApiError('MALFORMED_BODY', `line ${lineNo} is not valid JSON at column ${column}: ${message}`, [{ line: lineNo, column }]);
      }
    }
    return events;
  }
  if (type === 'application/json' || type === '') {
    const value = parseJsonBody(decodeUtf8(body));
    return Array.isArray(value) ? value : [value];
  }
  throw new ApiError('UNSUPPORTED_MEDIA_TYPE', `content type '${type}' is not accepted here; send application/json, application/x-ndjson or application/msgpack`);
}

/** Not an Error: a batch of a million bad events must not capture a million stack traces. */
class EventError {
  readonly message: string;
  constructor(message: string) {
    this.message = message;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A problem of one item names it, e.g. `items[3]: 'className' is longer than 1024 bytes`. */
function itemProblem(index: number, error: unknown): unknown {
  return error instanceof EventError ? new EventError(`items[${index}]: ${error.message}`) : error;
}

function checkLength(value: string, path: string, maxBytes: number): void {
  if (!fitsBytes(value, maxBytes)) throw new EventError(`'${path}' is longer than ${maxBytes} bytes`);
}

function text(event: Record<string, unknown>, field: keyof typeof MAX_BYTES, optional = false, allowEmpty = true): string {
  const value = event[field];
  if (value === undefined || value === null) {
    if (optional) return '';
    throw new EventError(`'${field}' is required`);
  }
  if (typeof value !== 'string') throw new EventError(`'${field}' must be a string`);
  if (!allowEmpty && value === '') throw new EventError(`'${field}' must not be empty`);
  checkLength(value, field, MAX_BYTES[field]);
  return value;
}

/** A code item's `methodNames`: the methods of one class, each as a `methodName` would be. */
function methodNames(value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0) throw new EventError(`'methodNames' must be a non-empty array of strings`);
  if (value.length > MAX_METHODS_PER_CLASS) throw new EventError(`'methodNames' holds more than ${MAX_METHODS_PER_CLASS} names (a class file's limit)`);
  for (let m = 0; m < value.length; m++) {
    const name = value[m];
    if (typeof name !== 'string' || name === '') throw new EventError(`'methodNames[${m}]' must be a non-empty string`);
    checkLength(name, `methodNames[${m}]`, MAX_BYTES.methodName);
  }
  return value as string[];
}

/** A free-form JSON value (inventory.osEnvironment, jvmInfo): bounded depth and string sizes. */
function checkFreeValue(value: unknown, path: string, depth: number): void {
  if (typeof value === 'string') {
    checkLength(value, path, MAX_BYTES.freeText);
  } else if (typeof value === 'object' && value !== null) {
    if (depth >= MAX_DEPTH) throw new EventError(`'${path}' nests deeper than ${MAX_DEPTH} levels`);
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) checkFreeValue(value[i], `${path}[${i}]`, depth + 1);
    } else {
      for (const key in value) checkFreeValue((value as Record<string, unknown>)[key], `${path}.${key}`, depth + 1);
    }
  }
}

function object(event: Record<string, unknown>, field: string, optional: boolean): Record<string, unknown> {
  const value = event[field];
  if (value === undefined || value === null) {
    if (optional) return {};
    throw new EventError(`'${field}' is required`);
  }
  if (!isObject(value)) throw new EventError(`'${field}' must be an object`);
  return value;
}

function stringMap(value: Record<string, unknown>, field: string, maxKeyBytes: number, maxValueBytes: (key: string) => number): Record<string, string> {
  for (const [key, entry] of Object.entries(value)) {
    if (!fitsBytes(key, maxKeyBytes)) throw new EventError(`a key of '${field}' ('${key.slice(0, 64)}…') is longer than ${maxKeyBytes} bytes`);
    if (typeof entry !== 'string') throw new EventError(`'${field}.${key}' must be a string`);
    checkLength(entry, `${field}.${key}`, maxValueBytes(key));
  }
  return value as Record<string, string>;
}

/** System properties the service stores as dictionary strings (storage/ingest.ts). */
const KEYED_PROPERTIES = new Set(['java.runtime.version', 'java.version', 'java.vm.vendor', 'os.name', 'os.arch']);
const propertyLimit = (key: string) => (KEYED_PROPERTIES.has(key) ? MAX_BYTES.keyedProperty : MAX_BYTES.systemProperty);

function items(event: Record<string, unknown>): Record<string, unknown>[] {
  const value = event.items;
  if (!Array.isArray(value)) throw new EventError(`'items' must be an array`);
  for (let i = 0; i < value.length; i++) {
    if (!isObject(value[i])) throw new EventError(`'items[${i}]' must be an object`);
  }
  return value as Record<string, unknown>[];
}

function checkFields(event: Record<string, unknown>, allowed: readonly string[]): void {
  for (const key of Object.keys(event)) {
    if (!allowed.includes(key)) throw new EventError(`unknown field '${key}'`);
  }
}

/**
 * An item, whose known fields were checked, holds no other (a misspelt `sourcename` would lose the JAR link
 * silently): its keys are counted, ~10 ns, and named by checkFields only when the count is not `known`.
 */
function checkItemFields(item: Record<string, unknown>, known: number, allowed: readonly string[]): void {
  let count = 0;
  for (const _ in item) count++;
  if (count !== known) checkFields(item, allowed);
}

const COMMON = ['type', 'vmId', 'time'];
const START_FIELDS = [...COMMON, 'agentVersion', 'agentRevision', 'mailbox', 'inventory', 'jvmInfo', 'tags', 'annotations'];
const ITEM_FIELDS = [...COMMON, 'items'];
const CODE_ITEM_FIELDS = ['sourceName', 'className', 'methodName', 'methodNames'];
const COMPONENT_ITEM_FIELDS = ['componentName', 'componentVersion', 'sourceName', 'groupId'];

function validateInventory(inventory: Record<string, unknown>): void {
  if (inventory.systemProperties !== undefined) {
    if (!isObject(inventory.systemProperties)) throw new EventError(`'inventory.systemProperties' must be an object`);
    stringMap(inventory.systemProperties, 'inventory.systemProperties', MAX_BYTES.systemProperty, propertyLimit);
  }
  for (const field of ['hostName', 'mainMethod'] as const) {
    const value = inventory[field];
    if (value === undefined) continue;
    if (typeof value !== 'string') throw new EventError(`'inventory.${field}' must be a string`);
    checkLength(value, `inventory.${field}`, MAX_BYTES[field]);
  }
  for (const [field, value] of Object.entries(inventory)) {
    if (field === 'systemProperties' || field === 'hostName' || field === 'mainMethod') continue;
    if ((field === 'osEnvironment' || field === 'cpuInfo') && !isObject(value)) throw new EventError(`'inventory.${field}' must be an object`);
    checkFreeValue(value, `inventory.${field}`, 1);
  }
}

function checkTime(time: unknown, now: number): number {
  if (typeof time !== 'number' || !Number.isSafeInteger(time) || time < 0) throw new EventError(`'time' must be epoch milliseconds (a non-negative integer)`);
  if (time < EARLIEST_TIME || time > now + FUTURE_SLACK_MS) {
    throw new EventError(`'time' ${time} is outside the accepted window (2000-01-01 to 24 hours past the service clock, ${new Date(now).toISOString()})`);
  }
  return time;
}

function validateTags(tags: Record<string, unknown>): Record<string, string> {
  for (const [key, value] of Object.entries(tags)) {
    const keyProblem = validateTagKey(key);
    if (keyProblem !== null) throw new EventError(`tag '${key}': ${keyProblem}`);
    const valueProblem = typeof value === 'string' ? validateTagValue(value) : 'must be a string';
    if (valueProblem !== null) throw new EventError(`tag '${key}' value: ${valueProblem}`);
  }
  return tags as Record<string, string>;
}

function validateEvent(raw: unknown, now: number): AgentEvent {
  if (!isObject(raw)) throw new EventError('an event must be a JSON object');
  const type = raw.type;
  if (typeof type !== 'string' || !(EVENT_TYPES as readonly string[]).includes(type)) {
    throw new EventError(`'type' must be one of ${EVENT_TYPES.join(', ')}`);
  }
  const vmId = raw.vmId;
  if (typeof vmId !== 'string' || !VM_ID.test(vmId)) throw new EventError(`'vmId' must be 1-128 characters of [A-Za-z0-9._:-]`);
  const time = checkTime(raw.time, now);
  switch (type) {
    case 'vm.start': {
      checkFields(raw, START_FIELDS);
      const inventory = object(raw, 'inventory', false);
      validateInventory(inventory);
      const jvmInfo = object(raw, 'jvmInfo', true);
      checkFreeValue(jvmInfo, 'jvmInfo', 0);
      return {
        type,
        vmId,
        time,
        agentVersion: text(raw, 'agentVersion'),
        agentRevision: text(raw, 'agentRevision'),
        mailbox: text(raw, 'mailbox', true),
        inventory,
        jvmInfo,
        tags: validateTags(object(raw, 'tags', true)),
        annotations: stringMap(object(raw, 'annotations', true), 'annotations', MAX_BYTES.annotationKey, () => MAX_BYTES.annotationValue),
      };
    }
    case 'vm.heartbeat':
    case 'vm.stop':
      checkFields(raw, COMMON);
      return { type, vmId, time };
    case 'code': {
      checkFields(raw, ITEM_FIELDS);
      const code = items(raw);
      // Checked in place, not copied: a batch has 10,000s of items, and their copies were most of its garbage.
      // Checked in a plain loop, no closure per item: a batch has 10,000s of them. A class's item with
      // `methodNames` becomes one item per method; only then is the list copied.
      let expanded: Record<string, unknown>[] | null = null;
      for (let i = 0; i < code.length; i++) {
        const item = code[i];
        try {
          text(item, 'sourceName');
          text(item, 'className', false, false);
          // sourceName, className and one of methodName, methodNames (both is refused below).
          checkItemFields(item, 3, CODE_ITEM_FIELDS);
          if (item.methodNames === undefined) {
            text(item, 'methodName', false, false);
            expanded?.push(item);
            continue;
          }
          if (item.methodName !== undefined) throw new EventError(`give 'methodName' or 'methodNames', not both`);
          expanded ??= code.slice(0, i);
          for (const methodName of methodNames(item.methodNames)) {
            expanded.push({ sourceName: item.sourceName, className: item.className, methodName });
          }
        } catch (error) {
          throw itemProblem(i, error);
        }
      }
      return { type, vmId, time, items: (expanded ?? code) as unknown as CodeItem[] };
    }
    default:
      checkFields(raw, ITEM_FIELDS);
      return {
        type: 'components',
        vmId,
        time,
        items: items(raw).map((item, i) => {
          try {
            const component = {
              componentName: text(item, 'componentName', false, false),
              componentVersion: text(item, 'componentVersion', false, false),
              sourceName: text(item, 'sourceName', true) || null,
              groupId: text(item, 'groupId', true) || null,
            };
            checkItemFields(item, 2 + Number(item.sourceName !== undefined) + Number(item.groupId !== undefined), COMPONENT_ITEM_FIELDS);
            return component;
          } catch (error) {
            throw itemProblem(i, error);
          }
        }),
      };
  }
}

/**
 * Validates every event of a batch against the service clock `now`; one bad event rejects the batch with the
 * index of each problem, listing at most 100.
 */
export function validateEvents(raw: unknown[], now: number = Date.now()): AgentEvent[] {
  if (raw.length === 0) throw new ApiError('INVALID_EVENTS', 'the batch holds no events', [{ index: 0, message: 'send at least one event' }]);
  const events: AgentEvent[] = [];
  const details: { index: number; message: string }[] = [];
  for (let index = 0; index < raw.length && details.length < MAX_PROBLEMS; index++) {
    try {
      events.push(validateEvent(raw[index], now));
    } catch (error) {
      if (!(error instanceof EventError)) throw error;
      details.push({ index, message: error.message });
    }
  }
  if (details.length > 0) {
    throw new ApiError('INVALID_EVENTS', `${details.length === MAX_PROBLEMS ? `${MAX_PROBLEMS} or more` : details.length} invalid event(s); nothing was stored`, details);
  }
  return events;
}
