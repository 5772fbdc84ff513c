// The bytes of a CVE events page: pre-encoded items joined into the envelope give exactly what JSON.stringify would.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { componentPart, EventItems, eventsPage, vmPart } from '../../src/engine/cve/event-items.ts';
import type { ComponentCve, ComponentRecord } from '../../src/storage/records.ts';

const component = { componentName: 'log4j-core', componentVersion: '2.14.1' };
const record: ComponentRecord = { ...component, groupId: 'org.apache.logging.log4j' };
const cve: ComponentCve = { cveId: 'CVE-2021-44228', score: 10, analysisTime: 1_700_000_000_000 };
const vm = { hostName: 'hôte-1', startTime: 1_600_000_000_000, lastHeardTime: 1_600_000_100_000, vmId: 'vm-1', tags: { env: 'prod', 'team "a"': 'ünïcode' } };

function expectedItem(cveState: 'USED' | 'PRESENT'): object {
  return { ...component, cveId: cve.cveId, score: cve.score, cveState, cveAnalysisTime: cve.analysisTime, ...vm };
}

function page(afterToken: string | undefined, warnings: string[], count: number): Buffer {
  const items = new EventItems();
  const vmBytes = vmPart(vm.hostName, vm.startTime, vm.lastHeardTime, vm.vmId, Object.entries(vm.tags));
  for (let k = 0; k < count; k++) items.push(componentPart(record, cve, k % 2 === 0 ? 'USED' : 'PRESENT'), vmBytes);
  return Buffer.from(eventsPage(100, afterToken, items, warnings, 12, afterToken !== undefined, (size) => Buffer.alloc(size)));
}

test('a page is byte for byte the JSON of its envelope and items, with and without afterToken', () => {
  const data = [expectedItem('USED'), expectedItem('PRESENT'), expectedItem('USED')];
  const withToken = { limit: 100, afterToken: 'WyJ2bS0xIl0', data, summary: { warnings: ['limit "x" — lowered'], totalCount: 12 }, size: 3, hasNext: true };
  assert.equal(page('WyJ2bS0xIl0', ['limit "x" — lowered'], 3).toString('utf8'), JSON.stringify(withToken));
  const last = { limit: 100, data: [], summary: { warnings: [], totalCount: 12 }, size: 0, hasNext: false };
  assert.equal(page(undefined, [], 0).toString('utf8'), JSON.stringify(last));
});

test('a page larger than the shared item buffer keeps every item', () => {
  // 1000 items of ~300 bytes outgrow the 64 KB the buffer starts with.
  const body = JSON.parse(page(undefined, [], 1000).toString('utf8')) as { data: object[]; size: number };
  assert.equal(body.size, 1000);
  assert.equal(body.data.length, 1000);
  assert.deepEqual(body.data[999], expectedItem('PRESENT'));
});
