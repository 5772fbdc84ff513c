// The peers' fleet (issue 14): one deterministic fleet, posted to a jvmlens gateway and appended to DuckDB
// in the same pass, so both engines answer the same question on the same rows.
import { DuckDBInstance } from '@duckdb/node-api';
import type { DuckDBAppender, DuckDBConnection } from '@duckdb/node-api';
import { postBatch } from '../src/cli/seed.ts';
import { fleetBatches } from '../src/seed/fleet.ts';
import type { FleetSpec } from '../src/seed/fleet.ts';
import { progress } from './harness.ts';

type RawEvent = Record<string, unknown>;

/** Posted this many VMs at a time: a few hundred kB of NDJSON per request. */
const VMS_PER_BATCH = 100;
/** Requests in flight at once, as a handful of agents would have. */
const IN_FLIGHT = 4;

const SCHEMA = `
  CREATE TABLE vm (id INTEGER, vm_id VARCHAR, host VARCHAR, agent_version VARCHAR, java_version VARCHAR,
    java_vendor VARCHAR, start_time BIGINT, last_heard BIGINT, stop_time BIGINT, app_env VARCHAR, env VARCHAR,
    region VARCHAR, team VARCHAR);
  CREATE TABLE component (id INTEGER, name VARCHAR, version VARCHAR);
  CREATE TABLE vm_component (vm INTEGER, component INTEGER);
  CREATE TABLE code (app_env VARCHAR, source VARCHAR, class VARCHAR, method VARCHAR, first_seen BIGINT, last_seen BIGINT);`;

interface VmRow {
  vmId: string;
  host: string;
  agentVersion: string;
  javaVersion: string;
  javaVendor: string;
  startTime: number;
  lastHeard: number;
  stopTime: number | null;
  tags: Record<string, string>;
}

/** Code sightings per (AppEnv, method): jvmlens keeps them so (decisions §4), and so does the peer's table. */
interface Sighting {
  appEnv: string;
  sourceName: string;
  className: string;
  methodName: string;
  first: number;
  last: number;
}

function appendText(appender: DuckDBAppender, value: string | undefined | null): void {
  if (value === undefined || value === null) appender.appendNull();
  else appender.appendVarchar(value);
}

/** Folds one VM's events into its row: what jvmlens's ingestion derives from the same events (decisions §4). */
function vmRow(events: readonly RawEvent[]): VmRow {
  const start = events.find((event) => event.type === 'vm.start')!;
  const inventory = start.inventory as { hostName: string; systemProperties: Record<string, string> };
  const properties = inventory.systemProperties;
  const stop = events.find((event) => event.type === 'vm.stop');
  return {
    vmId: String(start.vmId),
    host: inventory.hostName,
    agentVersion: String(start.agentVersion),
    javaVersion: properties['java.runtime.version'] ?? properties['java.version'],
    javaVendor: properties['java.vm.vendor'],
    startTime: Number(start.time),
    lastHeard: Math.max(...events.map((event) => Number(event.time))),
    stopTime: stop === undefined ? null : Number(stop.time),
    tags: start.tags as Record<string, string>,
  };
}

export class PeerFleet {
  readonly connection: DuckDBConnection;
  readonly #components = new Map<string, number>();
  readonly #sightings = new Map<string, Sighting>();
  #vmCount = 0;

  private constructor(connection: DuckDBConnection) {
    this.connection = connection;
  }

  /** An in-memory DuckDB with the schema, ready for `ingest`. */
  static async create(): Promise<PeerFleet> {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    await connection.run(SCHEMA);
    return new PeerFleet(connection);
  }

  /** Posts the fleet to the gateway and appends the same rows to DuckDB; returns the seconds each side took. */
  async ingest(spec: FleetSpec, gatewayUrl: string, key: string): Promise<{ jvmlensS: number; duckdbS: number }> {
    const vms = await this.connection.createAppender('vm');
    const pairs = await this.connection.createAppender('vm_component');
    let postMs = 0;
    let appendMs = 0;
    const inFlight = new Set<Promise<void>>();
    const started = performance.now();
    let done = 0;
    for (const batch of fleetBatches(spec, VMS_PER_BATCH)) {
      const post = postBatch(gatewayUrl, key, batch).finally(() => inFlight.delete(post));
      inFlight.add(post);
      const appendStarted = performance.now();
      this.#append(batch, vms, pairs);
      appendMs += performance.now() - appendStarted;
      if (inFlight.size >= IN_FLIGHT) await Promise.race(inFlight);
      done += VMS_PER_BATCH;
      if (done % 10_000 === 0) progress(`peers: ${done}/${spec.vms} VMs ingested (${Math.round(done / ((performance.now() - started) / 1000))} VMs/s)`);
    }
    await Promise.all(inFlight);
    postMs = performance.now() - started - appendMs;
    const finishStarted = performance.now();
    vms.closeSync();
    pairs.closeSync();
    await this.#appendTables();
    appendMs += performance.now() - finishStarted;
    return { jvmlensS: postMs / 1000, duckdbS: appendMs / 1000 };
  }

  #append(batch: readonly RawEvent[], vms: DuckDBAppender, pairs: DuckDBAppender): void {
    const byVm = new Map<string, RawEvent[]>();
    for (const event of batch) {
      const vmId = String(event.vmId);
      let events = byVm.get(vmId);
      if (events === undefined) byVm.set(vmId, (events = []));
      events.push(event);
    }
    for (const events of byVm.values()) {
      const id = this.#vmCount++;
      const row = vmRow(events);
      vms.appendInteger(id);
      vms.appendVarchar(row.vmId);
      vms.appendVarchar(row.host);
      vms.appendVarchar(row.agentVersion);
      appendText(vms, row.javaVersion);
      appendText(vms, row.javaVendor);
      vms.appendBigInt(BigInt(row.startTime));
      vms.appendBigInt(BigInt(row.lastHeard));
      if (row.stopTime === null) vms.appendNull();
      else vms.appendBigInt(BigInt(row.stopTime));
      for (const key of ['AppEnv', 'env', 'region', 'team']) appendText(vms, row.tags[key]);
      vms.endRow();
      for (const event of events) {
        const items = event.items as Record<string, string>[];
        if (event.type === 'components') {
          for (const item of items) {
            const key = `${item.componentName}\u0000${item.componentVersion}`;
            let component = this.#components.get(key);
            if (component === undefined) this.#components.set(key, (component = this.#components.size));
            pairs.appendInteger(id);
            pairs.appendInteger(component);
            pairs.endRow();
          }
        } else if (event.type === 'code') {
          const appEnv = row.tags.AppEnv ?? '';
          const time = Number(event.time);
          for (const item of items) {
            const key = `${appEnv}\u0000${item.sourceName}\u0000${item.className}\u0000${item.methodName}`;
            const sighting = this.#sightings.get(key);
            if (sighting === undefined) this.#sightings.set(key, { appEnv, sourceName: item.sourceName, className: item.className, methodName: item.methodName, first: time, last: time });
            else {
              sighting.first = Math.min(sighting.first, time);
              sighting.last = Math.max(sighting.last, time);
            }
          }
        }
      }
    }
  }

  async #appendTables(): Promise<void> {
    const components = await this.connection.createAppender('component');
    for (const [key, id] of this.#components) {
      const [name, version] = key.split('\u0000');
      components.appendInteger(id);
      components.appendVarchar(name);
      components.appendVarchar(version);
      components.endRow();
    }
    components.closeSync();
    const code = await this.connection.createAppender('code');
    for (const sighting of this.#sightings.values()) {
      code.appendVarchar(sighting.appEnv);
      code.appendVarchar(sighting.sourceName);
      code.appendVarchar(sighting.className);
      code.appendVarchar(sighting.methodName);
      code.appendBigInt(BigInt(sighting.first));
      code.appendBigInt(BigInt(sighting.last));
      code.endRow();
    }
    code.closeSync();
    this.#sightings.clear();
  }
}
