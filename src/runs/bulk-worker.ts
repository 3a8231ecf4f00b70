/**
 * A worker thread of {@link inspectInBulk}: takes chunks of the paths from the shared counter,
 * answers each with {@link bulkInspector}, posts each chunk's answers, then `done`.
 *
 * @module
 */
import { parentPort, workerData } from 'node:worker_threads';
import { bulkInspector } from './bulk-inspect.ts';
import { type BulkJob, type BulkMessage, CHUNK, contextOf } from './bulk-pool.ts';

const job = workerData as BulkJob;
const port = parentPort;
if (port !== null) {
  const inspect = bulkInspector(contextOf(job));
  const next = new Int32Array(job.counter);
  for (;;) {
    const start = Atomics.add(next, 0, CHUNK);
    if (start >= job.paths.length) break;
    const end = Math.min(job.paths.length, start + CHUNK);
    const answers = job.paths.slice(start, end).map((path) => inspect(path));
    port.postMessage({ kind: 'chunk', start, answers } satisfies BulkMessage);
  }
  port.postMessage({ kind: 'done' } satisfies BulkMessage);
}
