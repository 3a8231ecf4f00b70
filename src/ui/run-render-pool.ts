/**
 * The one worker thread that renders runs for the ui (`run-render-worker.ts`), and its queue:
 * one job at a time, so that the memory the ui spends on runs is bounded by one run's records
 * and its page, however many pages ask at once. Started on the first job, ended by `close`.
 *
 * @module
 */
import { Worker } from 'node:worker_threads';
import type { RenderAnswer, RenderJob } from './render-job.ts';

/**
 * A queue of render jobs in front of one worker thread.
 *
 * @example
 * const pool = new RunRenderPool();
 * const html = await pool.run({ kind: 'value', path, seq: 3, part: 0 });
 * await pool.close();
 */
export class RunRenderPool {
  #worker: Worker | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;
  /** Jobs queued or under way, by their JSON: the same job asked for again shares its answer. */
  #pending = new Map<string, Promise<string | undefined>>();

  /**
   * The job's text (undefined: no such value); a job that fails rejects with its reason. The
   * same job asked for while it waits or runs (four tabs drawing one run) is done once.
   */
  run(job: RenderJob): Promise<string | undefined> {
    const key = JSON.stringify(job);
    const pending = this.#pending.get(key);
    if (pending !== undefined) return pending;
    const result = this.#queue.then(() => this.#send(job));
    this.#queue = result.catch(() => undefined);
    this.#pending.set(key, result);
    const forget = (): void => {
      this.#pending.delete(key);
    };
    result.then(forget, forget);
    return result;
  }

  /** Starts the worker now, so that the first job does not wait for it to start. */
  warm(): void {
    if (!this.#closed) this.#start();
  }

  /** Ends the worker; jobs after this fail. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#worker?.terminate();
    this.#worker = undefined;
  }

  #send(job: RenderJob): Promise<string | undefined> {
    if (this.#closed) return Promise.reject(new Error('the server is stopping'));
    const worker = this.#start();
    return new Promise((done, fail) => {
      const onError = (error: Error): void => {
        worker.off('message', onMessage);
        // A worker that died (out of memory) is replaced at the next job.
        if (this.#worker === worker) this.#worker = undefined;
        fail(error);
      };
      const onMessage = (answer: RenderAnswer): void => {
        worker.off('error', onError);
        if (answer.ok) done(answer.text);
        else fail(new Error(answer.error));
      };
      worker.once('message', onMessage);
      worker.once('error', onError);
      worker.postMessage(job);
    });
  }

  #start(): Worker {
    if (this.#worker === undefined) {
      const file = import.meta.url.endsWith('.ts')
        ? 'run-render-worker.ts'
        : 'run-render-worker.js';
      this.#worker = new Worker(new URL(file, import.meta.url));
      // The server may end while the worker waits for a job.
      this.#worker.unref();
    }
    return this.#worker;
  }
}
