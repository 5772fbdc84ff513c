// Whether a version of a Maven package is affected: OSV's evaluation rules under Maven version order.
import { compareParsedMavenVersions, parseMavenVersion } from '../versions/maven.ts';
import type { MavenVersion } from '../versions/maven.ts';
import type { AffectedRange, MavenPackage, OsvEvent } from './osv.ts';

const INTRODUCED = 0;
const FIXED = 1;
const LAST_AFFECTED = 2;

/** An event with its version parsed; `bound` null is introduced "0", before every version. */
interface SortedEvent {
  kind: number;
  bound: MavenVersion | null;
}

interface CompiledRange {
  events: SortedEvent[];
  /** Upper limits (exclusive); null when there is none or one is "*" (osv-schema: implicit "*"). */
  limits: MavenVersion[] | null;
}

/** A package prepared for matching: ranges sorted and parsed once, versions in a set. */
export interface CompiledPackage {
  ranges: CompiledRange[];
  versions: Set<string>;
}

function compileEvent(event: OsvEvent): SortedEvent | null {
  if (event.introduced !== undefined) {
    return { kind: INTRODUCED, bound: event.introduced === '0' ? null : parseMavenVersion(event.introduced) };
  }
  if (event.fixed !== undefined) return { kind: FIXED, bound: parseMavenVersion(event.fixed) };
  if (event.last_affected !== undefined) return { kind: LAST_AFFECTED, bound: parseMavenVersion(event.last_affected) };
  return null;
}

function compareBounds(a: SortedEvent, b: SortedEvent): number {
  if (a.bound === null || b.bound === null) return a.bound === b.bound ? 0 : a.bound === null ? -1 : 1;
  return compareParsedMavenVersions(a.bound, b.bound);
}

function compileRange(range: AffectedRange): CompiledRange {
  const events: SortedEvent[] = [];
  let limits: MavenVersion[] | null = [];
  for (const event of range.events) {
    if (event.limit !== undefined) {
      if (event.limit.includes('*')) limits = null;
      else limits?.push(parseMavenVersion(event.limit));
      continue;
    }
    const compiled = compileEvent(event);
    if (compiled !== null) events.push(compiled);
  }
  // Stable: events at the same version keep their order in the record.
  events.sort(compareBounds);
  return { events, limits: limits === null || limits.length === 0 ? null : limits };
}

export function compilePackage(pkg: MavenPackage): CompiledPackage {
  return { ranges: pkg.ranges.map(compileRange), versions: new Set(pkg.versions) };
}

function beforeLimits(version: MavenVersion, limits: MavenVersion[] | null): boolean {
  if (limits === null) return true;
  return limits.some((limit) => compareParsedMavenVersions(version, limit) < 0);
}

function inRange(version: MavenVersion, range: CompiledRange): boolean {
  if (!beforeLimits(version, range.limits)) return false;
  let vulnerable = false;
  for (const event of range.events) {
    if (event.kind === INTRODUCED) {
      if (event.bound === null || compareParsedMavenVersions(version, event.bound) >= 0) vulnerable = true;
    } else if (event.kind === FIXED) {
      if (compareParsedMavenVersions(version, event.bound as MavenVersion) >= 0) vulnerable = false;
    } else if (compareParsedMavenVersions(version, event.bound as MavenVersion) > 0) {
      vulnerable = false;
    }
  }
  return vulnerable;
}

/** osv-schema "Evaluation": listed in `versions` (the exact string), or inside one of the ranges. */
export function isCompiledVersionAffected(pkg: CompiledPackage, version: MavenVersion): boolean {
  if (pkg.versions.has(version.version)) return true;
  for (const range of pkg.ranges) if (inRange(version, range)) return true;
  return false;
}

const compiledPackages = new WeakMap<MavenPackage, CompiledPackage>();

/** Whether `version` of the package is affected (the package is compiled once, then remembered). */
export function isVersionAffected(pkg: MavenPackage, version: string): boolean {
  let compiled = compiledPackages.get(pkg);
  if (compiled === undefined) {
    compiled = compilePackage(pkg);
    compiledPackages.set(pkg, compiled);
  }
  return isCompiledVersionAffected(compiled, parseMavenVersion(version));
}
