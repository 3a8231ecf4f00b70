/**
 * The one worker thread that renders runs for the ui (`run-render-worker.ts`), and its queue:
 * one job at a time, so that the memory the ui spends on runs is bounded by one run's records
 * and its page, however many pages ask at once. Started on the first job, ended by `close`.
 *
 * @module
 */
import type { RenderAnswer, RenderJob } from './render-job.ts';
import { WorkerQueue } from './worker-queue.ts';

/**
 * A queue of render jobs in front of one worker thread.
 *
 * @example
 * const pool = new RunRenderPool();
 * const html = await pool.run({ kind: 'value', path, seq: 3, part: 0 });
 * await pool.close();
 */
export class RunRenderPool {
  readonly #queue = new WorkerQueue<RenderJob, RenderAnswer, string | undefined>(
    'run-render-worker',
    (answer) => answer.text,
  );
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
    const result = this.#queue.send(job);
    this.#pending.set(key, result);
    const forget = (): void => {
      this.#pending.delete(key);
    };
    result.then(forget, forget);
    return result;
  }

  /** Starts the worker now, so that the first job does not wait for it to start. */
  warm(): void {
    this.#queue.warm();
  }

  /** Ends the worker; jobs after this fail. */
  close(): Promise<void> {
    return this.#queue.close();
  }
}
