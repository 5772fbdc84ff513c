// The Piscina worker pool: report partitions and other heavy work run here, off the request thread.
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { PingTask, WorkerData, WorkerTask } from './tasks.ts';

export class WorkerPool {
  readonly #piscina: Piscina;

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
  }

  /**
   * Runs a task; the buffers of `transferList` move to the worker and are unusable here afterwards. No abort
   * signal: Piscina terminates a busy thread on abort, which LMDB does not survive (see cancel-flag.ts).
   */
  run<T>(task: WorkerTask, transferList: ArrayBuffer[] = []): Promise<T> {
    return this.#piscina.run(task, { transferList }) as Promise<T>;
  }

  /** Resolves once every thread answered a ping: the pool is ready (decisions §3). */
  async warmUp(threads: number, ping: PingTask = { kind: 'ping' }): Promise<void> {
    await Promise.all(Array.from({ length: threads }, () => this.run<string>(ping)));
  }

  get threads(): number {
    return this.#piscina.threads.length;
  }

  destroy(): Promise<void> {
    return this.#piscina.destroy();
  }
}
