/**
 * A worker thread of {@link inspectInBulk}: given its job (the first message), takes chunks of
 * the paths from the shared counter, answers each with {@link bulkInspector}, posts each
 * chunk's answers, then `done`.
 *
 * @module
 */
import { parentPort } from 'node:worker_threads';
import { bulkInspector } from './bulk-inspect.ts';
import { type BulkJob, type BulkMessage, CHUNK, contextOf, withoutRead } from './bulk-pool.ts';

const port = parentPort;
// The job comes as the first message: a worker may be started before its list is known.
port?.once('message', (job: BulkJob) => {
  const inspect = bulkInspector(contextOf(job));
  const next = new Int32Array(job.counter);
  for (;;) {
    const start = Atomics.add(next, 0, CHUNK);
    if (start >= job.paths.length) break;
    const end = Math.min(job.paths.length, start + CHUNK);
    // Without an index to keep it in, the read is not handed back (it is not needed).
    const answers = job.paths
      .slice(start, end)
      .map((path) => (job.keep ? inspect(path) : withoutRead(inspect(path))));
    port.postMessage({ kind: 'chunk', start, answers } satisfies BulkMessage);
  }
  port.postMessage({ kind: 'done' } satisfies BulkMessage);
});
