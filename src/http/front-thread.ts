// Runs an HttpFront (front.ts) in a worker thread, and is that thread's entry point: the front copies every
// byte of every connection, which on the event loop of uWS cost two thirds of its rate of small requests.
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { HttpFront } from './front.ts';

interface FrontStart {
  host: string;
  port: number;
  /** The loopback port uWS listens on. */
  upstreamPort: number;
}

type FromFront =
  | { kind: 'listening'; port: number }
  | { kind: 'failed'; message: string }
  | { kind: 'refused'; status: number }
  | { kind: 'stopped' }
  | { kind: 'finished' };
type ToFront = 'stop' | 'finish';

export interface FrontEvents {
  /** The front answered a malformed request head itself with this status. */
  onRefused: (status: number) => void;
  /** The thread died (it is restarted on the same port). */
  onCrash: (error: Error) => void;
}

export class FrontThread {
  #worker: Worker | null = null;
  readonly #waiting = new Map<FromFront['kind'], () => void>();

  /**
   * Listens on host:port; resolves to the port, or rejects when it cannot bind. Should the thread ever die,
   * a new one takes the same port (onCrash says why), so the listener never silently stops answering.
   */
  async start(host: string, port: number, upstreamPort: number, events: FrontEvents): Promise<number> {
    const extension = extname(fileURLToPath(import.meta.url));
    const worker = new Worker(new URL(`./front-thread${extension}`, import.meta.url), { workerData: { host, port, upstreamPort } satisfies FrontStart });
    this.#worker = worker;
    let failure: Error | null = null;
    worker.on('error', (error) => (failure = error));
    const bound = await new Promise<number>((resolve, reject) => {
      worker.on('message', (message: FromFront) => {
        if (message.kind === 'listening') resolve(message.port);
        else if (message.kind === 'failed') reject(new Error(message.message));
        else if (message.kind === 'refused') events.onRefused(message.status);
        else this.#waiting.get(message.kind)?.();
      });
      worker.once('exit', () => reject(failure ?? new Error('the HTTP front thread exited while starting')));
    }).catch(async (error: unknown) => {
      this.#worker = null;
      await worker.terminate();
      throw error;
    });
    worker.once('exit', (code) => {
      if (this.#worker !== worker) return;
      events.onCrash(failure ?? new Error(`the HTTP front thread exited with code ${code}`));
      this.start(host, bound, upstreamPort, events).catch((error: Error) => events.onCrash(error));
    });
    return bound;
  }

  /** Stops accepting connections; those already spliced go on. */
  stopAccepting(): Promise<void> {
    return this.#ask('stop', 'stopped');
  }

  /** After uWS drained its requests: relays their last bytes, closes every connection and ends the thread. */
  async finish(): Promise<void> {
    await this.#ask('finish', 'finished');
    const worker = this.#worker;
    this.#worker = null;
    await worker?.terminate();
  }

  #ask(request: ToFront, answer: FromFront['kind']): Promise<void> {
    const worker = this.#worker;
    if (worker === null) return Promise.resolve();
    return new Promise((resolve) => {
      this.#waiting.set(answer, resolve);
      worker.postMessage(request);
    });
  }
}

if (!isMainThread && parentPort !== null && (workerData as Partial<FrontStart> | null)?.upstreamPort !== undefined) {
  const port = parentPort;
  const start = workerData as FrontStart;
  const front = new HttpFront({ upstreamPort: start.upstreamPort, onRefused: (status) => port.postMessage({ kind: 'refused', status } satisfies FromFront) });
  port.on('message', (request: ToFront) => {
    if (request === 'stop') {
      front.stopAccepting();
      port.postMessage({ kind: 'stopped' } satisfies FromFront);
    } else {
      front.finish().then(() => port.postMessage({ kind: 'finished' } satisfies FromFront));
    }
  });
  front.listen(start.host, start.port).then(
    (bound) => port.postMessage({ kind: 'listening', port: bound } satisfies FromFront),
    (error: Error) => port.postMessage({ kind: 'failed', message: error.message } satisfies FromFront),
  );
}
