// The Piscina worker pool: report partitions and other heavy work run here, off the request thread.
import { extname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { PingTask, WorkerData, WorkerTask } from './tasks.ts';

/** How long a shutdown waits for threads still loading their modules, or running a task, before it terminates them anyway. */
const STOP_WAIT_MS = 20_000;
/** Between rounds of pings while a thread still loads its modules (a few hundred ms at a start). */
const PING_AGAIN_MS = 10;

export class WorkerPool {
  readonly #piscina: Piscina;
  readonly #threadCount: number;
  /** Settles once every thread has answered a ping: each has loaded its modules. */
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
    this.#threadCount = threads;
    this.#loaded = this.warmUp().catch(() => undefined);
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

  /**
   * Resolves, with the threads' ids, once every thread answered a ping: the pool is ready (decisions §3), and
   * each thread did what `ping` asks. Piscina gives a task to the first idle thread that has loaded its
   * modules, and queues it while none has: the thread that loaded first answered every ping of a start's
   * round while the others still loaded. So the rounds go on until each thread answered one, each round a ping
   * per thread: pings sent at once go one to each idle thread, and fewer would go to the same ones again.
   */
  async warmUp(ping: PingTask = { kind: 'ping' }): Promise<Set<number>> {
    const answered = new Set<number>();
    for (;;) {
      const ids = await Promise.all(Array.from({ length: this.#threadCount }, () => this.run<number>(ping)));
      for (const id of ids) answered.add(id);
      if (answered.size >= this.#threadCount) return answered;
      await sleep(PING_AGAIN_MS);
    }
  }

  get threads(): number {
    return this.#piscina.threads.length;
  }

  /**
   * Terminates the threads once each has answered a ping and they finished their tasks (for STOP_WAIT_MS
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
