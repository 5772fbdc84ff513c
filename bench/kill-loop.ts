// The kill -9 loop of the hardening campaign: ingest through the gateway, SIGKILL the service mid-stream,
// restart it on the same data directory and check that every acknowledged batch is there, whole.
// `npm test` runs a few kills (test/hardening/kill-loop.test.ts); `npm run bench -- --filter chaos` the long run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startJvmlens } from './service.ts';
import type { JvmlensService } from './service.ts';

export interface KillLoopResult {
  kills: number;
  /** Batches answered 200 before a kill. */
  acknowledged: number;
  /** Acknowledged batches missing after a restart. */
  lost: number;
  /** Batches found with only some of their events (acknowledged or not): a batch is all or nothing. */
  partial: number;
  /** Batches sent but not answered before the kill (stored or not, never partial). */
  unanswered: number;
}

const COMPONENTS = 3;
const CONNECTIONS = 2;

/** One batch: a VM, its components and some code, so a partial write would show. */
function batch(vmId: string, now: number): unknown[] {
  const items = Array.from({ length: 200 }, (_, j) => ({ sourceName: `${vmId}.jar`, className: `com.example.K${j}`, methodName: 'run()' }));
  const components = Array.from({ length: COMPONENTS }, (_, j) => ({ componentName: `lib-${j}`, componentVersion: '1.0' }));
  return [
    { type: 'vm.start', vmId, time: now, agentVersion: '1', agentRevision: 'r', inventory: { hostName: `host-${vmId}` } },
    { type: 'components', vmId, time: now, items: components },
    { type: 'code', vmId, time: now, items },
  ];
}

/** How many components the service has for a VM: null when it does not know the VM. */
async function componentCount(service: JvmlensService, vmId: string): Promise<number | null> {
  const response = await fetch(`${service.apiUrl}/public/cve/events?vmId=${vmId}&showNotImpacted=true&limit=100`, { headers: { 'x-api-key': service.apiKey } });
  const body = (await response.json()) as { data: unknown[] };
  if (response.status !== 200) throw new Error(`CVE events for ${vmId}: ${response.status} ${JSON.stringify(body)}`);
  return body.data.length === 0 ? null : body.data.length;
}

export async function runKillLoop(kills: number, log: (line: string) => void = () => undefined): Promise<KillLoopResult> {
  const dataDir = mkdtempSync(join(tmpdir(), 'jvmlens-kill-loop-'));
  const result: KillLoopResult = { kills: 0, acknowledged: 0, lost: 0, partial: 0, unanswered: 0 };
  const acknowledged: string[] = [];
  let unanswered: string[] = [];
  let sequence = 0;
  try {
    for (let round = 0; round <= kills; round++) {
      const service = await startJvmlens({ dataDir, workers: 1 });
      try {
        // Every batch acknowledged so far must be there; a batch that was in flight is whole or absent.
        for (const vmId of acknowledged) {
          const count = await componentCount(service, vmId);
          if (count === null) result.lost++;
          else if (count !== COMPONENTS) result.partial++;
        }
        for (const vmId of unanswered) {
          const count = await componentCount(service, vmId);
          if (count !== null && count !== COMPONENTS) result.partial++;
        }
        unanswered = [];
        if (round === kills) break;
        let killed = false;
        const sender = async () => {
          while (!killed) {
            const vmId = `kill-${round}-${sequence++}`;
            unanswered.push(vmId);
            try {
              const response = await fetch(`${service.gatewayUrl}/agent/v1/events`, {
                method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': service.apiKey }, body: JSON.stringify(batch(vmId, Date.now())),
              });
              await response.arrayBuffer();
              if (response.status === 200 && !killed) {
                acknowledged.push(vmId);
                unanswered.splice(unanswered.indexOf(vmId), 1);
                result.acknowledged++;
              }
            } catch {
              return; // the connection died with the process
            }
          }
        };
        const senders = Array.from({ length: CONNECTIONS }, sender);
        await new Promise((resolve) => setTimeout(resolve, 150 + Math.random() * 450));
        process.kill(service.pid, 'SIGKILL');
        killed = true;
        await Promise.all(senders);
        result.kills++;
        log(`kill ${result.kills}/${kills}: ${result.acknowledged} acknowledged, ${result.lost} lost, ${result.partial} partial`);
      } finally {
        await service.stop();
      }
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  result.unanswered = sequence - result.acknowledged;
  return result;
}
