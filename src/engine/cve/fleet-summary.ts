// Every CVE of a set of VMs, once: its score, the components that carry it, and how many of the VMs loaded
// code from such a component (USED) or only carry it (PRESENT). The console's vulnerability list.
import { compareCodePoints } from '../../collation.ts';
import type { CveSnapshot } from './snapshot.ts';

export interface CveFleetItem {
  cveId: string;
  score: number | null;
  /** VMs with the CVE in a component whose code they loaded. */
  usedVmCount: number;
  /** VMs with the CVE only in components whose code they did not load. */
  presentVmCount: number;
  /** The components with the CVE among these VMs, in (componentName, componentVersion) order. */
  components: { componentName: string; componentVersion: string }[];
}

interface Tally {
  score: number | null;
  used: number;
  present: number;
  /** The last row counted and whether it was counted as USED: a VM counts once per CVE. */
  lastRow: number;
  lastUsed: boolean;
  componentIds: Set<number>;
}

/** The CVEs of the given rows, highest score first, then by cveId. */
export function fleetSummary(snapshot: CveSnapshot, rows: Iterable<number>): { items: CveFleetItem[]; vmCount: number } {
  const tallies = new Map<string, Tally>();
  const encodedCves = snapshot.encodedCves;
  let vmCount = 0;
  for (const row of rows) {
    vmCount++;
    const components = snapshot.components(row, false);
    for (let k = 0; k < components.length; k++) {
      const id = components[k] >>> 1;
      const used = (components[k] & 1) === 1;
      for (const cve of encodedCves.cves(id)) {
        let tally = tallies.get(cve.cveId);
        if (tally === undefined) tallies.set(cve.cveId, (tally = { score: cve.score, used: 0, present: 0, lastRow: -1, lastUsed: false, componentIds: new Set() }));
        tally.componentIds.add(id);
        if (tally.lastRow !== row) {
          tally.lastRow = row;
          tally.lastUsed = used;
          if (used) tally.used++;
          else tally.present++;
        } else if (used && !tally.lastUsed) {
          // Another component of the same VM was loaded: the VM moves from PRESENT to USED.
          tally.lastUsed = true;
          tally.present--;
          tally.used++;
        }
      }
    }
  }
  const items: CveFleetItem[] = [];
  for (const [cveId, tally] of tallies) {
    const components = [...tally.componentIds].sort((a, b) => encodedCves.rank[a] - encodedCves.rank[b]).map((id) => {
      const { componentName, componentVersion } = encodedCves.record(id)!;
      return { componentName, componentVersion };
    });
    items.push({ cveId, score: tally.score, usedVmCount: tally.used, presentVmCount: tally.present, components });
  }
  items.sort((a, b) => (b.score ?? -1) - (a.score ?? -1) || compareCodePoints(a.cveId, b.cveId));
  return { items, vmCount };
}
