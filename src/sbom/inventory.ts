// What an SBOM says of a VM, read from the store: its components with their JARs, whether the VM loaded
// code from them (USED) or only carried them (PRESENT), and their CVEs with the advisories behind them.
import type { Dictionary } from '../storage/dictionary.ts';
import type { ComponentCve, ComponentRecord, VmRecord } from '../storage/records.ts';
import type { Store } from '../storage/store.ts';
import { uint32View } from '../storage/store.ts';
import { vmRecords } from '../storage/vm-scan.ts';
import { vmState } from '../storage/vm-state.ts';
import type { VmState } from '../storage/vm-state.ts';
import { readTags } from '../storage/vm-tags.ts';
import { vmDetails } from '../storage/vms.ts';
import { vulnSeq } from '../storage/vulns.ts';
import type { Vulnerability } from '../vuln/osv.ts';

/** A component as ingestion stored it without a sourceName (ingest.ts). */
const NO_SOURCE = 0xffffffff;

export interface SbomComponent extends ComponentRecord {
  /** The JARs the component was found in, as the agent named them (none when it named none). */
  jars: string[];
  /** Code was loaded from one of those JARs by this VM. */
  used: boolean;
  cves: ComponentCve[];
}

export interface VmInventory {
  vmId: string;
  hostName: string;
  mainMethod: string;
  state: VmState;
  tags: Record<string, string>;
  startTime: number;
  lastHeardTime: number;
  components: SbomComponent[];
}

export function vmInventory(store: Store, dict: Dictionary, record: VmRecord, now: number, offlineAfterMs: number): VmInventory {
  const used = new Set(uint32View(store.usedSources.getBinary(record.row)));
  const pairs = uint32View(store.vmComponents.getBinary(record.row));
  const components: SbomComponent[] = [];
  let last: SbomComponent | undefined;
  for (let k = 0; k < pairs.length; k += 2) {
    // A component found in several JARs has consecutive pairs, one per JAR.
    if (k === 0 || pairs[k] !== pairs[k - 2]) {
      const component = store.components.get(pairs[k]);
      last = component === undefined ? undefined : { ...component, jars: [], used: false, cves: store.componentCves.get(pairs[k]) ?? [] };
      if (last !== undefined) components.push(last);
    }
    const source = pairs[k + 1];
    if (last === undefined || source === NO_SOURCE) continue;
    const jar = dict.lookup(source);
    if (jar === null) continue;
    last.jars.push(jar);
    last.used ||= used.has(source);
  }
  const inventory = vmDetails(store, record)?.inventory;
  return {
    vmId: record.vmId,
    hostName: String(inventory?.hostName ?? ''),
    mainMethod: String(inventory?.mainMethod ?? ''),
    state: vmState(record, now, offlineAfterMs),
    tags: Object.fromEntries(readTags(store, dict, record.row)),
    startTime: record.startTime,
    lastHeardTime: record.lastHeardTime,
    components,
  };
}

/** The VMs whose tags hold every given (key, value), in row order. */
export function selectVms(store: Store, dict: Dictionary, tags: readonly [string, string][]): VmRecord[] {
  const selected: VmRecord[] = [];
  for (const record of vmRecords(store, dict)) {
    if (tags.length > 0) {
      const own = readTags(store, dict, record.row);
      if (!tags.every(([key, wanted]) => own.get(key) === wanted)) continue;
    }
    selected.push(record);
  }
  return selected;
}

/** The advisories of one CVE: the one its matches take their score from, and every other id they go by. */
export interface CveAdvisories {
  advisory: Vulnerability;
  /** The other advisories' ids and every alias, without the CVE id and the advisory's own id, sorted. */
  references: string[];
}

let advisories: { seq: number; byCve: Map<string, CveAdvisories> } | null = null;

/**
 * The advisories behind each CVE id, read again only after an import changed them. As matching does, a
 * withdrawn record (no packages) yields to a live one and the most recently modified record wins.
 */
export function advisoriesByCve(store: Store): Map<string, CveAdvisories> {
  const seq = vulnSeq(store);
  if (advisories?.seq !== seq) {
    const records = new Map<string, Vulnerability[]>();
    for (const { value } of store.vulns.getRange()) {
      const list = records.get(value.cveId);
      if (list === undefined) records.set(value.cveId, [value]);
      else list.push(value);
    }
    const byCve = new Map<string, CveAdvisories>();
    for (const [cveId, list] of records) {
      const live = list.filter((record) => record.packages.length > 0);
      const candidates = live.length > 0 ? live : list;
      const advisory = candidates.reduce((best, record) => (Date.parse(record.modified) > Date.parse(best.modified) ? record : best));
      const ids = new Set(candidates.flatMap((record) => [record.id, ...record.aliases]));
      ids.delete(cveId);
      ids.delete(advisory.id);
      byCve.set(cveId, { advisory, references: [...ids].sort() });
    }
    advisories = { seq, byCve };
  }
  return advisories.byCve;
}
