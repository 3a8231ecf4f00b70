/**
 * The runs found below some paths, as a tree (a child transcript `X.agents/<id>.jsonl` under
 * its parent `X.jsonl`) with each run's state as `inspect` sees it. Pure, apart from
 * {@link inspectTree}, which only calls `inspect` (constant cost per transcript).
 *
 * @module
 */
import { isAbsolute, normalize, relative, sep } from 'node:path';
import { parentTranscriptPath } from '../subagents/child-layout.ts';
import { inspectRun } from './inspect-run.ts';
import type { InspectionView as Inspection } from './inspection.ts';
import { type BulkStats, type EarlyHelpers, inspectInBulk } from './bulk-pool.ts';
import type { FolderListing } from './find-transcripts.ts';
import { lockSnapshotFileSystem, readLockTableAsync } from './lock-snapshot.ts';
import { MIN_INDEXED_TRANSCRIPTS, StatusIndex } from './status-index.ts';
import type { TreeClaim } from '../transcript/tree-claim.ts';
import { layoutAncestors } from '../revival/tree-root.ts';
import { type RunNode, stateOf } from '../render/run-node.ts';

/**
 * Arrange inspections into trees: a transcript whose parent (by layout) is among them becomes
 * its child. Roots and children are sorted by path.
 *
 * @example
 * const roots = buildTree([{ path: '/runs/a.jsonl', inspection }], process.cwd());
 */
export function buildTree(
  entries: { path: string; inspection: Inspection }[],
  cwd: string,
): RunNode[] {
  const nodes = new Map<string, RunNode>();
  const shown = displayPaths(cwd);
  for (const { path, inspection } of entries) {
    nodes.set(path, {
      path,
      displayPath: shown(path),
      state: stateOf(inspection),
      inspection,
      children: [],
    });
  }
  const roots: RunNode[] = [];
  for (const node of [...nodes.values()].sort((left, right) => compare(left.path, right.path))) {
    const parentPath = parentTranscriptPath(node.path);
    const parent = parentPath === null ? undefined : nodes.get(parentPath);
    if (parent === undefined) roots.push(node);
    else parent.children.push(node);
  }
  return roots;
}

/**
 * Where {@link inspectTree}'s answers came from, and how long each part took: what a `status`
 * reports on stderr when `LLM_AGENT_STATUS_STATS=1` asks (the bench records it).
 *
 * @example
 * const stats = newTreeStats();
 * await inspectTree(paths, 3, cwd, { index: { env }, stats });
 * stats.fromIndex; // transcripts answered from the status index, without reading them
 */
export interface TreeStats {
  /** Transcripts inspected. */
  transcripts: number;
  /**
   * The status index: `used` (its file read, whatever it held), `off`
   * (`LLM_AGENT_STATUS_INDEX=off`, or no cache folder to keep it in), `not-used` (fewer
   * transcripts than it is kept for, `--verify`, or a caller that keeps none).
   */
  index: 'used' | 'off' | 'not-used';
  /** The index's file, when used. */
  indexPath?: string;
  /** Entries the index held when it was read. */
  indexEntries: number;
  /** Whether the index was written back (it is, when this run read anything anew). */
  indexSaved: boolean;
  /** Answered from the index, the transcript not read. */
  fromIndex: number;
  /** Read in bulk (its last 64 KiB, one read), … */
  read: number;
  /** … of which by worker threads. */
  byHelpers: number;
  /** Worker threads started. */
  helpers: number;
  /** Asked of `inspect` one by one: a lock, a claim, anything out of the common case, --verify. */
  inspected: number;
  /** Milliseconds: reading the lock table and the index, the bulk answers, writing the index
   * back, the one-by-one inspects, arranging the tree. */
  ms: { open: number; bulk: number; save: number; inspect: number; tree: number };
}

/**
 * A {@link TreeStats} with nothing counted yet.
 *
 * @example
 * const stats = newTreeStats();
 */
export function newTreeStats(): TreeStats {
  return {
    transcripts: 0,
    index: 'not-used',
    indexEntries: 0,
    indexSaved: false,
    fromIndex: 0,
    read: 0,
    byHelpers: 0,
    helpers: 0,
    inspected: 0,
    ms: { open: 0, bulk: 0, save: 0, inspect: 0, tree: 0 },
  };
}

/**
 * Inspect every path and arrange the answers as trees. Most are answered in bulk
 * (bulk-pool.ts: a few system calls each, on every core, and for `status` the status index);
 * the rest, and every path with `verify` or a claim of `treeClaims`, through `inspect` (one at a
 * time unless `concurrency` says otherwise).
 *
 * @example
 * const roots = await inspectTree(await findTranscripts(['runs'], cwd), 3, cwd);
 */
export async function inspectTree(
  paths: string[],
  maxRevivals: number,
  cwd: string,
  options: {
    concurrency?: number;
    /** Claims this process holds: their trees are not `running` because of them. */
    treeClaims?: readonly TreeClaim[];
    /** Read every record of every transcript (`status --verify`): damage anywhere is found. */
    verify?: boolean;
    /**
     * Use and keep the status index (status-index.ts) found through `env`, for at least
     * `minTranscripts` paths (default {@link MIN_INDEXED_TRANSCRIPTS}); never with `verify`.
     */
    index?: { env: NodeJS.ProcessEnv; minTranscripts?: number };
    /** What the walk that found `paths` listed (`findTranscripts`): fewer claim files probed. */
    listing?: FolderListing;
    /** Filled in with where the answers came from and what each part took. */
    stats?: TreeStats;
    /** Worker threads started ahead, for the bulk reads (ended here when not needed). */
    early?: EarlyHelpers | null;
  } = {},
): Promise<RunNode[]> {
  // The reads block (see lock-snapshot.ts): inspecting several at once would only interleave
  // them and hold more windows in memory at a time.
  const concurrency = options.concurrency ?? 1;
  const entries: { path: string; inspection: Inspection }[] = new Array(paths.length);
  const stats = options.stats ?? newTreeStats();
  stats.transcripts = paths.length;
  let clock = performance.now();
  const lap = (): number => {
    const before = clock;
    clock = performance.now();
    return clock - before;
  };
  let next = 0;
  const tableRead = readLockTableAsync();
  const statusIndex =
    options.verify !== true &&
    options.index !== undefined &&
    paths.length >= (options.index.minTranscripts ?? MIN_INDEXED_TRANSCRIPTS)
      ? StatusIndex.open(paths, options.index.env)
      : null;
  if (statusIndex !== null) {
    stats.index = 'used';
    stats.indexPath = statusIndex.path;
    stats.indexEntries = statusIndex.size;
  } else if (options.index !== undefined && options.verify !== true) {
    if (paths.length >= (options.index.minTranscripts ?? MIN_INDEXED_TRANSCRIPTS)) {
      stats.index = 'off';
    }
  }
  const table = await tableRead;
  const fileSystem = await lockSnapshotFileSystem(undefined, table);
  stats.ms.open = lap();
  // The common case at a few system calls on every core, the rest as `inspect` does it
  // (bulk-inspect.ts).
  const bulkStats: BulkStats = { kept: 0, read: 0, byHelpers: 0, helpers: 0 };
  const bulk =
    options.verify === true
      ? null
      : await inspectInBulk(paths, maxRevivals, table, {
          index: statusIndex,
          listing: options.listing,
          stats: bulkStats,
          early: options.early ?? null,
        });
  options.early?.close();
  stats.fromIndex = bulkStats.kept;
  stats.read = bulkStats.read;
  stats.byHelpers = bulkStats.byHelpers;
  stats.helpers = bulkStats.helpers ?? 0;
  stats.ms.bulk = lap();
  stats.indexSaved = statusIndex?.save() ?? false;
  stats.ms.save = lap();
  const worker = async (): Promise<void> => {
    while (next < paths.length) {
      const index = next;
      next += 1;
      const path = paths[index] as string;
      const treeClaim = options.treeClaims?.find((claim) =>
        layoutAncestors(path).includes(claim.root),
      );
      const inspection = treeClaim === undefined ? (bulk?.[index]?.inspection ?? null) : null;
      if (inspection !== null) {
        entries[index] = { path, inspection };
        continue;
      }
      stats.inspected += 1;
      entries[index] = {
        path,
        inspection: await inspectRun(
          path,
          maxRevivals,
          fileSystem,
          treeClaim,
          options.verify === true,
        ),
      };
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, paths.length) }, worker));
  stats.ms.inspect = lap();
  const roots = buildTree(entries, cwd);
  stats.ms.tree = lap();
  return roots;
}

/**
 * A path as shown: relative to `cwd` when it is inside it, else as it is. A path plainly below
 * `cwd` (absolute and normalised, as the walk makes them) is cut without `relative`, which
 * resolves both paths again each time (10,000 times in a large folder).
 */
function displayPaths(cwd: string): (path: string) => string {
  const absolute = isAbsolute(cwd) && normalize(cwd) === cwd;
  const prefix = !absolute ? null : cwd.endsWith(sep) ? cwd : `${cwd}${sep}`;
  return (path) => {
    const inside =
      prefix !== null &&
      path.startsWith(prefix) &&
      path.length > prefix.length &&
      !path.endsWith(sep) &&
      normalize(path) === path
        ? path.slice(prefix.length)
        : relative(cwd, path);
    return inside.startsWith('..') || inside === '' ? path : inside;
  };
}

function compare(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}
