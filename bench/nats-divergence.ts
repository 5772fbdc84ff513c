// Does nats-server keep one history of a replicated stream while its servers are killed or paused? No
// jvmlens here: three nats-server processes on loopback and an R3 stream; four publishers (each
// acknowledged sequence with a CRC of its bytes), three readers each connected to its own server (ordered
// consumers, a new one after 2 s of silence, as a node's replica does), and every 4-8 s one server
// SIGKILLed (restarted 1-4 s later) or SIGSTOPped for 3-15 s. Then it counts the sequences the readers
// read with different bytes, the acknowledged ones read otherwise than published (by each reader), the
// sequences at which JetStream acknowledged two different writes, the acknowledged writes missing from each
// reader's history (and from how many readers each is missing: `missingFromReaders`), and how far from their acknowledged sequences the others were read (a jvmlens node looks
// for its writes by message id up to LOST_PAST commands later: src/cluster/acknowledged-writes.ts).
//
//   node dist/bench/nats-divergence.js [--seconds 300] [--faults both|kill|stop] [--purge] [--leader-reader] [--retry-ids same|new]
//
// `--purge` also purges below the slowest reader every 500 ms, as the chaos bench's truncation does.
// `--leader-reader` adds a fourth reader that asks the stream's leader for each message instead.
// `--retry-ids new` gives each attempt to publish a write an id of its own, where the publishers retry with the
// same id by default (as a gateway's append did before 068d207): JetStream then never rejects a retry as a duplicate. A
// rejected duplicate counts as a failed sequence on each server (`clfs`), which nats-server 2.9.10 does not
// keep in step between servers across a change of leader (fixed in 2.9.21, nats-io/nats-server#4365).
import { randomBytes, randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createHash } from 'node:crypto';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { JetStreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { ConnectionOptions } from '@nats-io/transport-node';
import { LOST_PAST } from '../src/cluster/acknowledged-writes.ts';
import { startNatsServers } from '../src/cluster/nats-servers.ts';
import type { NatsServer } from '../src/cluster/nats-servers.ts';
import { temporaryDir } from './fleet.ts';

const STREAM = 'DIVERGENCE';
const PUBLISHERS = 4;
const FAULT_EVERY_MS = [4_000, 8_000];
const DOWN_MS = [1_000, 4_000];
const PAUSE_MS = [3_000, 15_000];
/** A reader whose consumer delivered nothing this long starts a new one (its server died or hung). */
const STALL_MS = 2_000;
/** Messages the leader reader asks for at once. */
const LEADER_GETS = 32;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const between = ([low, high]: number[]) => low + Math.random() * (high - low);
const log = (line: string) => console.log(`${new Date().toISOString().slice(11, 23)} ${line}`);

/** 48 bits of the bytes' SHA-1: a CRC-32 of 600,000 random writes has dozens of collisions. */
const fingerprint = (data: Uint8Array): number => createHash('sha1').update(data).digest().readUIntBE(0, 6);

interface Reader {
  /** Fingerprint of the bytes read at each sequence. */
  read: Map<number, number>;
  next: number;
  /** Sequences delivered past the next one expected: commands missing from the history this reader was given. */
  gaps: number;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { seconds: { type: 'string', default: '300' }, faults: { type: 'string', default: 'both' }, purge: { type: 'boolean', default: false }, 'leader-reader': { type: 'boolean', default: false }, 'retry-ids': { type: 'string', default: 'same' } } });
  const seconds = Number(values.seconds);
  const faults = values.faults;
  const newIds = values['retry-ids'] === 'new';
  if (!['both', 'kill', 'stop'].includes(faults) || !['same', 'new'].includes(values['retry-ids']) || !(seconds > 0)) throw new Error('usage: nats-divergence [--seconds N] [--faults both|kill|stop] [--purge] [--leader-reader] [--retry-ids same|new]');
  const servers = await startNatsServers(3, temporaryDir('nats-divergence-'));
  const urls = servers.map((server) => server.url);
  // Each client starts on server `first` and moves to the others when it dies, as jvmlens nodes do (log.ts).
  const on = (first: number): ConnectionOptions => ({ servers: [urls[first], ...urls.filter((_, k) => k !== first)], reconnectTimeWait: 500, maxReconnectAttempts: -1, pingInterval: 3_000, maxPingOut: 3, timeout: 3_000 });
  const admin = await connect(on(0));
  const jsm = await jetstreamManager(admin, { timeout: 5_000, checkAPI: false });
  await createStream(jsm);

  let running = true;
  const acknowledged = new Map<number, number>();
  /** Every acknowledged write, also the second one acknowledged at a sequence. */
  const writes: { seq: number; crc: number }[] = [];
  let refused = 0;
  let acknowledgedTwice = 0;
  const publisher = async (k: number) => {
    const nc = await connect(on(k % 3));
    const js = jetstream(nc, { timeout: 2_000 });
    while (running) {
      const data = randomBytes(400 + Math.floor(Math.random() * 200));
      // Retried with the same id until acknowledged or 10 s passed, as a gateway's append does (`--retry-ids new`: a new one each time).
      const firstId = randomUUID();
      const deadline = Date.now() + 10_000;
      for (let attempt = 0; ; attempt++) {
        try {
          const { seq } = await js.publish(`divergence.${k}`, data, { msgID: newIds ? `${firstId}.${attempt}` : firstId, timeout: 2_000 });
          const crc = fingerprint(data);
          // Two writes acknowledged at one sequence: JetStream promised both, the log can hold one.
          if (acknowledged.has(seq) && acknowledged.get(seq) !== crc) acknowledgedTwice++;
          acknowledged.set(seq, crc);
          writes.push({ seq, crc });
          break;
        } catch {
          if (Date.now() > deadline) {
            refused++;
            break;
          }
          await sleep(300);
        }
      }
    }
    await nc.close();
  };
  const readers: Reader[] = [0, 1, 2].map(() => ({ read: new Map(), next: 1, gaps: 0 }));
  const reader = async (k: number) => {
    const nc = await connect(on(k));
    const js = jetstream(nc, { timeout: 3_000 });
    const me = readers[k];
    while (running) {
      try {
        const messages = await (await js.consumers.get(STREAM, { opt_start_seq: me.next })).consume({ max_messages: 64 });
        let heardAt = Date.now();
        const watchdog = setInterval(() => {
          if (!running || Date.now() - heardAt > STALL_MS) messages.stop();
        }, 250);
        for await (const message of messages) {
          heardAt = Date.now();
          if (message.seq < me.next) continue;
          if (message.seq > me.next) me.gaps++;
          me.read.set(message.seq, fingerprint(message.data));
          me.next = message.seq + 1;
        }
        clearInterval(watchdog);
      } catch {
        await sleep(300);
      }
    }
    await nc.close();
  };
  const purger = async () => {
    while (running) {
      await sleep(500);
      const below = Math.min(...readers.map((r) => r.next)) - 200;
      if (below > 1) await jsm.streams.purge(STREAM, { seq: below }).catch(() => undefined);
    }
  };
  // A fourth reader asks the stream's leader for each message (STREAM.MSG.GET, not a direct get): does the
  // leader's history differ from what consumers on the servers give?
  const leaderReader = async (into: Reader) => {
    const nc = await connect(on(0));
    const leaderJsm = await jetstreamManager(nc, { timeout: 2_000, checkAPI: false });
    while (running) {
      const seqs = Array.from({ length: LEADER_GETS }, (_, k) => into.next + k);
      const got = await Promise.all(seqs.map((seq) => leaderJsm.streams.getMessage(STREAM, { seq }).catch(() => null)));
      let k = 0;
      for (; k < got.length && got[k] !== null; k++) into.read.set(seqs[k], fingerprint(got[k]!.data));
      into.next += k;
      if (k < got.length) await sleep(50);
    }
    await nc.close();
  };
  if (values['leader-reader']) readers.push({ read: new Map(), next: 1, gaps: 0 });
  const load = [...Array.from({ length: PUBLISHERS }, (_, k) => publisher(k)), ...[0, 1, 2].map(reader), ...(values['leader-reader'] ? [leaderReader(readers[3])] : []), ...(values.purge ? [purger()] : [])];

  let kills = 0;
  let pauses = 0;
  const end = Date.now() + seconds * 1_000;
  while (Date.now() < end) {
    await sleep(between(FAULT_EVERY_MS));
    const server = servers[Math.floor(Math.random() * 3)];
    if (faults === 'kill' || (faults === 'both' && Math.random() < 0.5)) {
      await kill(server);
      kills++;
    } else {
      await pause(server);
      pauses++;
    }
    log(`${acknowledged.size} acknowledged; readers at ${readers.map((r) => r.next - 1).join(', ')}`);
  }
  // The readers catch up with the servers all running, then stop.
  await sleep(15_000);
  running = false;
  await Promise.race([Promise.all(load), sleep(10_000)]);

  let differing = 0;
  let acknowledgedReadOtherwise = 0;
  const readOtherwiseBy = readers.map(() => 0);
  const firstDiffering: number[] = [];
  const last = Math.max(...readers.map((r) => r.next - 1));
  for (let seq = 1; seq <= last; seq++) {
    const crcs = readers.map((r) => r.read.get(seq)).filter((crc) => crc !== undefined);
    if (new Set(crcs).size > 1) {
      differing++;
      if (firstDiffering.length < 5) firstDiffering.push(seq);
    }
    const published = acknowledged.get(seq);
    if (published !== undefined && crcs.some((crc) => crc !== published)) acknowledgedReadOtherwise++;
    if (published !== undefined) readers.forEach((r, k) => {
      const crc = r.read.get(seq);
      if (crc !== undefined && crc !== published) readOtherwiseBy[k]++;
    });
  }
  // Acknowledged writes (up to where each reader read) not in its history at all: a writer that looks for
  // its writes' message ids as it reads (a jvmlens node) appends those again. And the ones it holds at
  // another sequence: how far from the acknowledged one at most, and how many more than LOST_PAST later
  // (those such a writer would append again needlessly, the write then being there twice).
  const missingBy = readers.map(() => 0);
  const shiftMaxBy = readers.map(() => 0);
  const foundTooLateBy = readers.map(() => 0);
  // Of the writes every reader read past, how many are missing from no reader, one, two, three: one the
  // writer's own reader holds and the others lack, a jvmlens node that read the odd history hands them
  // before it rebuilds itself (src/cluster/hand-over-writes.ts); one missing from all, only its writer can append again.
  const readPast = Math.min(...readers.map((r) => r.next));
  const missingFromReaders = [0, 0, 0, 0];
  const missingFrom = new Map<string, number>();
  readers.forEach((r, k) => {
    const at = new Map<number, number>();
    for (const [seq, crc] of r.read) at.set(crc, seq);
    for (const { seq, crc } of writes) {
      if (seq >= r.next) continue;
      const read = at.get(crc);
      if (seq < readPast) missingFrom.set(`${seq}:${crc}`, (missingFrom.get(`${seq}:${crc}`) ?? 0) + (read === undefined ? 1 : 0));
      if (read === undefined) missingBy[k]++;
      else {
        shiftMaxBy[k] = Math.max(shiftMaxBy[k], Math.abs(read - seq));
        if (read > seq + LOST_PAST) foundTooLateBy[k]++;
      }
    }
  });
  for (const count of missingFrom.values()) missingFromReaders[count]++;
  console.log(JSON.stringify({ seconds, faults, purge: values.purge, retryIds: values['retry-ids'], kills, pauses, acknowledged: acknowledged.size, refused, acknowledgedTwice, readersAt: readers.map((r) => r.next - 1), gaps: readers.map((r) => r.gaps), differing, acknowledgedReadOtherwise, readOtherwiseBy, missingBy, missingFromReaders, shiftMaxBy, foundTooLateBy, firstDiffering }));
  await admin.close();
  await Promise.all(servers.map((server) => server.stop('SIGKILL')));
}

async function kill(server: NatsServer): Promise<void> {
  await server.stop('SIGKILL');
  log(`SIGKILL ${server.name}`);
  await sleep(between(DOWN_MS));
  await server.start();
}

async function pause(server: NatsServer): Promise<void> {
  const ms = between(PAUSE_MS);
  process.kill(server.pid!, 'SIGSTOP');
  log(`SIGSTOP ${server.name} for ${Math.round(ms / 1000)} s`);
  await sleep(ms);
  process.kill(server.pid!, 'SIGCONT');
}

/** The R3 stream, once the servers elected their JetStream meta leader. */
async function createStream(jsm: JetStreamManager): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await jsm.streams.add({ name: STREAM, subjects: ['divergence.>'], num_replicas: 3, duplicate_window: 120e9, allow_direct: true });
      return;
    } catch (error) {
      if (attempt >= 60) throw error;
      await sleep(500);
    }
  }
}

await main();
process.exit(0);
