/**
 * A run as every view shows it (the status tree, the plan, the web view): its transcript, its
 * state named for people, its children. `src/runs` builds it; `src/render` draws it.
 *
 * @module
 */
import type { Inspection } from '../revival/index.ts';

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
