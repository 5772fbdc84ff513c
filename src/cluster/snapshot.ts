// A copy of a node's data sent over NATS to a node the log was truncated past (restore.ts): the node that
// has the data makes a consistent copy of its data directory (storage/copy.ts, as `jvmlens backup` does),
// and the joining node reads the copy's files in chunks, by request and reply.
import { randomUUID } from 'node:crypto';
import { mkdir, open, readdir, rm, stat } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger } from '../log.ts';
import { copyStore } from '../storage/copy.ts';
import type { Store } from '../storage/store.ts';
import { decodeMessage, encodeMessage } from './commands.ts';
import { respond } from './replies.ts';

const SUBJECT = 'jvmlens.snapshot';
/** Copying a data directory of gigabytes takes a while: the joining node waits this long for it. */
const COPY_WAIT_MS = 10 * 60_000;
/** Every request is answered at once (the copy is made meanwhile): a node silent this long is hung or gone. */
const ANSWER_WAIT_MS = 5_000;
const POLL_MS = 250;
const CHUNK_WAIT_MS = 30_000;
/** Chunks asked for at once: the next is on its way while one is written. */
const CHUNKS_IN_FLIGHT = 4;
const MAX_CHUNK = 4 * 1024 * 1024;
/** Room in a reply for its encoding; a chunk of incompressible bytes grows a little when deflated. */
const CHUNK_SLACK = 64 * 1024;
/** A copy nobody read from this long is removed (its joining node died or gave up). */
const IDLE_MS = 2 * 60_000;
const PROGRESS_MS = 5_000;
/** Where a node makes its copies, inside its data directory. */
const COPIES_DIR = 'snapshots';

export interface SnapshotFile {
  /** Relative to the data directory: `jvmlens.mdb`, `pages/<report>/<page>`. */
  path: string;
  size: number;
}

/** Open a copy (it is made meanwhile), ask whether it is made, read a chunk of one of its files, close it. */
type SnapshotAsk =
  | { op: 'open'; nodeId: string }
  | { op: 'made'; id: string }
  | { op: 'chunk'; id: string; path: string; offset: number; length: number }
  | { op: 'close'; id: string };

type SnapshotAnswer =
  | { ok: true; id: string }
  | { ok: true; made: false }
  | { ok: true; made: true; files: SnapshotFile[]; applied: number }
  | { ok: true; bytes: Uint8Array }
  | { ok: true }
  | { ok: false; message: string };

export interface SnapshotSourceOptions {
  nc: NatsConnection;
  nodeId: string;
  dataDir: string;
  /** The node's store, open: the copy is made from it. */
  store: Store;
  /** Why this node cannot give a copy now (not caught up, disconnected), or null. */
  unavailable: () => string | null | Promise<string | null>;
  /** The last log sequence applied here: the copy holds at least that much. */
  applied: () => number;
  /** Keeps the log from being truncated past `seq` for the node that takes the copy, until it records its own place. */
  holdLog: (nodeId: string, seq: number) => Promise<void>;
  logger: Logger;
}

interface Copy {
  dir: string;
  /** The log sequence the copy holds at least. */
  applied: number;
  /** Its files once made; why it could not be made. */
  files: Map<string, number> | null;
  failure: string | null;
  usedAt: number;
}

async function listFiles(dir: string): Promise<SnapshotFile[]> {
  const files: SnapshotFile[] = [];
  // Paths relative to `dir` (Dirent.parentPath, which would save the stat of directories, needs Node 20.12).
  for (const path of await readdir(dir, { recursive: true })) {
    const stats = await stat(join(dir, path));
    if (stats.isFile()) files.push({ path, size: stats.size });
  }
  return files;
}

/** Answers other nodes' requests for a copy of this node's data (`jvmlens.snapshot.<node-id>`). */
export class SnapshotSource {
  readonly #options: SnapshotSourceOptions;
  readonly #copies = new Map<string, Copy>();
  readonly #sweep: ReturnType<typeof setInterval>;
  /** One copy made at a time: each is as large as the data directory. */
  #making: Promise<void> = Promise.resolve();
  #subscription: Subscription | null = null;

  constructor(options: SnapshotSourceOptions) {
    this.#options = options;
    this.#sweep = setInterval(() => void this.#removeIdle(), IDLE_MS / 4);
    this.#sweep.unref();
  }

  /** Removes the copies a previous process left, then answers. */
  async serve(): Promise<void> {
    const { nc, nodeId, dataDir } = this.#options;
    await rm(join(dataDir, COPIES_DIR), { recursive: true, force: true });
    this.#subscription = nc.subscribe(`${SUBJECT}.${nodeId}`, { callback: (error, message) => (error === null ? void this.#reply(message) : undefined) });
    // Known to the servers once this resolves: a node asking right after is answered.
    await nc.flush();
  }

  /** Answers one request; never throws (a request it cannot read or serve is answered as a failure, and logged). */
  async #reply(message: Msg): Promise<void> {
    let answer: SnapshotAnswer;
    try {
      answer = await this.#answer(decodeMessage(message.data) as SnapshotAsk);
    } catch (error) {
      this.#options.logger.warn('giving a copy of this node\'s data failed', { reason: (error as Error).message });
      answer = { ok: false, message: (error as Error).message };
    }
    if (!respond(message, encodeMessage(answer))) this.#options.logger.warn('a copy request could not be answered (it has no reply subject, or the connection is closing)');
  }

  async #answer(ask: SnapshotAsk): Promise<SnapshotAnswer> {
    if (ask.op === 'open') return this.#open(ask.nodeId);
    const copy = this.#copies.get(ask.id);
    if (copy === undefined) return { ok: false, message: `no copy ${ask.id} here (removed after ${IDLE_MS / 1000} s unused, or this node restarted)` };
    copy.usedAt = Date.now();
    if (ask.op === 'close') {
      this.#copies.delete(ask.id);
      await rm(copy.dir, { recursive: true, force: true });
      return { ok: true };
    }
    if (copy.failure !== null) return { ok: false, message: copy.failure };
    if (copy.files === null) return { ok: true, made: false };
    if (ask.op === 'made') return { ok: true, made: true, files: [...copy.files].map(([path, size]) => ({ path, size })), applied: copy.applied };
    const size = copy.files.get(ask.path);
    if (size === undefined) return { ok: false, message: `the copy has no file ${ask.path}` };
    const length = Math.max(0, Math.min(ask.length, size - ask.offset));
    const bytes = new Uint8Array(length);
    const handle = await open(join(copy.dir, ask.path), 'r');
    try {
      await handle.read(bytes, 0, length, ask.offset);
    } finally {
      await handle.close();
    }
    return { ok: true, bytes };
  }

  /** Answered at once; the copy is made after the ones already asked for (each is as large as the data directory). */
  async #open(nodeId: string): Promise<SnapshotAnswer> {
    const { dataDir, store, logger } = this.#options;
    const reason = await this.#options.unavailable();
    if (reason !== null) return { ok: false, message: `node ${this.#options.nodeId} cannot give a copy now: ${reason}` };
    // Held before the copy is made: the copy holds at least this much, so the log keeps what comes after it.
    const applied = this.#options.applied();
    await this.#options.holdLog(nodeId, applied);
    const id = randomUUID();
    const copy: Copy = { dir: join(dataDir, COPIES_DIR, id), applied, files: null, failure: null, usedAt: Date.now() };
    this.#copies.set(id, copy);
    this.#making = this.#making.then(async () => {
      const started = Date.now();
      try {
        await copyStore(store, copy.dir);
        const files = await listFiles(copy.dir);
        copy.files = new Map(files.map((file) => [file.path, file.size]));
        logger.info('copied this node\'s data for another node', { nodeId, bytes: files.reduce((sum, file) => sum + file.size, 0), ms: Date.now() - started });
      } catch (error) {
        copy.failure = `making the copy failed: ${(error as Error).message}`;
        logger.warn('making a copy of this node\'s data failed', { nodeId, reason: (error as Error).message });
        await rm(copy.dir, { recursive: true, force: true });
      }
    });
    return { ok: true, id };
  }

  async #removeIdle(): Promise<void> {
    for (const [id, copy] of this.#copies) {
      // One still being made is removed once made, if still unread.
      if (Date.now() - copy.usedAt < IDLE_MS || (copy.files === null && copy.failure === null)) continue;
      this.#copies.delete(id);
      await rm(copy.dir, { recursive: true, force: true }).catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#sweep);
    this.#subscription?.unsubscribe();
    await Promise.all([...this.#copies.values()].map((copy) => rm(copy.dir, { recursive: true, force: true }).catch(() => undefined)));
    this.#copies.clear();
  }
}

/** The node refused to give a copy, or had none to give. */
export class SnapshotRefusedError extends Error {}

async function ask(nc: NatsConnection, peer: string, question: SnapshotAsk, timeout: number): Promise<SnapshotAnswer & { ok: true }> {
  const reply = await nc.request(`${SUBJECT}.${peer}`, encodeMessage(question), { timeout });
  const answer = decodeMessage(reply.data) as SnapshotAnswer;
  if (!answer.ok) throw new SnapshotRefusedError(answer.message);
  return answer;
}

/**
 * Copies `peer`'s data into `into` (a new directory), file by file, and resolves with the log sequence the
 * copy holds at least. `nodeId` is this node: the peer keeps the log from being truncated past the copy for it.
 */
export async function fetchSnapshot(nc: NatsConnection, peer: string, nodeId: string, into: string, logger: Logger): Promise<{ applied: number; bytes: number }> {
  const { id } = (await ask(nc, peer, { op: 'open', nodeId }, ANSWER_WAIT_MS)) as { id: string };
  const deadline = Date.now() + COPY_WAIT_MS;
  let opened: { files: SnapshotFile[]; applied: number } | null = null;
  while (opened === null) {
    const made = (await ask(nc, peer, { op: 'made', id }, ANSWER_WAIT_MS)) as { made: false } | { made: true; files: SnapshotFile[]; applied: number };
    if (made.made) opened = made;
    else if (Date.now() > deadline) throw new SnapshotRefusedError(`${peer} did not make its copy within ${COPY_WAIT_MS / 60_000} minutes`);
    else await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  const total = opened.files.reduce((sum, file) => sum + file.size, 0);
  const chunk = Math.min(MAX_CHUNK, (nc.info?.max_payload ?? 1024 * 1024) - CHUNK_SLACK);
  let copied = 0;
  let reportedAt = Date.now();
  logger.info('copying a live node\'s data', { from: peer, bytes: total, files: opened.files.length });
  for (const file of opened.files) {
    const target = join(into, file.path);
    if (relative(into, target).startsWith('..')) throw new SnapshotRefusedError(`${peer} named a file outside the copy: ${file.path}`);
    await mkdir(dirname(target), { recursive: true });
    const handle = await open(target, 'w');
    try {
      const offsets: number[] = [];
      for (let offset = 0; offset < file.size; offset += chunk) offsets.push(offset);
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < offsets.length) {
          const offset = offsets[next++];
          const length = Math.min(chunk, file.size - offset);
          const { bytes } = (await ask(nc, peer, { op: 'chunk', id, path: file.path, offset, length }, CHUNK_WAIT_MS)) as { bytes: Uint8Array };
          if (bytes.length !== length) throw new Error(`chunk at ${offset} of ${file.path} from ${peer} has ${bytes.length} bytes, not ${length}`);
          await handle.write(bytes, 0, length, offset);
          copied += length;
          if (Date.now() - reportedAt >= PROGRESS_MS) {
            reportedAt = Date.now();
            logger.info('copying a live node\'s data', { from: peer, copied, of: total });
          }
        }
      };
      await Promise.all(Array.from({ length: CHUNKS_IN_FLIGHT }, worker));
      await handle.sync();
    } finally {
      await handle.close();
    }
  }
  await ask(nc, peer, { op: 'close', id }, ANSWER_WAIT_MS).catch(() => undefined);
  return { applied: opened.applied, bytes: total };
}
