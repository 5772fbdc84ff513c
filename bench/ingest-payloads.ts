// Agent ingestion payloads built in memory from the seed fleet: set-up events, then NDJSON bodies of an exact number of code items.
import { fleetBatches } from '../src/seed/fleet.ts';
import type { FleetSpec } from '../src/seed/fleet.ts';

/** A code body whose event times are rewritten in place before each send (a replayed batch would change nothing). */
export interface CodeBody {
  bytes: Buffer;
  items: number;
  /** Byte offsets of the 13-digit `time` values, one per event. */
  timeOffsets: number[];
}

export interface IngestPayloads {
  /** vm.start and components events of every VM the bodies name, as JSON arrays: sent (untimed) before any code. */
  setup: string[];
  bodies: CodeBody[];
  vms: number;
}

/** Epoch milliseconds keep 13 digits from 2001 to 2286: a fixed width lets a time be overwritten in place. */
const TIME_DIGITS = 13;
const TIME_PLACEHOLDER = '0'.repeat(TIME_DIGITS);
/** Set-up events per JSON array: about 3 KB per VM keeps a batch far below the 16 MiB limit. */
const SETUP_VMS_PER_BATCH = 500;

type RawEvent = Record<string, unknown>;

class BodyBuilder {
  readonly #itemsPerBody: number;
  #lines: string[] = [];
  #items = 0;
  readonly bodies: CodeBody[] = [];

  constructor(itemsPerBody: number) {
    this.#itemsPerBody = itemsPerBody;
  }

  /** Adds a VM's code items, splitting its event where a body fills up. */
  add(vmId: string, items: readonly unknown[]): void {
    let from = 0;
    while (from < items.length) {
      const take = Math.min(items.length - from, this.#itemsPerBody - this.#items);
      this.#lines.push(`{"type":"code","vmId":${JSON.stringify(vmId)},"time":${TIME_PLACEHOLDER},"items":${JSON.stringify(items.slice(from, from + take))}}`);
      this.#items += take;
      from += take;
      if (this.#items === this.#itemsPerBody) this.#close();
    }
  }

  #close(): void {
    const timeOffsets: number[] = [];
    let offset = 0;
    for (const line of this.#lines) {
      timeOffsets.push(offset + Buffer.byteLength(line.slice(0, line.indexOf('"time":') + 7)));
      offset += Buffer.byteLength(line) + 1;
    }
    this.bodies.push({ bytes: Buffer.from(this.#lines.join('\n') + '\n'), items: this.#items, timeOffsets });
    this.#lines = [];
    this.#items = 0;
  }
}

/**
 * Takes the fleet VM by VM until `bodyCount` bodies of exactly `itemsPerBody` code items are full; the set-up
 * events cover exactly the VMs whose code made it into a body.
 */
export function buildIngestPayloads(spec: FleetSpec, itemsPerBody: number, bodyCount: number): IngestPayloads {
  const builder = new BodyBuilder(itemsPerBody);
  const setupEvents: RawEvent[] = [];
  let vms = 0;
  fleet: for (const batch of fleetBatches(spec)) {
    for (const event of batch) {
      if (event.type === 'vm.start' || event.type === 'components') {
        setupEvents.push(event);
        if (event.type === 'vm.start') vms++;
      } else if (event.type === 'code') {
        builder.add(String(event.vmId), event.items as unknown[]);
        if (builder.bodies.length >= bodyCount) break fleet;
      }
    }
  }
  if (builder.bodies.length < bodyCount) {
    throw new Error(`the fleet has code for ${builder.bodies.length} bodies of ${itemsPerBody} items, not ${bodyCount}: raise --vms or --methods`);
  }
  const setup: string[] = [];
  const eventsPerBatch = SETUP_VMS_PER_BATCH * 2;
  for (let i = 0; i < setupEvents.length; i += eventsPerBatch) setup.push(JSON.stringify(setupEvents.slice(i, i + eventsPerBatch)));
  return { setup, bodies: builder.bodies.slice(0, bodyCount), vms };
}

/** A copy of the body with every event's time set to `time` (epoch ms), so the copy in flight is never changed. */
export function stampTime(body: CodeBody, time: number): Buffer {
  const digits = String(time);
  if (digits.length !== TIME_DIGITS) throw new Error(`time ${time} is not ${TIME_DIGITS} digits`);
  const bytes = Buffer.from(body.bytes);
  for (const offset of body.timeOffsets) bytes.write(digits, offset, 'latin1');
  return bytes;
}
