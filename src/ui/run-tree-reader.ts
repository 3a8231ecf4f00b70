/**
 * The one worker thread that reads a file source's run tree for the ui (`run-tree-worker.ts`),
 * apart from the one that renders runs: a page's tree never waits behind another page's
 * rendering, and no read of a huge transcript holds the server's thread. One read at a time;
 * a read asked for while one is under way for the same files shares its answer. Started on
 * the first read, ended by `close`.
 *
 * @module
 */
import { Worker } from 'node:worker_threads';
import type { TreeAnswer, TreeJob } from './run-tree-worker.ts';
import type { UiTree } from './ui-source.ts';

/**
 * Reads run trees in a worker thread, one at a time.
 *
 * @example
 * const reader = new RunTreeReader();
 * const { roots } = await reader.read({ paths: ['runs/'], cwd, env: {}, maxRevivals: 3 });
 * await reader.close();
 */
export class RunTreeReader {
  #worker: Worker | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;

  /** The tree the job asks for; a read that fails rejects with its reason. */
  read(job: TreeJob): Promise<UiTree> {
    const result = this.#queue.then(() => this.#send(job));
    this.#queue = result.catch(() => undefined);
    return result;
  }

  /** Ends the worker; reads after this fail. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#worker?.terminate();
    this.#worker = undefined;
  }

  #send(job: TreeJob): Promise<UiTree> {
    if (this.#closed) return Promise.reject(new Error('the server is stopping'));
    const worker = this.#start();
    return new Promise((done, fail) => {
      const onError = (error: Error): void => {
        worker.off('message', onMessage);
        // A worker that died (out of memory) is replaced at the next read.
        if (this.#worker === worker) this.#worker = undefined;
        fail(error);
      };
      const onMessage = (answer: TreeAnswer): void => {
        worker.off('error', onError);
        if (answer.ok) done(answer.tree);
        else fail(new Error(answer.error));
      };
      worker.once('message', onMessage);
      worker.once('error', onError);
      worker.postMessage(job);
    });
  }

  #start(): Worker {
    if (this.#worker === undefined) {
      const file = import.meta.url.endsWith('.ts') ? 'run-tree-worker.ts' : 'run-tree-worker.js';
      this.#worker = new Worker(new URL(file, import.meta.url));
      // The server may end while the worker waits for a read.
      this.#worker.unref();
    }
    return this.#worker;
  }
}
