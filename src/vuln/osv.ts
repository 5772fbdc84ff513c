// The OSV record model (the fields jvmlens uses) and its validation into a Vulnerability (decisions §11).
import { scoreFromSeverity } from './cvss.ts';
import type { SeverityEntry } from './cvss.ts';

/** One event of a range: exactly one of the four keys. */
export interface OsvEvent {
  introduced?: string;
  fixed?: string;
  last_affected?: string;
  limit?: string;
}

export type OsvRangeType = 'ECOSYSTEM' | 'SEMVER' | 'GIT';

export interface OsvRange {
  type: OsvRangeType;
  repo?: string;
  events: OsvEvent[];
}

export interface OsvAffected {
  package?: { ecosystem: string; name: string; purl?: string };
  severity?: SeverityEntry[];
  ranges?: OsvRange[];
  versions?: string[];
  database_specific?: Record<string, unknown>;
}

export interface OsvRecord {
  id: string;
  modified: string;
  published?: string;
  withdrawn?: string;
  aliases?: string[];
  summary?: string;
  details?: string;
  severity?: SeverityEntry[];
  affected?: OsvAffected[];
  database_specific?: Record<string, unknown>;
}

/** A range jvmlens can evaluate: ECOSYSTEM, or SEMVER (read under Maven order, which agrees on plain releases). */
export interface AffectedRange {
  type: 'ECOSYSTEM' | 'SEMVER';
  events: OsvEvent[];
}

/** The affected versions of one Maven artifact. */
export interface MavenPackage {
  groupId: string;
  artifactId: string;
  ranges: AffectedRange[];
  versions: string[];
}

/** What matching and the CVE events need of an OSV record: plain data, storable as is. */
export interface Vulnerability {
  id: string;
  /** The CVE the record is about: the id when it is a CVE, else its first CVE alias, else the id. */
  cveId: string;
  aliases: string[];
  summary: string;
  modified: string;
  /** CVSS base score, one decimal: v3.x when the record has one, else v2, else null. */
  score: number | null;
  vector: string | null;
  /** Maven entries of `affected`; empty for a withdrawn record, so that replacing with it stops matches. */
  packages: MavenPackage[];
}

export type OsvValidation = { ok: true; vulnerability: Vulnerability } | { ok: false; error: string };

const EVENT_KEYS = ['introduced', 'fixed', 'last_affected', 'limit'] as const;
const RANGE_TYPES: readonly string[] = ['ECOSYSTEM', 'SEMVER', 'GIT'];
const CVE = /^CVE-\d{4}-\d{4,}$/;

/** A validation failure: `path` names the offending field, as `affected[0].ranges[1].events[2]`. */
class InvalidRecord extends Error {}

function fail(path: string, expected: string, value: unknown): never {
  const shown = value === undefined ? 'nothing' : JSON.stringify(value)?.slice(0, 80) ?? String(value);
  throw new InvalidRecord(`${path}: expected ${expected}, got ${shown}`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function optionalString(record: Record<string, unknown>, key: string, path: string): string | undefined {
  const value = record[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') fail(path, 'a string', value);
  return value;
}

function optionalArray(record: Record<string, unknown>, key: string, path: string): unknown[] {
  const value = record[key];
  if (value === undefined) return [];
  if (!Array.isArray(value)) fail(path, 'an array', value);
  return value;
}

function stringArray(record: Record<string, unknown>, key: string, path: string): string[] {
  const values = optionalArray(record, key, path);
  values.forEach((value, i) => {
    if (typeof value !== 'string') fail(`${path}[${i}]`, 'a string', value);
  });
  return values as string[];
}

function readSeverity(record: Record<string, unknown>, path: string): SeverityEntry[] {
  return optionalArray(record, 'severity', path).map((entry, i) => {
    if (!isObject(entry) || typeof entry.type !== 'string' || typeof entry.score !== 'string') {
      fail(`${path}[${i}]`, 'an object with string type and score', entry);
    }
    return { type: entry.type, score: entry.score };
  });
}

function readEvent(value: unknown, path: string): OsvEvent {
  if (!isObject(value)) fail(path, 'an event object', value);
  const keys = Object.keys(value);
  const key = EVENT_KEYS.find((k) => k === keys[0]);
  if (keys.length !== 1 || key === undefined) fail(path, 'exactly one of introduced, fixed, last_affected, limit', value);
  const version = value[key];
  if (typeof version !== 'string' || version === '') fail(`${path}.${key}`, 'a non-empty version string', version);
  return { [key]: version };
}

function readRange(value: unknown, path: string): OsvRange {
  if (!isObject(value)) fail(path, 'a range object', value);
  if (typeof value.type !== 'string' || !RANGE_TYPES.includes(value.type)) fail(`${path}.type`, 'ECOSYSTEM, SEMVER or GIT', value.type);
  const events = optionalArray(value, 'events', `${path}.events`).map((event, i) => readEvent(event, `${path}.events[${i}]`));
  // OSV schema: a range has at least one introduced event.
  if (!events.some((event) => event.introduced !== undefined)) fail(`${path}.events`, 'at least one introduced event', value.events);
  return { type: value.type as OsvRangeType, events };
}

function isMaven(ecosystem: string): boolean {
  // "Maven", or "Maven:<repository URL>" for a repository other than Maven Central.
  return ecosystem === 'Maven' || ecosystem.startsWith('Maven:');
}

function readAffected(value: unknown, path: string): { entry: OsvAffected; maven: MavenPackage | null } {
  if (!isObject(value)) fail(path, 'an affected object', value);
  const ranges = optionalArray(value, 'ranges', `${path}.ranges`).map((range, i) => readRange(range, `${path}.ranges[${i}]`));
  const versions = stringArray(value, 'versions', `${path}.versions`);
  const severity = readSeverity(value, `${path}.severity`);
  const pkg = value.package;
  if (pkg === undefined) return { entry: { ranges, versions, severity }, maven: null };
  if (!isObject(pkg) || typeof pkg.ecosystem !== 'string' || typeof pkg.name !== 'string') {
    fail(`${path}.package`, 'an object with string ecosystem and name', pkg);
  }
  const entry: OsvAffected = { package: { ecosystem: pkg.ecosystem, name: pkg.name }, ranges, versions, severity };
  if (!isMaven(pkg.ecosystem)) return { entry, maven: null };
  const parts = pkg.name.split(':');
  if (parts.length !== 2 || parts[0] === '' || parts[1] === '') fail(`${path}.package.name`, 'groupId:artifactId', pkg.name);
  const evaluable = ranges.filter((range): range is AffectedRange => range.type !== 'GIT');
  return { entry, maven: { groupId: parts[0], artifactId: parts[1], ranges: evaluable, versions } };
}

function chooseCveId(id: string, aliases: readonly string[]): string {
  if (CVE.test(id)) return id;
  return aliases.find((alias) => CVE.test(alias)) ?? id;
}

function readRecord(json: unknown): Vulnerability {
  if (!isObject(json)) fail('record', 'a JSON object', json);
  if (typeof json.id !== 'string' || json.id.trim() === '') fail('id', 'a non-empty string', json.id);
  if (typeof json.modified !== 'string' || Number.isNaN(Date.parse(json.modified))) {
    fail('modified', 'an RFC 3339 timestamp', json.modified);
  }
  const aliases = stringArray(json, 'aliases', 'aliases');
  const summary = optionalString(json, 'summary', 'summary');
  const details = optionalString(json, 'details', 'details');
  const withdrawn = optionalString(json, 'withdrawn', 'withdrawn');
  const severity = readSeverity(json, 'severity');
  const affected = optionalArray(json, 'affected', 'affected').map((entry, i) => readAffected(entry, `affected[${i}]`));
  // A record may score per package only; the top level wins when it has a usable vector.
  let scored = scoreFromSeverity(severity);
  for (const { entry } of affected) {
    if (scored.score !== null) break;
    scored = scoreFromSeverity(entry.severity ?? []);
  }
  const packages = withdrawn === undefined ? affected.flatMap(({ maven }) => (maven === null ? [] : [maven])) : [];
  return {
    id: json.id,
    cveId: chooseCveId(json.id, aliases),
    aliases,
    summary: summary ?? details?.split('\n', 1)[0].slice(0, 200) ?? '',
    modified: json.modified,
    score: scored.score,
    vector: scored.vector,
    packages,
  };
}

/** Validates one OSV record (already parsed JSON) into a Vulnerability, or says precisely what is wrong. */
export function validateOsvRecord(json: unknown): OsvValidation {
  try {
    return { ok: true, vulnerability: readRecord(json) };
  } catch (error) {
    if (error instanceof InvalidRecord) {
      const id = isObject(json) && typeof json.id === 'string' ? `${json.id}: ` : '';
      return { ok: false, error: id + error.message };
    }
    throw error;
  }
}
