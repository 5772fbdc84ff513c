// The Piscina worker pool: report partitions and other heavy work run here, off the request thread.
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { PingTask, WorkerData, WorkerTask } from './tasks.ts';

/** How long a shutdown waits for threads still loading their modules, or running a task, before it terminates them anyway. */
const STOP_WAIT_MS = 20_000;

export class WorkerPool {
  readonly #piscina: Piscina;
  /**
   * Settles once the threads answered one ping per thread: each from a thread that has loaded its modules,
   * though a thread that loaded first may answer two while another still loads (Piscina gives a queued task to
   * the first idle thread).
   */
  readonly #loaded: Promise<unknown>;
  /** Tasks given and not settled yet, and who waits for none to be left. */
  #running = 0;
  #idle: (() => void) | null = null;

  constructor(dataDir: string, threads: number) {
    // tsc rewrites only import specifiers: the worker file must follow this module's own extension (.ts under Deno, .js built).
    const extension = extname(fileURLToPath(import.meta.url));
    const workerData: WorkerData = { dataDir };
    this.#piscina = new Piscina({
      filename: new URL(`./worker${extension}`, import.meta.url).href,
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: Infinity,
      workerData,
    });
    this.#loaded = this.warmUp(threads).catch(() => undefined);
  }

  /**
   * Runs a task; the buffers of `transferList` move to the worker and are unusable here afterwards. No abort
   * signal: Piscina terminates a busy thread on abort, which LMDB does not survive (see cancel-flag.ts).
   */
  run<T>(task: WorkerTask, transferList: ArrayBuffer[] = []): Promise<T> {
    this.#running++;
    return (this.#piscina.run(task, { transferList }) as Promise<T>).finally(() => {
      if (--this.#running === 0) this.#idle?.();
    });
  }

  /** Resolves once every thread answered a ping: the pool is ready (decisions §3). */
  async warmUp(threads: number, ping: PingTask = { kind: 'ping' }): Promise<void> {
    await Promise.all(Array.from({ length: threads }, () => this.run<string>(ping)));
  }

  get threads(): number {
    return this.#piscina.threads.length;
  }

  /**
   * Terminates the threads once they have answered the first pings and finished their tasks (for STOP_WAIT_MS
   * at most): Node aborts the whole process when a thread is terminated while it loads an ES module by require
   * (`FATAL ERROR: v8::Module::IsGraphAsync`), or while it is in LMDB's native code (`napi_throw`), both seen
   * when a SIGTERM came while the service started.
   */
  async destroy(): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const settled = Promise.all([this.#loaded, this.#running === 0 ? undefined : new Promise<void>((resolve) => (this.#idle = resolve))]);
    await Promise.race([settled, new Promise((resolve) => (timer = setTimeout(resolve, STOP_WAIT_MS)))]);
    clearTimeout(timer);
    return this.#piscina.destroy();
  }
}
