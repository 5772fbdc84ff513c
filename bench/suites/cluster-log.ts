// What a cluster's log costs per agent batch, in process: the gateway turning a validated batch into its
// command (split by code group, packed, deflated) and a node turning the command back into its group's events;
// beside them, what parsing and validating the body costs, which a log of bodies as received would make every
// node pay. The command's size, which the nats-servers store three times, is in `extra`.
import { decodeCommand, encodeCommand, eventsCommand, loggedEvents } from '../../src/cluster/commands.ts';
import type { Command } from '../../src/cluster/commands.ts';
import type { AgentEvent } from '../../src/ingest/events.ts';
import { batchEvents } from '../../src/writes.ts';
import type { AgentBatch } from '../../src/writes.ts';
import { describeFleet, fleetSpec } from '../fleet.ts';
import type { FleetSize } from '../fleet.ts';
import { newBench, runTinybench } from '../harness.ts';
import type { BenchOptions, BenchRow, Suite } from '../harness.ts';
import { buildIngestPayloads, stampTime } from '../ingest-payloads.ts';

const NAME = 'cluster-log';
const ITEMS = 10_000;
const GROUPS = 3;
const PARSE = `agent batch of ${ITEMS.toLocaleString('en-US')} code items: body parsed and validated`;
const ENCODE = `agent batch of ${ITEMS.toLocaleString('en-US')} code items: its log command in ${GROUPS} code groups (split, packed, deflated)`;
const DECODE = `agent batch of ${ITEMS.toLocaleString('en-US')} code items: a node's events of its group from the command (inflated, unpacked)`;
/** The cluster bench's ingestion fleet: its bodies are what the cluster rows send. */
const FLEET: Record<'quick' | 'full', FleetSize> = {
  quick: { vms: 1_000, componentsPerVm: 20, methods: 100_000 },
  full: { vms: 10_000, componentsPerVm: 20, methods: 1_000_000 },
};

export const suite: Suite = {
  name: NAME,
  rows: [PARSE, ENCODE, DECODE],
  async run(options: BenchOptions): Promise<BenchRow[]> {
    const size = options.quick ? FLEET.quick : FLEET.full;
    const now = Date.now();
    const bodies = buildIngestPayloads(fleetSpec(size), ITEMS, options.quick ? 4 : 20).bodies;
    const batches: AgentBatch[] = bodies.map((body) => ({ body: stampTime(body, now), contentType: 'application/x-ndjson', now }));
    const validated: AgentEvent[][] = batches.map(batchEvents);
    const encoded = validated.map((events) => encodeCommand(eventsCommand(events, now, GROUPS)));
    const bytesPerItem = encoded.reduce((sum, bytes) => sum + bytes.length, 0) / (encoded.length * ITEMS);
    let next = 0;
    const bench = newBench(options);
    bench.add(PARSE, () => {
      batchEvents(batches[next++ % batches.length]);
    });
    bench.add(ENCODE, () => {
      encodeCommand(eventsCommand(validated[next++ % validated.length], now, GROUPS));
    });
    bench.add(DECODE, () => {
      const command = decodeCommand(encoded[next++ % encoded.length]) as Extract<Command, { kind: 'events' }>;
      loggedEvents(command, next % GROUPS).decode();
    });
    const rows = await runTinybench(NAME, `${describeFleet(size)}, ${batches.length} bodies in turn`, bench, ITEMS, 'items/s');
    for (const row of rows) {
      row.extra = { usPerItem: Math.round((1e6 / row.rate) * 1000) / 1000, ...(row.name === ENCODE ? { commandBytesPerItem: Math.round(bytesPerItem * 100) / 100 } : {}) };
    }
    return rows;
  },
};
