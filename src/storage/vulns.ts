// Vulnerability records in LMDB, and the CVEs matched to each component (decisions §11).
import type { Vulnerability } from '../vuln/osv.ts';
import { VulnerabilityIndex } from '../vuln/vulnerability-index.ts';
import type { ComponentCve, ComponentRecord } from './records.ts';
import type { Store } from './store.ts';

/** Bumped by every import, so a running service (another process) notices and re-matches. */
export const VULN_SEQ = 'vulnSeq';
/** When the last import happened: the analysis time of the matches it changes. */
const VULN_IMPORTED_AT = 'vulnImportedAt';

export function vulnSeq(store: Store): number {
  return (store.meta.get(VULN_SEQ) as number | undefined) ?? 0;
}

export function loadVulnerabilityIndex(store: Store): VulnerabilityIndex {
  const vulnerabilities: Vulnerability[] = [];
  for (const { value } of store.vulns.getRange()) vulnerabilities.push(value);
  return new VulnerabilityIndex(vulnerabilities);
}

/** The time of the last import (undefined before any). */
export function vulnImportedAt(store: Store): number | undefined {
  return store.meta.get(VULN_IMPORTED_AT) as number | undefined;
}

/**
 * Stores records (one with a stored id replaces it) in one transaction, imported at `at` (a cluster's log
 * carries it, so every node re-matches alike); returns how many replaced one.
 */
export async function putVulnerabilities(store: Store, vulnerabilities: readonly Vulnerability[], at: number = Date.now()): Promise<number> {
  const replaced = await store.env.transaction(() => {
    let count = 0;
    for (const vulnerability of vulnerabilities) {
      if (store.vulns.get(vulnerability.id) !== undefined) count++;
      store.vulns.put(vulnerability.id, vulnerability);
    }
    store.meta.put(VULN_SEQ, vulnSeq(store) + 1);
    store.meta.put(VULN_IMPORTED_AT, at);
    return count;
  });
  await store.env.flushed;
  return replaced;
}

/** The CVEs of one component, as stored for reports and CVE events. */
export function componentCves(index: VulnerabilityIndex, component: ComponentRecord, analysisTime: number): ComponentCve[] {
  return index
    .match({
      componentName: component.componentName,
      componentVersion: component.componentVersion,
      ...(component.groupId === null ? {} : { groupId: component.groupId }),
      ...(component.otherGroupIds === undefined ? {} : { otherGroupIds: component.otherGroupIds }),
    })
    .map((vulnerability) => ({ cveId: vulnerability.cveId, score: vulnerability.score, analysisTime }));
}

function sameCves(a: readonly ComponentCve[] | undefined, b: readonly ComponentCve[]): boolean {
  if ((a?.length ?? 0) !== b.length) return false;
  return b.every((cve, i) => a![i].cveId === cve.cveId && a![i].score === cve.score);
}

/**
 * Re-matches every component of the fleet against the stored vulnerabilities and writes what changed;
 * an unchanged match keeps its analysis time. Returns the number of components whose CVEs changed.
 */
export async function rematchAll(store: Store, now: number): Promise<number> {
  const index = loadVulnerabilityIndex(store);
  const changes: [number, ComponentCve[]][] = [];
  for (const { key, value } of store.components.getRange()) {
    const cves = componentCves(index, value, now);
    if (!sameCves(store.componentCves.get(key), cves)) changes.push([key, cves]);
  }
  if (changes.length === 0) return 0;
  await store.env.transaction(() => {
    for (const [id, cves] of changes) {
      if (cves.length === 0) store.componentCves.remove(id);
      else store.componentCves.put(id, cves);
    }
  });
  await store.env.flushed;
  return changes.length;
}
