// CycloneDX 1.6 JSON documents of one VM or of a set of VMs, with a runtime VEX analysis per vulnerability:
// a vulnerable component whose JAR the JVMs never loaded code from is `not_affected` (`code_not_reachable`),
// one they loaded code from, or whose JAR is not known, is `in_triage`. Built as plain JSON (the document shape is in the 1.6 schema,
// which the tests validate against with @cyclonedx/cyclonedx-library): the library's models have no
// `evidence.occurrences`, which is where a component's JARs belong.
import { randomUUID } from 'node:crypto';
import type { ComponentCve } from '../storage/records.ts';
import { severityBand } from '../vuln/cvss.ts';
import type { CveAdvisories, SbomComponent, VmInventory } from './inventory.ts';

type Json = Record<string, unknown>;

/** What a document covers besides its VMs: the selection of a fleet SBOM (for its metadata). */
export interface FleetSelection {
  tags: [string, string][];
}

const TOOL = { type: 'application', name: 'jvmlens', group: 'jvmlens' };

function iso(time: number): string {
  const date = new Date(time);
  return Number.isNaN(date.getTime()) ? new Date(0).toISOString() : date.toISOString();
}

function ratingMethod(vector: string | null): string {
  if (vector?.startsWith('CVSS:3.1/')) return 'CVSSv31';
  if (vector?.startsWith('CVSS:3.0/')) return 'CVSSv3';
  if (vector?.startsWith('CVSS:4')) return 'CVSSv4';
  return vector === null ? 'other' : 'CVSSv2';
}

function componentKey(component: Pick<SbomComponent, 'componentName' | 'componentVersion'>): string {
  return `${component.componentName}@${component.componentVersion}`;
}

/**
 * The component's group when agents reported one only: which of several groups a VM's copy has is not kept,
 * so a (name, version) reported under several names none rather than a wrong one.
 */
function soleGroupId(component: Pick<SbomComponent, 'groupId' | 'otherGroupIds'>): string | null {
  return component.otherGroupIds === undefined ? component.groupId : null;
}

function purl(component: Pick<SbomComponent, 'componentName' | 'componentVersion' | 'groupId' | 'otherGroupIds'>): string | undefined {
  const groupId = soleGroupId(component);
  if (groupId === null || component.componentVersion === 'UNKNOWN') return undefined;
  const part = (text: string) => encodeURIComponent(text);
  return `pkg:maven/${part(groupId)}/${part(component.componentName)}@${part(component.componentVersion)}`;
}

/** One component of the document: the same (name, version) in several VMs is one entry. */
interface Entry {
  component: Omit<SbomComponent, 'jars' | 'used'>;
  bomRef: string;
  jars: Set<string>;
  vms: number;
  usedVms: number;
  /** VMs whose agent named no JAR for the component: whether they loaded its code is not known. */
  jarlessVms: number;
}

function entries(vms: readonly VmInventory[]): Entry[] {
  const byKey = new Map<string, Entry>();
  for (const vm of vms) {
    for (const component of vm.components) {
      const key = componentKey(component);
      let entry = byKey.get(key);
      if (entry === undefined) {
        entry = { component, bomRef: purl(component) ?? `jvmlens:${key}`, jars: new Set(), vms: 0, usedVms: 0, jarlessVms: 0 };
        byKey.set(key, entry);
      }
      for (const jar of component.jars) entry.jars.add(jar);
      if (component.jars.length === 0) entry.jarlessVms++;
      entry.vms++;
      if (component.used) entry.usedVms++;
    }
  }
  return [...byKey.values()].sort((a, b) => (a.bomRef < b.bomRef ? -1 : a.bomRef > b.bomRef ? 1 : 0));
}

function componentJson(entry: Entry, fleet: boolean): Json {
  const { component } = entry;
  // 'unknown' where no code was seen loaded and a copy has no JAR to see it by.
  const loaded = entry.usedVms > 0 ? 'true' : entry.jarlessVms > 0 ? 'unknown' : 'false';
  const properties = [{ name: 'jvmlens:codeLoaded', value: loaded }];
  if (fleet) properties.push({ name: 'jvmlens:vmCount', value: String(entry.vms) }, { name: 'jvmlens:codeLoadedVmCount', value: String(entry.usedVms) });
  const json: Json = { type: 'library', 'bom-ref': entry.bomRef, name: component.componentName, version: component.componentVersion };
  const groupId = soleGroupId(component);
  if (groupId !== null) json.group = groupId;
  const url = purl(component);
  if (url !== undefined) json.purl = url;
  if (entry.jars.size > 0) json.evidence = { occurrences: [...entry.jars].sort().map((location) => ({ location })) };
  json.properties = properties;
  return json;
}

/**
 * The VEX analysis of a vulnerability over the entries it affects, in the words of what was observed. Only
 * JARs jvmlens knows can show code was not loaded: a copy whose agent named no JAR stays in triage.
 */
function analysis(affected: readonly Entry[], single: VmInventory | null): Json {
  const used = affected.filter((entry) => entry.usedVms > 0);
  const jarless = affected.filter((entry) => entry.jarlessVms > 0);
  const names = (list: readonly Entry[]) => list.map((entry) => `${componentKey(entry.component)}${entry.jars.size > 0 ? ` (${[...entry.jars].sort().join(', ')})` : ''}`).join('; ');
  const unknown = (list: readonly Entry[]) => `the agent named no JAR for ${list.map((entry) => componentKey(entry.component)).join('; ')}, so whether its code was loaded is not known`;
  if (single !== null) {
    const window = `between ${iso(single.startTime)} and ${iso(single.lastHeardTime)}`;
    if (used.length > 0) return { state: 'in_triage', detail: `jvmlens observed this JVM load code from ${names(used)} ${window}: the vulnerable code may be reachable.` };
    if (jarless.length > 0) return { state: 'in_triage', detail: `jvmlens observed ${names(affected)} in this JVM ${window}, but ${unknown(jarless)}.` };
    return { state: 'not_affected', justification: 'code_not_reachable', detail: `jvmlens observed ${names(affected)} in this JVM but no class loaded from it ${window}.` };
  }
  const vms = affected.reduce((sum, entry) => sum + entry.vms, 0);
  const usedVms = affected.reduce((sum, entry) => sum + entry.usedVms, 0);
  if (usedVms > 0) return { state: 'in_triage', detail: `jvmlens observed ${usedVms} of the ${vms} JVMs that carry ${names(affected)} load code from it: the vulnerable code may be reachable there.` };
  const jarlessVms = jarless.reduce((sum, entry) => sum + entry.jarlessVms, 0);
  if (jarlessVms > 0) return { state: 'in_triage', detail: `jvmlens observed ${names(affected)} in ${vms} JVMs, none of which loaded a class from its JARs; in ${jarlessVms} of them ${unknown(jarless)}.` };
  return { state: 'not_affected', justification: 'code_not_reachable', detail: `jvmlens observed ${names(affected)} in ${vms} JVMs, none of which loaded a class from it.` };
}

function vulnerabilities(all: readonly Entry[], advisories: ReadonlyMap<string, CveAdvisories>, single: VmInventory | null): Json[] {
  const byCve = new Map<string, { cve: ComponentCve; affected: Entry[] }>();
  for (const entry of all) {
    for (const cve of entry.component.cves) {
      let item = byCve.get(cve.cveId);
      if (item === undefined) byCve.set(cve.cveId, (item = { cve, affected: [] }));
      item.affected.push(entry);
    }
  }
  return [...byCve.values()]
    .sort((a, b) => (a.cve.cveId < b.cve.cveId ? -1 : a.cve.cveId > b.cve.cveId ? 1 : 0))
    .map(({ cve, affected }) => {
      const known = advisories.get(cve.cveId);
      const advisory = known?.advisory;
      const source = { name: 'OSV', url: `https://osv.dev/vulnerability/${encodeURIComponent(advisory?.id ?? cve.cveId)}` };
      // Score and vector of one advisory, so that they agree when the CVE's records score it differently.
      const score = advisory === undefined ? cve.score : advisory.score;
      const rating: Json = { source, severity: severityBand(score), method: ratingMethod(advisory?.vector ?? null) };
      if (score !== null) rating.score = score;
      if (advisory?.vector) rating.vector = advisory.vector;
      const json: Json = { 'bom-ref': `vulnerability:${cve.cveId}`, id: cve.cveId, source, ratings: [rating] };
      if (advisory !== undefined && advisory.summary !== '') json.description = advisory.summary;
      if (known !== undefined && known.references.length > 0) {
        json.references = known.references.map((id) => ({ id, source: { name: 'OSV', url: `https://osv.dev/vulnerability/${encodeURIComponent(id)}` } }));
      }
      json.analysis = analysis(affected, single);
      json.affects = affected.map((entry) => ({ ref: entry.bomRef }));
      return json;
    });
}

function document(metadataComponent: Json, vms: readonly VmInventory[], advisories: ReadonlyMap<string, CveAdvisories>, single: VmInventory | null, now: number): Json {
  const all = entries(vms);
  return {
    bomFormat: 'CycloneDX',
    specVersion: '1.6',
    serialNumber: `urn:uuid:${randomUUID()}`,
    version: 1,
    metadata: { timestamp: iso(now), tools: { components: [TOOL] }, component: metadataComponent },
    components: all.map((entry) => componentJson(entry, single === null)),
    vulnerabilities: vulnerabilities(all, advisories, single),
  };
}

function tagProperties(tags: Record<string, string>): { name: string; value: string }[] {
  return Object.entries(tags).map(([key, value]) => ({ name: `jvmlens:tag:${key}`, value }));
}

/** The SBOM of one VM: the VM is the document's subject, its components and their CVEs the contents. */
export function vmSbom(vm: VmInventory, advisories: ReadonlyMap<string, CveAdvisories>, now: number): Json {
  const subject: Json = {
    type: 'application',
    'bom-ref': `vm:${vm.vmId}`,
    name: vm.mainMethod !== '' ? vm.mainMethod : vm.hostName,
    properties: [
      { name: 'jvmlens:vmId', value: vm.vmId },
      { name: 'jvmlens:hostName', value: vm.hostName },
      { name: 'jvmlens:state', value: vm.state },
      { name: 'jvmlens:startTime', value: iso(vm.startTime) },
      { name: 'jvmlens:lastHeardTime', value: iso(vm.lastHeardTime) },
      ...tagProperties(vm.tags),
    ],
  };
  return document(subject, [vm], advisories, vm, now);
}

/** One SBOM of many VMs: components de-duplicated, each with how many VMs carry it and load code from it. */
export function fleetSbom(vms: readonly VmInventory[], selection: FleetSelection, advisories: ReadonlyMap<string, CveAdvisories>, now: number): Json {
  const subject: Json = {
    type: 'application',
    'bom-ref': 'fleet',
    name: selection.tags.length === 0 ? 'jvmlens fleet' : `jvmlens fleet ${selection.tags.map(([key, value]) => `${key}=${value}`).join(' ')}`,
    properties: [{ name: 'jvmlens:vmCount', value: String(vms.length) }, ...tagProperties(Object.fromEntries(selection.tags))],
  };
  return document(subject, vms, advisories, null, now);
}
