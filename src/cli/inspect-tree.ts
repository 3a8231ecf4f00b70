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

/**
 * What the CLI calls a run's state: `inspect`'s reasons, named for people. A revivable run is
 * `failed` or `stopped` when its transcript says so (its `halt`), else `revivable` (its process
 * died); all three can be revived. `queued` is a run of the PostgreSQL store that no worker has
 * taken yet.
 *
 * @example
 * const state: StatusState = stateOf(inspection); // 'capped' for a run at its revival cap
 */
export type StatusState =
  | 'running'
  | 'finished'
  | 'revivable'
  | 'failed'
  | 'stopped'
  | 'capped'
  | 'unreadable'
  | 'empty'
  | 'queued';

/**
 * One run of the tree.
 *
 * @example
 * const [root]: RunNode[] = await inspectTree(['runs/main.jsonl'], 3, process.cwd());
 * for (const child of root?.children ?? []) console.log(child.displayPath, child.state);
 */
export interface RunNode {
  /** Absolute path of the transcript. */
  path: string;
  /** The path as shown: relative to the working folder when inside it. */
  displayPath: string;
  state: StatusState;
  inspection: Inspection;
  children: RunNode[];
  /** For a run of the PostgreSQL store: who holds it, until when, and how it was left. */
  database?: DatabaseHold;
}

/**
 * A store run's row as `status --database` adds it: the worker holding it (`owner`), its
 * fencing `epoch` and lease, and the `status` the last writer or supervisor left.
 *
 * @example
 * const hold: DatabaseHold = { owner: null, epoch: 2, leaseExpires: null, leaseExpired: false, status: 'awaiting-approval' };
 */
export interface DatabaseHold {
  owner: string | null;
  epoch: number;
  leaseExpires: string | null;
  /** Held, and the lease ran out: its worker died and no supervisor has acted yet. */
  leaseExpired: boolean;
  status: string;
}

/**
 * The state a person reads for an inspection.
 *
 * @example
 * stateOf({ revivable: false, reason: 'revival-cap', … }); // 'capped'
 */
export function stateOf(inspection: Inspection): StatusState {
  if (inspection.revivable) return inspection.halt?.state ?? 'revivable';
  switch (inspection.reason) {
    case 'running':
      return 'running';
    case 'finished':
      return 'finished';
    case 'revival-cap':
      return 'capped';
    case 'empty':
      return 'empty';
    default:
      return 'unreadable';
  }
}

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

/**
 * Every node of some trees, parents before their children.
 *
 * @example
 * const all = [...walkTree(roots)];
 */
export function* walkTree(roots: RunNode[]): Generator<RunNode> {
  for (const root of roots) {
    yield root;
    yield* walkTree(root.children);
  }
}

/**
 * Every node of some trees, children before their parents (the order revival goes in).
 *
 * @example
 * for (const node of walkChildrenFirst(roots)) console.log(node.displayPath);
 */
export function* walkChildrenFirst(roots: RunNode[]): Generator<RunNode> {
  for (const root of roots) {
    yield* walkChildrenFirst(root.children);
    yield root;
  }
}

function displayPath(path: string, cwd: string): string {
  const inside = relative(cwd, path);
  return inside.startsWith('..') || inside === '' ? path : inside;
}

function compare(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}
