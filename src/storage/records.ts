// Shapes of what the LMDB databases hold; strings that reports aggregate on are dictionary ids (0 = none).

/** A VM as stored under its dense row number. String fields are ids of the shared dictionary. */
export interface VmRecord {
  row: number;
  vmId: string;
  agentVersion: number;
  agentRevision: number;
  mailbox: number;
  hostName: number;
  mainMethod: number;
  javaVersion: number;
  javaVendor: number;
  osName: number;
  osArch: number;
  startTime: number;
  lastHeardTime: number;
  /** Time of the last vm.stop; the VM is TERMINATED while stopTime >= startTime. */
  stopTime: number | null;
}

/** Inventory and JVM details, read only by the explorer, so kept out of the record reports scan. */
export interface VmDetails {
  inventory: Record<string, unknown>;
  jvmInfo: Record<string, unknown>;
}

export interface Annotation {
  key: string;
  value: string;
  time: number;
}

export interface ComponentRecord {
  componentName: string;
  componentVersion: string;
  /** The first groupId an agent reported for this (name, version). */
  groupId: string | null;
  /**
   * Other groupIds agents reported for the same (name, version), in the order first seen: a fork or a
   * relocation can share an artifactId and version, and each group's advisories must still match.
   */
  otherGroupIds?: string[];
}

/** A CVE matched to a component (decisions §11). */
export interface ComponentCve {
  cveId: string;
  /** CVSS base score, one decimal; null when the advisory has no vector. */
  score: number | null;
  /** When the match was computed (epoch ms). */
  analysisTime: number;
}

/**
 * The methods of one class (per sourceName and AppEnv), in methodName code-point order, each with the slot
 * that holds its times in `codeTimes` (code-times.ts). Rewritten only when the class gains a method.
 */
export interface ClassCode {
  methods: string[];
  slots: number[];
}

/**
 * One class's methods over every AppEnv, in methodName code-point order, each with its slots in the AppEnv
 * records that have it: its fleet-wide times are the widest span of those slots' times.
 */
export interface FleetClassCode {
  methods: string[];
  slots: number[][];
}

/** A class's methods with their fleet-wide first and last sighting (decisions §4), as parallel arrays. */
export interface MethodTimes {
  methods: string[];
  firstSeen: number[];
  lastSeen: number[];
}

export interface ApiKeyRecord {
  keyId: string;
  userId: string;
  scopes: Scope[];
  /** sha256 of the key, hex; the key itself is never stored. */
  hash: string;
  createdAt: number;
  revokedAt: number | null;
}

export type Scope = 'read' | 'write' | 'ingest';
export const SCOPES: readonly Scope[] = ['read', 'write', 'ingest'];
