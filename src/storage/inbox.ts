// What a command hands to the running service, which alone opens the store (writer-lock.ts): `keys create`,
// `revoke` and `list`, `cve import`, `backup`. A request is a JSON file in the data directory's inbox, renamed into place
// whole; the service applies the requests in the order they came, as they come, answers each with a result
// file beside it and removes the request. A backup, which can take minutes, runs beside the requests after it.
// A command waits for its answer; an answer no command waits for any more is removed after ten minutes.
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, watch, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Vulnerability } from '../vuln/osv.ts';
import { copyStore } from './copy.ts';
import { listKeys, putKey, revokeKey } from './keys.ts';
import type { ApiKeyRecord } from './records.ts';
import { storageWriteFailure } from './store.ts';
import type { Store } from './store.ts';
import { putVulnerabilities } from './vulns.ts';

const INBOX_DIR = 'inbox';
const REQUEST = '.request.json';
const RESULT = '.result.json';
/** How often a command looks for its answer. */
const POLL_MS = 50;
/** A result unread this long was given up by its command (which looks every POLL_MS): nobody will read it. */
const UNREAD_MS = 10 * 60_000;

export type InboxRequest =
  | { kind: 'key.put'; record: ApiKeyRecord }
  | { kind: 'key.revoke'; keyId: string; at: number }
  | { kind: 'vulns'; records: Vulnerability[]; at: number }
  | { kind: 'keys.list' }
  /** A copy of the data directory into `target`, an absolute path (copy.ts). */
  | { kind: 'backup'; target: string };

/** What applying a request gives: whether a key was revoked, how many vulnerabilities were replaced, the keys, the bytes copied. */
export type InboxResult = boolean | number | ApiKeyRecord[] | null;

type Answer = { ok: true; result: InboxResult } | { ok: false; error: string };

/** The service answered that it could not carry the request out. */
export class InboxRefusedError extends Error {}
/** The service did not answer in time; the request stays in the inbox. */
export class InboxTimeoutError extends Error {}

let sent = 0;

/** Writes `text` to `path` whole: a reader sees the file complete or not at all. */
function writeWhole(path: string, text: string): void {
  writeFileSync(`${path}.tmp`, text);
  renameSync(`${path}.tmp`, path);
}

/** Carries the request out on the store: what the service does with a request, and a command does when it holds the lock itself. */
export async function applyRequest(store: Store, request: InboxRequest): Promise<InboxResult> {
  switch (request.kind) {
    case 'key.put':
      await putKey(store, request.record);
      return null;
    case 'key.revoke':
      return revokeKey(store, request.keyId, request.at);
    case 'vulns':
      return putVulnerabilities(store, request.records, request.at);
    case 'keys.list':
      return listKeys(store);
    case 'backup':
      return copyStore(store, request.target);
  }
}

/**
 * Hands the request to the service running on `dataDir` and waits up to `waitMs` for its result. On a
 * timeout the request stays in the inbox, and the service applies it when it can.
 */
export async function sendToService(dataDir: string, request: InboxRequest, waitMs: number): Promise<InboxResult> {
  const folder = join(dataDir, INBOX_DIR);
  mkdirSync(folder, { recursive: true });
  // Time first: the service applies requests in name order.
  const name = `${String(Date.now()).padStart(15, '0')}-${process.pid}-${sent++}`;
  writeWhole(join(folder, name + REQUEST), JSON.stringify(request));
  const resultPath = join(folder, name + RESULT);
  const deadline = Date.now() + waitMs;
  for (;;) {
    let text: string | null = null;
    try {
      text = readFileSync(resultPath, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (text !== null) {
      unlinkSync(resultPath);
      const answer = JSON.parse(text) as Answer;
      if (!answer.ok) throw new InboxRefusedError(`the service could not apply it: ${answer.error}`);
      return answer.result;
    }
    if (Date.now() >= deadline) throw new InboxTimeoutError(`the running service did not apply it within ${Math.round(waitMs / 1000)} s; it stays in ${folder} and is applied when the service can`);
    await sleep(POLL_MS);
  }
}

/**
 * Calls `onRequest` as requests arrive, besides the service's look every few seconds: a command waits less.
 * Where the folder cannot be watched (the system's limit of watches reached), the look every few seconds
 * remains. Returns what stops it.
 */
export function watchInbox(dataDir: string, onRequest: () => void): () => void {
  const folder = join(dataDir, INBOX_DIR);
  mkdirSync(folder, { recursive: true });
  try {
    const watcher = watch(folder, onRequest);
    watcher.on('error', () => watcher.close());
    return () => watcher.close();
  } catch {
    return () => undefined;
  }
}

/**
 * The backups a service is making, by request: a copy of a large store takes minutes, and a key created or an
 * import given meanwhile would otherwise wait for it (its command giving up after 30 s).
 */
export class BackupsUnderWay {
  readonly #running = new Map<string, Promise<void>>();
  /** Told when a backup's answer could not be written: its request stays, and is carried out again. */
  readonly #unanswered: (error: Error) => void;

  constructor(unanswered: (error: Error) => void) {
    this.#unanswered = unanswered;
  }

  has(name: string): boolean {
    return this.#running.has(name);
  }

  add(name: string, answered: Promise<void>): void {
    this.#running.set(name, answered.catch(this.#unanswered).finally(() => this.#running.delete(name)));
  }

  /** Settles once every backup begun has been answered: the store stays open until then. */
  async settled(): Promise<void> {
    await Promise.all(this.#running.values());
  }
}

/**
 * Applies the requests waiting in `dataDir`'s inbox with `apply`, in order, and begins their backups, which
 * `backups` holds until answered; returns how many it applied or began. For the service that holds the writer lock.
 */
export async function applyInbox(dataDir: string, apply: (request: InboxRequest) => Promise<InboxResult>, backups: BackupsUnderWay): Promise<number> {
  const folder = join(dataDir, INBOX_DIR);
  let files: string[];
  try {
    files = readdirSync(folder);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
  removeUnread(folder, files.filter((name) => name.endsWith(RESULT)));
  const names = files.filter((name) => name.endsWith(REQUEST) && !backups.has(name)).sort();
  for (const name of names) {
    const path = join(folder, name);
    let request: InboxRequest;
    try {
      request = JSON.parse(readFileSync(path, 'utf8')) as InboxRequest;
    } catch (error) {
      await answerWith(path, () => Promise.reject(error));
      continue;
    }
    const answered = answerWith(path, () => apply(request));
    if (request.kind === 'backup') backups.add(name, answered);
    else await answered;
  }
  return names.length;
}

/** Carries the request at `path` out with `carryOut`, writes its answer and removes the request. */
async function answerWith(path: string, carryOut: () => Promise<InboxResult>): Promise<void> {
  let answer: Answer;
  try {
    answer = { ok: true, result: await carryOut() };
  } catch (error) {
    answer = { ok: false, error: (storageWriteFailure(error) ?? (error as Error)).message };
  }
  writeWhole(path.slice(0, -REQUEST.length) + RESULT, JSON.stringify(answer));
  unlinkSync(path);
}

/** The results of commands that stopped waiting (InboxTimeoutError) would otherwise stay in the inbox for good. */
function removeUnread(folder: string, results: readonly string[]): void {
  for (const name of results) {
    const path = join(folder, name);
    try {
      if (Date.now() - statSync(path).mtimeMs > UNREAD_MS) unlinkSync(path);
    } catch (error) {
      // Read and removed by its command meanwhile.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
}
