import type { ChildLayout } from '../subagents/child-layout.ts';
import { type FileSystem, nodeFileSystem } from '../transcript/file-system.ts';
import type { TreeClaim } from '../transcript/tree-claim.ts';
import { claimFoundTree } from './claim-found-tree.ts';
import { findTreeRoot } from './tree-root.ts';

function now(): Date {
  return new Date();
}

/**
 * What {@link claimRevivalTree} is asked.
 *
 * @example
 * const options: ClaimTreeOptions = { path: 'runs/main.agents/a.jsonl' };
 */
export interface ClaimTreeOptions {
  /** Any transcript of the tree: the root is found from it. */
  path: string;
  fileSystem?: FileSystem;
  /** Where the application keeps a run's children (`X.agents/<id>.jsonl` by default). */
  layout?: ChildLayout;
  clock?: () => Date;
}

/**
 * The tree claim, or why not: `running` (another reviver holds it; `detail` names its pid and
 * since when), `unreadable` (a link on the way to the root is not to be trusted), `io-error`.
 *
 * @example
 * const claimed: ClaimTreeResult = await Revival.claimTree({ path });
 * if (!claimed.ok) console.error(`${claimed.reason}: ${claimed.detail}`);
 */
export type ClaimTreeResult =
  | { ok: true; claim: TreeClaim }
  | { ok: false; reason: 'running' | 'unreadable' | 'io-error'; detail: string };

/**
 * Claim the whole tree `path` belongs to, for an application that revives several of its runs:
 * find its root (checking every parent link, see {@link findTreeRoot}) and take the root's
 * claim. Pass the claim to each `Revival.revive` of the tree and release it once the revived
 * runs have ended. Never throws for the files' state.
 *
 * @example
 * const claimed = await claimRevivalTree({ path: 'runs/main.jsonl' });
 * if (claimed.ok) {
 *   const revived = await Revival.revive({ path: 'runs/main.jsonl', agentId: 'main', maxRevivals: 2, treeClaim: claimed.claim });
 *   await claimed.claim.release();
 * }
 */
export async function claimRevivalTree(options: ClaimTreeOptions): Promise<ClaimTreeResult> {
  const fileSystem = options.fileSystem ?? nodeFileSystem;
  const tree = await findTreeRoot(options.path, fileSystem, options.layout);
  if (!tree.ok) return { ok: false, reason: 'unreadable', detail: tree.detail };
  return claimFoundTree(options.path, tree, fileSystem, options.clock ?? now);
}
