// GET /public/cve/events stays complete while the service re-reads the fleet after an import (decisions §11: stable while data is added).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { componentsEvent, cveImport, CVSS, getEvents, GROUP, osvRecord, startEvent, walkEvents } from '../helpers/cve.ts';
import { eventKey } from './fleet-model.ts';
import { ingest } from '../helpers/events.ts';
import { startService, tempDir } from '../helpers/service.ts';
import type { RunningService } from '../helpers/service.ts';

/** Enough VMs that re-reading them takes a while; one batch through the gateway. */
const VMS = 10_000;
const LOG4J = { componentName: 'log4j-core', componentVersion: '2.14.1', groupId: 'org.apache.logging.log4j' };
const SPRING = { componentName: 'spring-core', componentVersion: '5.3.17', groupId: 'org.springframework' };
let service: RunningService;

before(async () => {
  service = await startService();
  const now = Date.now();
  const fleet = Array.from({ length: VMS }, (_, i) => {
    const vmId = `fleet-${String(i).padStart(5, '0')}`;
    return [startEvent(vmId, now - 60_000, `host-${i % 50}`, { env: i % 3 === 0 ? 'prod' : 'dev' }), componentsEvent(vmId, now - 60_000, i % 2 === 0 ? [LOG4J, SPRING] : [SPRING])];
  }).flat();
  fleet.push(startEvent('race-reference', now, 'host-race', { race: 'yes' }), componentsEvent('race-reference', now, [LOG4J]));
  const result = await ingest(service.gatewayUrl, service.apiKey, fleet);
  assert.equal(result.status, 200, JSON.stringify(result.body));
});

after(() => service?.stop());

/** Two readers comparing each answer with the one before the race, and two writers adding VMs tagged `race`, until stopped. */
function race(tag: string, baseline: { all: number; prod: number }): { stop(): Promise<void>; short: string[]; racers: string[] } {
  let stopping = false;
  const short: string[] = [];
  const racers: string[] = [];
  const reader = async () => {
    while (!stopping) {
      const [all, tagged] = await Promise.all([getEvents(service, { limit: 1 }), getEvents(service, { 'tags.env': 'prod', limit: 1 })]);
      // New VMs only add rows.
      if (all.body.summary.totalCount < baseline.all || all.body.size !== 1) short.push(`no filter: ${all.text.slice(0, 200)}`);
      if (tagged.body.summary.totalCount !== baseline.prod) short.push(`tags.env=prod: ${tagged.text.slice(0, 200)}`);
    }
  };
  const writer = async (name: string) => {
    for (let k = 0; !stopping; k++) {
      const vmId = `${tag}-${name}-${k}`;
      const result = await ingest(service.gatewayUrl, service.apiKey, [startEvent(vmId, Date.now(), 'host-race', { race: tag }), componentsEvent(vmId, Date.now(), [LOG4J])]);
      assert.equal(result.status, 200);
      racers.push(vmId);
    }
  };
  const loops = [reader(), reader(), writer('a'), writer('b')];
  return {
    short,
    racers,
    async stop() {
      stopping = true;
      await Promise.all(loops);
    },
  };
}

/** Every racer VM (and the reference) once, with the reference's CVEs; no short answer. */
async function checkRace(tag: string, run: { short: string[]; racers: string[] }, reference: string[], vmIds: string[]): Promise<void> {
  const walk = await walkEvents(service, { 'tags.race': tag, limit: 1000 });
  const keys = walk.items.map(eventKey);
  const repeated = keys.filter((key, i) => keys.indexOf(key) !== i);
  assert.deepEqual({ shortAnswers: run.short.slice(0, 3), repeatedItems: repeated.slice(0, 8) }, { shortAnswers: [], repeatedItems: [] }, `${run.short.length} short answers; ${repeated.length} items listed twice`);
  const expected = [...vmIds, ...run.racers].sort().flatMap((vmId) => reference.map((cveId) => `${vmId}|log4j-core|2.14.1|${cveId}`));
  if (keys.join('\n') !== expected.join('\n')) {
    // Which VMs, and whether each is missing from the index or only from the tag's posting list: for the next reader.
    const listed = new Set(walk.items.map((item: any) => item.vmId as string));
    const missing = [...vmIds, ...run.racers].filter((vmId) => !listed.has(vmId));
    const byVmId = await Promise.all(missing.slice(0, 5).map(async (vmId) => `${vmId}: ${(await getEvents(service, { vmId })).body.data.length} items by vmId`));
    assert.deepEqual(keys, expected, `each of the ${run.racers.length} VMs ingested during the race, once; missing: ${missing.length} (${byVmId.join('; ')}); log: ${service.stderr().split('\n').filter((line) => /re-match|rebuild|CVE/.test(line)).slice(-5).join(' | ')}`);
  }
}

async function baselines(): Promise<{ reference: string[]; baseline: { all: number; prod: number } }> {
  const reference = (await getEvents(service, { vmId: 'race-reference' })).body.data.map((e: any) => e.cveId as string);
  assert.ok(reference.length > 0, 'log4j-core 2.14.1 has curated CVEs');
  const all = (await getEvents(service, { limit: 1 })).body.summary.totalCount;
  const prod = (await getEvents(service, { 'tags.env': 'prod', limit: 1 })).body.summary.totalCount;
  return { reference, baseline: { all, prod } };
}

test('queries and ingestion during the re-read after an import: no empty or short answer, no item twice', async () => {
  const { reference, baseline } = await baselines();
  const run = race('yes', baseline);
  // An advisory that matches nothing: the service still re-matches and re-reads the fleet.
  const folder = tempDir('jvmlens-osv-');
  writeFileSync(join(folder, 'nothing.json'), JSON.stringify(osvRecord({ osvId: 'GHSA-jvml-0400-xxxx', cveId: 'CVE-2099-9401', groupId: GROUP, artifactId: 'no-such-lib', versions: ['1.0'], severity: CVSS.score33 })));
  const rematches = () => (service.stderr().match(/re-matched the fleet/g) ?? []).length;
  const before = rematches();
  await cveImport(service.dataDir, [folder]);
  const deadline = Date.now() + 10_000;
  while (rematches() === before && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.ok(rematches() > before, 'the service re-matched after the import');
  // The re-read follows the re-match; keep reading and writing through it.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  await run.stop();
  await checkRace('yes', run, reference, ['race-reference']);
});

test('sustained ingestion alone (no other process writes): no empty or short answer, no item twice', async () => {
  const { reference, baseline } = await baselines();
  const run = race('alone', baseline);
  // Three of the service's 2-second checks for writes by other processes.
  await new Promise((resolve) => setTimeout(resolve, 6_000));
  await run.stop();
  await checkRace('alone', run, reference, []);
});
