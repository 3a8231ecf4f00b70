/**
 * The runs found below some paths, as a tree (a child transcript `X.agents/<id>.jsonl` under
 * its parent `X.jsonl`) with each run's state as `inspect` sees it. Pure, apart from
 * {@link inspectTree}, which only calls `inspect` (constant cost per transcript).
 *
 * @module
 */
import { relative } from 'node:path';
import { parentTranscriptPath } from '../subagents/child-layout.ts';
import { inspectRun } from './inspect-run.ts';
import type { InspectionView as Inspection } from './inspection.ts';
import { inspectInBulk } from './bulk-pool.ts';
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
  for (const { path, inspection } of entries) {
    nodes.set(path, {
      path,
      displayPath: displayPath(path, cwd),
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
  } = {},
): Promise<RunNode[]> {
  // The reads block (see lock-snapshot.ts): inspecting several at once would only interleave
  // them and hold more windows in memory at a time.
  const concurrency = options.concurrency ?? 1;
  const entries: { path: string; inspection: Inspection }[] = new Array(paths.length);
  let next = 0;
  const tableRead = readLockTableAsync();
  const statusIndex =
    options.verify !== true &&
    options.index !== undefined &&
    paths.length >= (options.index.minTranscripts ?? MIN_INDEXED_TRANSCRIPTS)
      ? StatusIndex.open(paths, options.index.env)
      : null;
  const table = await tableRead;
  const fileSystem = await lockSnapshotFileSystem(undefined, table);
  // The common case at a few system calls on every core, the rest as `inspect` does it
  // (bulk-inspect.ts).
  const bulk =
    options.verify === true
      ? null
      : await inspectInBulk(paths, maxRevivals, table, {
          index: statusIndex,
          listing: options.listing,
        });
  statusIndex?.save();
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
  return buildTree(entries, cwd);
}

function displayPath(path: string, cwd: string): string {
  const inside = relative(cwd, path);
  return inside.startsWith('..') || inside === '' ? path : inside;
}

function compare(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}
