import type { FileSystem } from '../transcript/file-system.ts';
import { claimTree, type TreeClaim } from '../transcript/tree-claim.ts';
import type { TreeRoot } from './tree-root.ts';
import { VerifiedUnderClaim } from './verified-under-claim.ts';

/**
 * Claim the tree whose root was just found for `path` ({@link findTreeRoot}), carrying that
 * root with the claim ({@link VerifiedUnderClaim}): what `claimRevivalTree` does once
 * the root is found, for a caller that found it itself. Never throws for the files' state.
 *
 * @example
 * const tree = await findTreeRoot('runs/main.jsonl', nodeFileSystem);
 * if (tree.ok) await claimFoundTree('runs/main.jsonl', tree, nodeFileSystem, () => new Date());
 */
export async function claimFoundTree(
  path: string,
  tree: Extract<TreeRoot, { ok: true }>,
  fileSystem: FileSystem,
  clock: () => Date,
): Promise<
  { ok: true; claim: TreeClaim } | { ok: false; reason: 'running' | 'io-error'; detail: string }
> {
  try {
    const claimed = await claimTree(fileSystem, tree.root, clock());
    if (!claimed.ok) return { ok: false, reason: 'running', detail: `${path}: ${claimed.detail}` };
    VerifiedUnderClaim.of(claimed.claim).rememberRoot(path, tree);
    return claimed;
  } catch (error) {
    return {
      ok: false,
      reason: 'io-error',
      detail: `${path}: cannot claim its tree (${error instanceof Error ? error.message : String(error)})`,
    };
  }
}
