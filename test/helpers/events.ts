// Builders of agent events for tests.
import { checkResponse } from './openapi.ts';

export function vmStart(vmId: string, time: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'vm.start',
    vmId,
    time,
    agentVersion: '1.5.0',
    agentRevision: 'abc1234',
    mailbox: 'mbox',
    inventory: {
      systemProperties: { 'java.version': '17.0.10', 'java.vm.vendor': 'Azul Systems, Inc.', 'os.name': 'Linux', 'os.arch': 'amd64' },
      hostName: `host-${vmId}`,
      osEnvironment: { PATH: '' },
      mainMethod: 'com.acme.Main',
      cpuInfo: { 'Number of Processors': 4, 'Number of Assigned Logical Cores': 4, 'CPU Vendor': 'GenuineIntel', 'CPU Model Name': 'Xeon', 'Number of Physical Cores': 2 },
    },
    ...extra,
  };
}

export async function ingest(gatewayUrl: string, key: string, events: unknown[], contentType = 'application/json'): Promise<{ status: number; body: any }> {
  const body = contentType === 'application/x-ndjson' ? events.map((e) => JSON.stringify(e)).join('\n') : JSON.stringify(events);
  const response = await fetch(`${gatewayUrl}/agent/v1/events`, { method: 'POST', headers: { 'content-type': contentType, 'x-api-key': key }, body });
  const text = await response.text();
  checkResponse('POST', `${gatewayUrl}/agent/v1/events`, response.status, response.headers.get('content-type') ?? '', text);
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

/** Agents posting a new VM's start each, one batch after another, until stopped; `acknowledged` holds the VMs answered 200. */
export interface Writers {
  readonly acknowledged: string[];
  /** Ends the loops, once each one's batch in flight is answered. */
  stop(): Promise<void>;
}

export function ingestUntilStopped(gatewayUrl: string, key: string, count: number): Writers {
  let writing = true;
  const acknowledged: string[] = [];
  const loops = Array.from({ length: count }, async (_, writer) => {
    for (let k = 0; writing; k++) {
      const vmId = `vm-${writer}-${k}`;
      const result = await ingest(gatewayUrl, key, [vmStart(vmId, Date.now())]);
      if (result.status !== 200) throw new Error(`batch of ${vmId} answered ${result.status}: ${JSON.stringify(result.body)}`);
      acknowledged.push(vmId);
    }
  });
  return {
    acknowledged,
    stop: async () => {
      writing = false;
      await Promise.all(loops);
    },
  };
}
