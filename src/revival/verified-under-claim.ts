import { resolve } from 'node:path';
import type { ChildLayout } from '../subagents/child-layout.ts';
import type { FileSystem } from '../transcript/file-system.ts';
import type { TreeClaim } from '../transcript/tree-claim.ts';
import type { Inspection } from './inspection.ts';
import { checkJoinedChildren, findTreeRoot, type TreeRoot } from './tree-root.ts';

/** What one claim carries, by claim: a new claim starts with nothing verified. */
const carried = new WeakMap<TreeClaim, VerifiedUnderClaim>();

/**
 * What was verified under one tree claim, carried with it down to the layers that would
 * otherwise check again: each run's tree root (every parent link up from it), each joined
 * child's transcript, and each run's inspection. While the claim is held no other reviver can
 * write the tree, so what was checked under it stands: one `revive --yes` finds each root once,
 * checks each join once and inspects each run once before its first write. A claim taken anew
 * is a new object and carries nothing, so everything is checked again under it.
 *
 * Only what passed is kept (a refusal is looked at again next time); an inspection is handed
 * out once — the revive that takes it writes the run, and the open it goes on to still reads
 * every record and refuses when they disagree with it.
 *
 * @example
 * const verified = VerifiedUnderClaim.of(claim);
 * const tree = await verified.treeRoot('runs/main.agents/a.jsonl', nodeFileSystem);
 */
export class VerifiedUnderClaim {
  readonly #roots = new Map<string, Extract<TreeRoot, { ok: true }>>();
  readonly #joins = new Set<string>();
  readonly #inspections = new Map<string, Inspection>();

  /** What `claim` carries (nothing yet for a claim never seen). */
  static of(claim: TreeClaim): VerifiedUnderClaim {
    let verified = carried.get(claim);
    if (verified === undefined) {
      verified = new VerifiedUnderClaim();
      carried.set(claim, verified);
    }
    return verified;
  }

  /** The root of `path`'s tree: found once under the claim ({@link findTreeRoot}). */
  async treeRoot(path: string, fileSystem: FileSystem, layout?: ChildLayout): Promise<TreeRoot> {
    const known = this.#roots.get(resolve(path));
    if (known !== undefined) return known;
    const found = await findTreeRoot(path, fileSystem, layout);
    if (found.ok) this.rememberRoot(path, found);
    return found;
  }

  /** Keep the root found for `path` (the one the claim was taken on). */
  rememberRoot(path: string, found: Extract<TreeRoot, { ok: true }>): void {
    this.#roots.set(resolve(path), found);
  }

  /**
   * Why a child `path`'s joins wait for cannot be read safely, or null
   * ({@link checkJoinedChildren}); each child checked once under the claim.
   */
  async joinedChildren(
    path: string,
    agentIds: readonly string[],
    fileSystem: FileSystem,
    layout?: ChildLayout,
  ): Promise<string | null> {
    const key = (agentId: string) => `${resolve(path)}\0${agentId}`;
    const unchecked = agentIds.filter((agentId) => !this.#joins.has(key(agentId)));
    if (unchecked.length === 0) return null;
    const problem = await checkJoinedChildren(path, unchecked, fileSystem, layout);
    if (problem === null) for (const agentId of unchecked) this.#joins.add(key(agentId));
    return problem;
  }

  /** Keep the inspection of a run made under the claim. */
  rememberInspection(inspection: Inspection): void {
    this.#inspections.set(resolve(inspection.path), inspection);
  }

  /**
   * The inspection of `path` made under the claim with the cap `maxRevivals`, handed out once;
   * undefined when none.
   */
  takeInspection(path: string, maxRevivals: number): Inspection | undefined {
    const key = resolve(path);
    const inspection = this.#inspections.get(key);
    this.#inspections.delete(key);
    return inspection?.maxRevivals === maxRevivals ? inspection : undefined;
  }
}
