// The JSON of CVE event items (interface §2.5) in two parts, the component's and the VM's, each encoded to UTF-8
// once and copied per item: a page is never serialised field by field, and the server sends its bytes as they are
// (a string body would be converted to UTF-8 again, which costs as much as building the page).
import type { ComponentCve, ComponentRecord } from '../../storage/records.ts';
import { ByteSink } from '../byte-sink.ts';

export type CveState = 'USED' | 'PRESENT';

/** `{"componentName":…,…,"cveAnalysisTime":…,`: an item's fields up to the VM's; cve null for a component without CVEs. */
export function componentPart(component: ComponentRecord, cve: ComponentCve | null, cveState: CveState | null): Buffer {
  const fields = {
    componentName: component.componentName,
    componentVersion: component.componentVersion,
    cveId: cve?.cveId ?? null,
    score: cve?.score ?? null,
    cveState,
    cveAnalysisTime: cve?.analysisTime ?? null,
  };
  return Buffer.from(`${JSON.stringify(fields).slice(0, -1)},`);
}

/**
 * `"hostName":…,"tags":…}`: the rest of every item of one VM, tags as [key, value] in key order. Written field by
 * field, the same text JSON.stringify gives: times are finite numbers and tag keys start with a letter, so an object
 * would keep them in this order.
 */
export function vmPart(hostName: string, startTime: number, lastHeardTime: number, vmId: string, tags: readonly [string, string][]): Buffer {
  const tagsJson = tags.length === 0 ? 'null' : `{${tags.map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`).join(',')}}`;
  return Buffer.from(`"hostName":${JSON.stringify(hostName)},"startTime":${startTime},"lastHeardTime":${lastHeardTime},"vmId":${JSON.stringify(vmId)},"tags":${tagsJson}}`);
}

/** Room for a page of 100 items; it grows when a page (limit up to 1000) needs more. */
const sink = new ByteSink(64 * 1024);

/**
 * A page's items as they are filled, comma-joined into one buffer that every page reuses: a page is filled and
 * copied into its response synchronously, so at most one is being filled at a time. Valid until the next page.
 */
export class EventItems {
  count = 0;

  constructor() {
    sink.length = 0;
  }

  push(componentPart: Buffer, vmPart: Buffer): void {
    sink.reserve(1 + componentPart.length + vmPart.length);
    if (this.count > 0) sink.byte(0x2c); // ','
    sink.copy(componentPart);
    sink.copy(vmPart);
    this.count++;
  }

  /** The items as `item,item,…`. */
  bytes(): Uint8Array {
    return sink.written();
  }
}

/**
 * The page envelope of interface §2.5 around the items: byte for byte what JSON.stringify would give (afterToken
 * is base64url, which needs no escaping), written into a buffer of the caller's (`allocate`), which may reuse one
 * for every page.
 */
export function eventsPage(limit: number, afterToken: string | undefined, items: EventItems, warnings: readonly string[], totalCount: number, hasNext: boolean, allocate: (size: number) => Buffer): Buffer {
  const head = `{"limit":${limit}${afterToken === undefined ? '' : `,"afterToken":"${afterToken}"`},"data":[`;
  const tail = `],"summary":{"warnings":${JSON.stringify(warnings)},"totalCount":${totalCount}},"size":${items.count},"hasNext":${hasNext}}`;
  const joined = items.bytes();
  const headLength = Buffer.byteLength(head);
  const body = allocate(headLength + joined.length + Buffer.byteLength(tail));
  body.write(head, 0);
  body.set(joined, headLength);
  body.write(tail, headLength + joined.length);
  return body;
}
