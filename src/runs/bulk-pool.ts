/**
 * {@link bulkInspector} over many transcripts: first what the status index kept (a transcript
 * unchanged since it was last read is not read again), then the rest on every core — this
 * thread and up to {@link MAX_HELPERS} worker threads take chunks of the list in turn (a
 * counter they share), each with its own buffer, until none is left. The work is CPU and
 * kernel time per transcript — checksums, JSON, system calls — with nothing shared, so it
 * divides.
 *
 * A worker that cannot start, fails or dies costs only time: whatever it did not hand back is
 * done here. Workers are started only for a list long enough to pay for their start-up (their
 * own copy of the modules, compiled anew), and are ended once they have handed back their part.
 *
 * @module
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { type BulkAnswer, type BulkContext, bulkInspector, keptInspector } from './bulk-inspect.ts';
import type { FolderListing } from './find-transcripts.ts';
import type { LockTable } from './lock-snapshot.ts';
import type { StatusIndex } from './status-index.ts';

/**
 * Paths taken at a time from the shared counter.
 *
 * @example
 * const start = Atomics.add(next, 0, CHUNK); // this thread's paths: start … start + CHUNK - 1
 */
export const CHUNK = 64;
/** Worker threads at most, beside the calling thread. */
const MAX_HELPERS = 3;
/**
 * Fewer paths to read than this are read on this thread alone: a worker's start-up (tens of
 * milliseconds on another core) is more than what it would take over.
 *
 * @example
 * if (found.size >= MIN_PATHS_FOR_HELPERS) early = EarlyHelpers.start();
 */
export const MIN_PATHS_FOR_HELPERS = 2000;

/**
 * What a worker is given (bulk-worker.ts): the paths, the cap, the lock table's inodes, the
 * walk's listing, and the counter it shares with the other threads.
 *
 * @example
 * new Worker(url, { workerData: jobOf(paths, context, new SharedArrayBuffer(4)) });
 */
export interface BulkJob {
  paths: string[];
  maxRevivals: number;
  inodes: string[];
  listing: { folders: string[]; claims: string[] } | null;
  /** One Int32: the index of the next chunk's first path. */
  counter: SharedArrayBuffer;
  /**
   * Whether the reads are kept (a status index): without one, a worker hands back only the
   * inspections, half of what the calling thread would otherwise decode.
   */
  keep: boolean;
}

/**
 * What a worker posts: a chunk's answers, then `done`.
 *
 * @example
 * port.postMessage({ kind: 'chunk', start, answers } satisfies BulkMessage);
 */
export type BulkMessage =
  | { kind: 'chunk'; start: number; answers: (BulkAnswer | null)[] }
  | { kind: 'done' };

/**
 * Options of {@link inspectInBulk}.
 *
 * @example
 * const options: BulkOptions = { index: StatusIndex.open(paths, process.env), helpers: 1 };
 */
export interface BulkOptions {
  /** The status index: its reads are used, and this run's are kept in it (save it after). */
  index?: StatusIndex | null;
  /** What the walk that found the paths listed (see {@link BulkContext}). */
  listing?: FolderListing | undefined;
  /** How many worker threads to read with (default: one per other core, for a long list). */
  helpers?: number;
  /** Filled in with where the answers came from (tests, the bench). */
  stats?: BulkStats;
  /** Workers started ahead (see {@link EarlyHelpers}): used first, if workers are needed. */
  early?: EarlyHelpers | null;
  /**
   * Whether the calling thread reads too (default true). False leaves the reading to the
   * workers, so a test can prove their path whatever the machine's load; what no worker hands
   * back is still read here.
   */
  callerReads?: boolean;
}

/**
 * Where {@link inspectInBulk}'s answers came from: the status index (`kept`), or a read
 * (`read` transcripts, `byHelpers` of them by worker threads, the rest by the calling thread).
 *
 * @example
 * const stats: BulkStats = { kept: 0, read: 0, byHelpers: 0 };
 * await inspectInBulk(paths, 3, readLockTable(), { stats });
 */
export interface BulkStats {
  kept: number;
  read: number;
  byHelpers: number;
  /** Worker threads started (absent: not counted). */
  helpers?: number;
}

/**
 * The answers of {@link bulkInspector} for `paths`, in order (null where `Revival.inspect` must
 * be asked).
 *
 * @example
 * const answers = await inspectInBulk(paths, 3, readLockTable());
 */
export async function inspectInBulk(
  paths: readonly string[],
  maxRevivals: number,
  table: LockTable | null,
  options: BulkOptions = {},
): Promise<(BulkAnswer | null)[]> {
  const answers: (BulkAnswer | null)[] = new Array(paths.length).fill(null);
  if (table === null) return answers;
  const context: BulkContext = { maxRevivals, table, listing: options.listing };
  const stats = options.stats ?? { kept: 0, read: 0, byHelpers: 0 };
  const index = options.index ?? null;
  let unread: number[] = [];
  if (index === null || index.size === 0) {
    unread = paths.map((_, at) => at);
  } else {
    const fromKept = keptInspector(context, index);
    for (const [at, path] of paths.entries()) {
      const answer = fromKept(path);
      if (answer === undefined) unread.push(at);
      else answers[at] = answer;
      if (answer != null) stats.kept += 1;
    }
  }
  const toRead = unread.map((at) => paths[at] as string);
  stats.read += toRead.length;
  const helpers = options.helpers ?? defaultHelpers(toRead.length);
  const callerReads = options.callerReads ?? true;
  const read = await readInBulk(
    toRead,
    context,
    { helpers, callerReads, keep: index !== null, early: options.early ?? null },
    stats,
  );
  for (const [k, at] of unread.entries()) {
    const answer = read[k] ?? null;
    answers[at] = answer;
    if (answer?.read !== undefined) index?.remember(paths[at] as string, answer.read);
  }
  return answers;
}

/** Read `paths` on this thread and `helpers` workers. */
async function readInBulk(
  paths: string[],
  context: BulkContext,
  share: { helpers: number; callerReads: boolean; keep: boolean; early: EarlyHelpers | null },
  stats: BulkStats,
): Promise<(BulkAnswer | null)[]> {
  const { helpers } = share;
  const answers: (BulkAnswer | null | undefined)[] = new Array(paths.length);
  const counter = new SharedArrayBuffer(4);
  const next = new Int32Array(counter);
  const job = jobOf(paths, context, counter, share.keep);
  const workers = helpers > 0 ? startHelpers(helpers, job, answers, stats, share.early) : [];
  share.early?.close();
  if (stats.helpers !== undefined) stats.helpers += workers.length;
  const read = bulkInspector(context);
  // Without an index to keep the reads in, they are let go at once: fewer live objects for the
  // collector to move while the rest is read.
  const inspect = share.keep ? read : (path: string) => withoutRead(read(path));
  for (; share.callerReads || workers.length === 0; ) {
    const start = Atomics.add(next, 0, CHUNK);
    if (start >= paths.length) break;
    const end = Math.min(paths.length, start + CHUNK);
    for (let at = start; at < end; at += 1) answers[at] = inspect(paths[at] as string);
  }
  await Promise.all(workers);
  // What a worker took and did not hand back (it failed or died): done here.
  for (let at = 0; at < paths.length; at += 1) {
    if (answers[at] === undefined) answers[at] = inspect(paths[at] as string);
  }
  return answers as (BulkAnswer | null)[];
}

/**
 * The answer without what was read to make it (for a run that keeps no index).
 *
 * @example
 * port.postMessage({ kind: 'chunk', start, answers: answers.map(withoutRead) });
 */
export function withoutRead(answer: BulkAnswer | null): BulkAnswer | null {
  return answer === null || answer.read === undefined ? answer : { inspection: answer.inspection };
}

function jobOf(
  paths: string[],
  context: BulkContext,
  counter: SharedArrayBuffer,
  keep: boolean,
): BulkJob {
  const { listing } = context;
  return {
    keep,
    paths,
    maxRevivals: context.maxRevivals,
    inodes: [...(context.table?.inodes ?? [])],
    listing:
      listing === undefined ? null : { folders: [...listing.folders], claims: [...listing.claims] },
    counter,
  };
}

/**
 * The context a worker rebuilds from its job.
 *
 * @example
 * const inspect = bulkInspector(contextOf(workerData as BulkJob));
 */
export function contextOf(job: BulkJob): BulkContext {
  return {
    maxRevivals: job.maxRevivals,
    table: { inodes: new Set(job.inodes) },
    listing:
      job.listing === null
        ? undefined
        : { folders: new Set(job.listing.folders), claims: new Set(job.listing.claims) },
  };
}

function defaultHelpers(count: number): number {
  if (count < MIN_PATHS_FOR_HELPERS) return 0;
  return Math.max(0, Math.min(MAX_HELPERS, availableParallelism() - 1));
}

/**
 * Worker threads started before the list they will read is known: `status` starts them while
 * its walk is still finding transcripts, once it has found {@link MIN_PATHS_FOR_HELPERS} and no
 * status index is likely to answer them, so that their start-up — their own copy of the
 * modules, about 45 ms here — overlaps the walk instead of the reading. Each waits for its job;
 * one never given a job holds nothing (unreferenced) and is ended by {@link EarlyHelpers.close}.
 *
 * @example
 * const early = EarlyHelpers.start();
 * await inspectInBulk(paths, 3, table, { early });
 * early.close();
 */
export class EarlyHelpers {
  #waiting: Worker[];

  private constructor(workers: Worker[]) {
    this.#waiting = workers;
  }

  /**
   * Start as many workers as a long list gets (one per other core, at most three).
   *
   * @example
   * const early = EarlyHelpers.start();
   */
  static start(): EarlyHelpers {
    const workers: Worker[] = [];
    for (let helper = 0; helper < defaultHelpers(MIN_PATHS_FOR_HELPERS); helper += 1) {
      const worker = newWorker();
      if (worker === null) break;
      worker.unref();
      workers.push(worker);
    }
    const early = new EarlyHelpers(workers);
    for (const worker of workers) {
      // One that fails before it is given a job is simply not used.
      worker.on('error', () => undefined);
      worker.once('exit', () => early.#drop(worker));
    }
    return early;
  }

  #drop(worker: Worker): void {
    this.#waiting = this.#waiting.filter((waiting) => waiting !== worker);
  }

  /** A waiting worker, handed over (it is the caller's to end), or null when none is left. */
  take(): Worker | null {
    const worker = this.#waiting.shift() ?? null;
    worker?.removeAllListeners();
    worker?.ref();
    return worker;
  }

  /** End the workers that were not taken. */
  close(): void {
    for (const worker of this.#waiting.splice(0)) {
      worker.removeAllListeners();
      void worker.terminate().catch(() => undefined);
    }
  }
}

function newWorker(): Worker | null {
  const url = new URL(`./bulk-worker${extensionOf(import.meta.url)}`, import.meta.url);
  try {
    return new Worker(url, { stdout: false, stderr: false });
  } catch {
    return null;
  }
}

/**
 * Start the workers (those started early first) and hand each the job; each promise settles
 * when its worker is done or gone, never rejects.
 */
function startHelpers(
  count: number,
  job: BulkJob,
  answers: (BulkAnswer | null | undefined)[],
  stats: BulkStats,
  early: EarlyHelpers | null,
): Promise<void>[] {
  const started: Promise<void>[] = [];
  for (let helper = 0; helper < count; helper += 1) {
    const worker = early?.take() ?? newWorker();
    if (worker === null) break;
    try {
      worker.postMessage(job);
    } catch {
      void worker.terminate().catch(() => undefined);
      break;
    }
    started.push(
      new Promise<void>((resolve) => {
        const finish = () => {
          worker.removeAllListeners();
          void worker.terminate().catch(() => undefined);
          resolve();
        };
        worker.on('message', (message: BulkMessage) => {
          if (message.kind === 'done') return finish();
          for (const [offset, answer] of message.answers.entries()) {
            answers[message.start + offset] = answer;
          }
          stats.byHelpers += message.answers.length;
        });
        worker.on('error', finish);
        worker.on('exit', finish);
      }),
    );
  }
  return started;
}

/** `.ts` when running from the sources, `.js` when compiled. */
function extensionOf(url: string): string {
  return url.endsWith('.ts') ? '.ts' : '.js';
}
