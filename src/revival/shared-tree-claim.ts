import type { FileSystem } from '../transcript/file-system.ts';
import { claimTree, type TreeClaim } from '../transcript/tree-claim.ts';

/**
 * A tree claim taken by `Revival.revive` itself, shared within this process, or why it could
 * not be taken or joined.
 *
 * @example
 * const joined: JoinedTreeClaim = await joinTreeClaim(nodeFileSystem, '/runs/main.jsonl', new Date());
 * if (joined.ok) await joined.leave();
 */
export type JoinedTreeClaim =
  | {
      ok: true;
      claim: TreeClaim;
      /** This revive is done with the claim; the last to leave releases it. Idempotent. */
      leave(): Promise<void>;
    }
  | { ok: false; detail: string };

interface Shared {
  claimed: ReturnType<typeof claimTree>;
  users: number;
}

/** The claims this process's revives hold, per file system and tree root. */
const shared = new WeakMap<FileSystem, Map<string, Shared>>();

/**
 * Claim the tree at `root` for a revive that was given no claim — or join the claim another
 * revive in this process already holds on it (the application revives a child, resumes it,
 * then revives its parent: one reviver, one process). The claim is released when the last
 * revive that took or joined it leaves (its revived session closes, or it refused). Another
 * process meets the claim's kernel lock and is refused, as before. A joined claim is checked to
 * still stand (its file not removed or replaced) before it is used.
 *
 * @example
 * const joined = await joinTreeClaim(nodeFileSystem, '/runs/main.jsonl', new Date());
 * if (!joined.ok) console.error(joined.detail);
 */
export async function joinTreeClaim(
  fileSystem: FileSystem,
  root: string,
  since: Date,
): Promise<JoinedTreeClaim> {
  let trees = shared.get(fileSystem);
  if (trees === undefined) {
    trees = new Map();
    shared.set(fileSystem, trees);
  }
  const existing = trees.get(root);
  const entry: Shared = existing ?? { claimed: claimTree(fileSystem, root, since), users: 0 };
  if (existing === undefined) trees.set(root, entry);
  entry.users += 1;
  const forget = (): void => {
    entry.users -= 1;
    if (entry.users === 0 && trees.get(root) === entry) trees.delete(root);
  };
  let result: Awaited<Shared['claimed']>;
  try {
    result = await entry.claimed;
  } catch (error) {
    forget();
    throw error;
  }
  if (!result.ok) {
    forget();
    return { ok: false, detail: result.detail };
  }
  const claim = result.claim;
  if (existing !== undefined && !(await claim.verify().catch(() => false))) {
    forget();
    return {
      ok: false,
      detail: `the claim file of its tree (${claim.path}) was removed or replaced; another reviver may hold the tree now`,
    };
  }
  let left = false;
  return {
    ok: true,
    claim,
    async leave() {
      if (left) return;
      left = true;
      forget();
      if (entry.users === 0) await claim.release();
    },
  };
}
