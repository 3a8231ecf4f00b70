/**
 * The one worker thread that reads a file source's run tree for the ui (`run-tree-worker.ts`),
 * apart from the one that renders runs: a page's tree never waits behind another page's
 * rendering, and no read of a huge transcript holds the server's thread. One read at a time;
 * a read asked for while one is under way for the same files shares its answer. Started on
 * the first read, ended by `close`.
 *
 * @module
 */
import type { TreeAnswer, TreeJob } from './run-tree-worker.ts';
import type { UiTree } from './ui-source.ts';
import { WorkerQueue } from './worker-queue.ts';

/**
 * Reads run trees in a worker thread, one at a time.
 *
 * @example
 * const reader = new RunTreeReader();
 * const { roots } = await reader.read({ paths: ['runs/'], cwd, env: {}, maxRevivals: 3 });
 * await reader.close();
 */
export class RunTreeReader {
  readonly #queue = new WorkerQueue<TreeJob, TreeAnswer, UiTree>(
    'run-tree-worker',
    (answer) => answer.tree,
  );

  /** The tree the job asks for; a read that fails rejects with its reason. */
  read(job: TreeJob): Promise<UiTree> {
    return this.#queue.send(job);
  }

  /** Ends the worker; reads after this fail. */
  close(): Promise<void> {
    return this.#queue.close();
  }
}
