/**
 * One worker thread and the queue in front of it: one job at a time, so that what the ui spends
 * on a job (a run's records, a tree's inspections) is bounded by one job, however many pages
 * ask at once. Started on the first job (or by `warm`), ended by `close`; a worker that died
 * (out of memory) is replaced at the next job.
 *
 * @module
 */
import { Worker } from 'node:worker_threads';

/**
 * What a worker answers a job: its value, or why it failed.
 *
 * @example
 * const answer: WorkerAnswer = { ok: false, error: 'EACCES' };
 */
export type WorkerAnswer = { ok: true } | { ok: false; error: string };

/**
 * A queue of jobs in front of one worker thread running `script` (a module beside this one,
 * named without its extension: `.ts` when the ui runs from source, `.js` when compiled).
 *
 * @example
 * const queue = new WorkerQueue<TreeJob, TreeAnswer, UiTree>('run-tree-worker', (a) => a.tree);
 * const tree = await queue.send(job);
 * await queue.close();
 */
export class WorkerQueue<Job, Answer extends WorkerAnswer, Value> {
  #worker: Worker | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;
  readonly #script: string;
  readonly #unwrap: (answer: Extract<Answer, { ok: true }>) => Value;

  constructor(script: string, unwrap: (answer: Extract<Answer, { ok: true }>) => Value) {
    this.#script = script;
    this.#unwrap = unwrap;
  }

  /** The job's value, after every job sent before it; a job that fails rejects with its reason. */
  send(job: Job): Promise<Value> {
    const result = this.#queue.then(() => this.#post(job));
    this.#queue = result.catch(() => undefined);
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

  #post(job: Job): Promise<Value> {
    if (this.#closed) return Promise.reject(new Error('the server is stopping'));
    const worker = this.#start();
    return new Promise((done, fail) => {
      const onError = (error: Error): void => {
        worker.off('message', onMessage);
        if (this.#worker === worker) this.#worker = undefined;
        fail(error);
      };
      const onMessage = (answer: Answer): void => {
        worker.off('error', onError);
        if (answer.ok) done(this.#unwrap(answer as Extract<Answer, { ok: true }>));
        else fail(new Error((answer as { error: string }).error));
      };
      worker.once('message', onMessage);
      worker.once('error', onError);
      worker.postMessage(job);
    });
  }

  #start(): Worker {
    if (this.#worker === undefined) {
      const extension = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
      this.#worker = new Worker(new URL(`${this.#script}${extension}`, import.meta.url));
      // The server may end while the worker waits for a job.
      this.#worker.unref();
    }
    return this.#worker;
  }
}
