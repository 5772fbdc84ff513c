// What a cluster's log costs per agent batch, in process: the gateway turning a validated batch into its
// command (split by code group, packed, deflated), a node turning the command back into its group's events,
// and a node applying it to its store (what every node does for every batch); beside them, what parsing and
// validating the body costs, which a log of bodies as received would make every node pay. The command's size,
// which the nats-servers store three times, is in `extra`. And what the node that took the batch pays to
// journal the command on its disk until it reads it back (src/cluster/write-journal.ts), before its 200.
import { decodeCommand, encodeCommand, eventsCommand, loggedEvents, subjectOf } from '../../src/cluster/commands.ts';
import { WriteJournal } from '../../src/cluster/write-journal.ts';
import type { Command } from '../../src/cluster/commands.ts';
import type { AgentEvent } from '../../src/ingest/events.ts';
import { batchEvents } from '../../src/writes.ts';
import type { AgentBatch } from '../../src/writes.ts';
import { describeFleet, fleetSize, fleetSpec, temporaryDir } from '../fleet.ts';
import type { FleetSize } from '../fleet.ts';
import { newBench, runTinybench, wanted } from '../harness.ts';
import type { BenchOptions, BenchRow, Suite } from '../harness.ts';
import { buildIngestPayloads, stampTime } from '../ingest-payloads.ts';
import type { IngestPayloads } from '../ingest-payloads.ts';
import { validateEvents } from '../../src/ingest/events.ts';
import { Dictionary } from '../../src/storage/dictionary.ts';
import { Ingestor } from '../../src/storage/ingest.ts';
import { openStore } from '../../src/storage/store.ts';

const NAME = 'cluster-log';
const ITEMS = 10_000;
const GROUPS = 3;
const PARSE = `agent batch of ${ITEMS.toLocaleString('en-US')} code items: body parsed and validated`;
const ENCODE = `agent batch of ${ITEMS.toLocaleString('en-US')} code items: its log command in ${GROUPS} code groups (split, packed, deflated)`;
const DECODE = `agent batch of ${ITEMS.toLocaleString('en-US')} code items: a node's events of its group from the command (inflated, unpacked)`;
const JOURNAL = `agent batch of ${ITEMS.toLocaleString('en-US')} code items: its command journaled by the node that took it, then released once read back (LMDB put, remove)`;
const APPLY = `agent batch of ${ITEMS.toLocaleString('en-US')} code items already known: applied by a node of code group 0 of ${GROUPS} from the command (unpacked, written to LMDB, flushed)`;
/** Groups so many that a node's share of a batch is 1 %: what every node pays per batch whatever its share (the VM side, the decoding, the transaction). */
const FEW_GROUPS_ITEMS = 100;
const APPLY_VM_SIDE = `agent batch of ${ITEMS.toLocaleString('en-US')} code items already known: applied by a node of code group 0 of ${FEW_GROUPS_ITEMS.toLocaleString('en-US')} (about ${ITEMS / FEW_GROUPS_ITEMS} of its items: the cost every node pays per batch)`;
/** The cluster bench's ingestion fleet: its bodies are what the cluster rows send. */
const FLEET: Record<'quick' | 'full', FleetSize> = {
  quick: { vms: 1_000, componentsPerVm: 20, methods: 100_000 },
  full: { vms: 10_000, componentsPerVm: 20, methods: 1_000_000 },
};

export const suite: Suite = {
  name: NAME,
  rows: [PARSE, ENCODE, DECODE, JOURNAL, APPLY, APPLY_VM_SIDE],
  async run(options: BenchOptions): Promise<BenchRow[]> {
    const size = fleetSize(options, FLEET);
    const now = Date.now();
    const payloads = buildIngestPayloads(fleetSpec(size), ITEMS, options.quick ? 4 : 20);
    const { bodies } = payloads;
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
    const journal = wanted(options, NAME, JOURNAL) ? WriteJournal.open(temporaryDir('cluster-journal-')) : null;
    if (journal !== null) {
      const subject = subjectOf(eventsCommand([], now, GROUPS));
      bench.add(JOURNAL, async () => {
        const seq = next++;
        const msgId = `bench-${seq}`;
        await journal.hold({ seq, msgId, subject, bytes: encoded[seq % encoded.length] }, 0);
        await journal.release(msgId);
      });
    }
    const applying = new Map<string, Awaited<ReturnType<typeof appliedCommands>>>();
    for (const [row, groups] of [[APPLY, GROUPS], [APPLY_VM_SIDE, FEW_GROUPS_ITEMS]] as const) {
      if (!wanted(options, NAME, row)) continue;
      const commands = await appliedCommands(payloads, now, groups);
      applying.set(row, commands);
      bench.add(row, () => commands.applyNext(), { beforeAll: (mode) => commands.count(mode === 'run'), beforeEach: () => commands.stampNext() });
    }
    const rows = await runTinybench(NAME, `${describeFleet(size)}, ${batches.length} bodies in turn`, bench, ITEMS, 'items/s');
    for (const commands of applying.values()) await commands.close();
    await journal?.close();
    for (const row of rows) {
      row.extra = { usPerItem: Math.round((1e6 / row.rate) * 1000) / 1000, ...(row.name === ENCODE ? { commandBytesPerItem: Math.round(bytesPerItem * 100) / 100 } : {}) };
      // The process's CPU while applying (the write thread's included), steadier on a shared machine than the wall time with its flushes.
      const commands = applying.get(row.name);
      if (commands !== undefined) row.extra.cpuUsPerItem = Math.round(commands.cpuUsPerItem() * 1000) / 1000;
    }
    return rows;
  },
};

/**
 * The store of a node of code group 0 of `groups`, with the fleet's VMs and every body's code applied once, and the next command to apply:
 * a body stamped with a time later than the last (its sightings move), logged as its gateway would log it,
 * outside the timed step. A node that keeps up applies each logged batch in a transaction of its own.
 */
async function appliedCommands({ setup, bodies }: IngestPayloads, start: number, groups: number) {
  const store = openStore(temporaryDir('cluster-log-'));
  const ingestor = new Ingestor(store, new Dictionary(store));
  for (const events of setup) await ingestor.ingest(() => validateEvents(JSON.parse(events), start), start);
  let clock = start;
  let next = 0;
  let command = encodeCommand(eventsCommand([], start, groups));
  const stampNext = () => {
    const body = bodies[next++ % bodies.length];
    clock++;
    command = encodeCommand(eventsCommand(batchEvents({ body: stampTime(body, clock), contentType: 'application/x-ndjson', now: clock }), clock, groups));
  };
  let counting = false;
  let cpuMicros = 0;
  let applied = 0;
  const applyNext = async () => {
    const cpu = process.cpuUsage();
    const logged = loggedEvents(decodeCommand(command) as Extract<Command, { kind: 'events' }>, 0);
    await ingestor.ingest(logged.decode, logged.receivedAt);
    if (!counting) return;
    const used = process.cpuUsage(cpu);
    cpuMicros += used.user + used.system;
    applied++;
  };
  /** From now on, the CPU of each batch applied is counted (or not). */
  const count = (on: boolean) => {
    counting = on;
    cpuMicros = 0;
    applied = 0;
  };
  // Every body once: its code is known from then on.
  for (let k = 0; k < bodies.length; k++) {
    stampNext();
    await applyNext();
  }
  return { stampNext, applyNext, count, cpuUsPerItem: () => cpuMicros / (applied * ITEMS), close: () => store.close() };
}
