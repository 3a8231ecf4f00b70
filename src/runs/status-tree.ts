import { lstatSync, type Stats } from 'node:fs';
import { type FolderListing, findTranscripts, type NotRead } from './find-transcripts.ts';
import { EarlyHelpers, MIN_PATHS_FOR_HELPERS } from './bulk-pool.ts';
import { inspectTree, type TreeStats } from './inspect-tree.ts';
import { indexMayAnswer } from './status-index.ts';
import { type RunNode, walkTree } from '../render/run-node.ts';

/**
 * The run trees below some PATHs as `status` decides them — and `llm-agent ui` shows them —
 * with the folders it could not read (they hide runs). Uses and keeps the status index (see
 * status-index.ts) through `env`, except with `verify`, which reads every record.
 *
 * @example
 * const { roots, notRead } = await statusTree(['runs/'], process.cwd(), process.env, { maxRevivals: 3 });
 */
export async function statusTree(
  given: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  options: {
    maxRevivals: number;
    verify?: boolean;
    /** Filled in with where the answers came from and how long the walk and each part took. */
    stats?: TreeStats & { walkMs?: number; earlyHelpers?: boolean };
  },
): Promise<{ roots: RunNode[]; notRead: NotRead[] }> {
  const notRead: NotRead[] = [];
  const listing: FolderListing = { folders: new Set(), claims: new Set() };
  const started = performance.now();
  // Once the walk has found enough transcripts for worker threads to read with, and no status
  // index is likely to answer them (a first run, or the index off), the workers start at once:
  // their start-up overlaps the rest of the walk instead of the reads.
  let early: EarlyHelpers | null = null;
  let decided = options.verify === true;
  const progress = (found: ReadonlySet<string>): void => {
    if (decided || found.size < MIN_PATHS_FOR_HELPERS) return;
    decided = true;
    if (!indexMayAnswer(found, env)) early = EarlyHelpers.start();
    if (options.stats !== undefined) options.stats.earlyHelpers = early !== null;
  };
  try {
    const paths = await findTranscripts(given, cwd, notRead, listing, progress);
    if (options.stats !== undefined) options.stats.walkMs = performance.now() - started;
    const roots = await inspectTree(paths, options.maxRevivals, cwd, {
      verify: options.verify === true,
      index: { env },
      listing,
      early,
      ...(options.stats === undefined ? {} : { stats: options.stats }),
    });
    sizeUnreadable(roots);
    return { roots, notRead };
  } finally {
    (early as EarlyHelpers | null)?.close();
  }
}

/**
 * An unreadable transcript's real size (inspect reports 0 bytes for what it could not read):
 * the file's own size, when it is a file. One lstat each, blocking: a folder can hold
 * hundreds, and a thread-pool round trip each costs more than the call.
 */
function sizeUnreadable(roots: RunNode[]): void {
  for (const node of walkTree(roots)) {
    if (node.state !== 'unreadable' || node.inspection.bytes !== 0) continue;
    let stats: Stats | undefined;
    try {
      stats = lstatSync(node.path, { throwIfNoEntry: false });
    } catch {
      stats = undefined;
    }
    if (stats?.isFile() === true && stats.size > 0) {
      node.inspection = { ...node.inspection, bytes: stats.size };
    }
  }
}
