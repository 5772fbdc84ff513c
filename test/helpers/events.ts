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
