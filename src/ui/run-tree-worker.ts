/**
 * The worker thread that reads the run tree of a file source for the ui (`statusTree`, as
 * `status` reads it), so that a transcript of any size — one record of 48 MB, which the
 * tree's inspection reads whole — never holds the server's thread. Jobs come one at a time
 * from `run-tree-reader.ts`.
 *
 * @module
 */
import { parentPort } from 'node:worker_threads';
import { statusTree } from '../runs/status-tree.ts';
import type { UiTree } from './ui-source.ts';

/**
 * A job for the worker: the tree below `paths` (relative to `cwd`), with the status index
 * found through `env`.
 *
 * @example
 * const job: TreeJob = { paths: ['runs/'], cwd: '/home/me', env: {}, maxRevivals: 3 };
 */
export interface TreeJob {
  paths: string[];
  cwd: string;
  env: Record<string, string | undefined>;
  maxRevivals: number;
}

/**
 * What the worker answers: the tree, or why it could not be read.
 *
 * @example
 * const answer: TreeAnswer = { ok: false, error: 'EACCES' };
 */
export type TreeAnswer = { ok: true; tree: UiTree } | { ok: false; error: string };

/**
 * The job's answer (exported for the tests; the worker runs it on each message).
 *
 * @example
 * const answer = await treeJob({ paths: ['runs/'], cwd: process.cwd(), env: {}, maxRevivals: 3 });
 */
export async function treeJob(job: TreeJob): Promise<TreeAnswer> {
  try {
    const tree = await statusTree(job.paths, job.cwd, job.env, { maxRevivals: job.maxRevivals });
    return { ok: true, tree };
  } catch (error) {
    return { ok: false, error: String(error).split('\n')[0] as string };
  }
}

parentPort?.on('message', (job: TreeJob) => {
  void treeJob(job).then((answer) => parentPort?.postMessage(answer));
});
