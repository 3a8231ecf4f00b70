import type { ChildLayout } from '../subagents/child-layout.ts';
import { type FileSystem, nodeFileSystem } from '../transcript/file-system.ts';
import { claimPathOf, probeTreeClaim, type TreeClaim } from '../transcript/tree-claim.ts';
import { probeWriterLock } from '../transcript/writer-lock.ts';
import { assessTail } from './assess-tail.ts';
import type { Inspection } from './inspection.ts';
import { readTailState } from '../transcript/read-tail-state.ts';
import { verdictDisagreement } from './verdict-agreement.ts';
import { layoutAncestors } from './tree-root.ts';
import { draftInspection, finishInspection } from './inspection-verdict.ts';
import { unreadableAnswer } from './unreadable-answer.ts';

/**
 * What {@link inspectTranscript} is asked.
 *
 * @example
 * const options: InspectOptions = { path: 'runs/a.jsonl', maxRevivals: 2 };
 */
export interface InspectOptions {
  path: string;
  /** How many revivals the application allows this transcript (0 refuses every revival). */
  maxRevivals: number;
  fileSystem?: FileSystem;
  /**
   * Where the application keeps a run's children (`X.agents/<id>.jsonl` by default): the
   * transcripts that may be the tree's root, whose claim says whether it is being revived.
   */
  layout?: ChildLayout;
  /**
   * The caller's own claim on the transcript's tree ({@link Revival.claimTree}), so that the
   * tree is not reported `running` because of it.
   */
  treeClaim?: TreeClaim;
  /**
   * Also read every record from the start, checksums and all: damage anywhere is then
   * `unreadable` (without it, only what follows the last checkpoint is read, and a revive reads
   * only what its run's model will see), and a checkpoint whose verdict the records contradict
   * is caught whatever the transcript's length. Costs a full read; `llm-agent status --verify`.
   */
  verify?: boolean;
}

/**
 * Whether one transcript holds a run to revive, read without writing anything: no file
 * created, no byte changed, no lock taken (a live writer is found by probing its lock, never
 * by taking it; a tree being revived is `running` too, naming the reviver). Never throws: a transcript that cannot be read is an answer, `unreadable`,
 * with a detail naming the file, the line and the cause. A cap that is not a non-negative
 * integer is treated as 0 (every revival refused) and said so in the detail.
 *
 * @example
 * const found = await inspectTranscript({ path: 'runs/a.jsonl', maxRevivals: 2 });
 * if (!found.revivable) console.log(found.reason, found.detail);
 */
export async function inspectTranscript(options: InspectOptions): Promise<Inspection> {
  const path = typeof options?.path === 'string' ? options.path : String(options?.path);
  const validCap = Number.isSafeInteger(options?.maxRevivals) && options.maxRevivals >= 0;
  const maxRevivals = validCap ? options.maxRevivals : 0;
  try {
    const fileSystem = options.fileSystem ?? nodeFileSystem;
    // Both at once: each is a few file-system round trips, and inspect's latency is theirs.
    const [read, holder, reviver] = await Promise.all([
      readTailState(path, { fileSystem }),
      probeWriterLock(fileSystem, path),
      probeTreeClaims(fileSystem, path, ownClaim(options.treeClaim), options.layout),
    ]);
    const draft = draftInspection(path, options.maxRevivals, read, holder, reviver);
    if (!('needsFullRead' in draft)) return draft;
    if (options.verify === true) {
      const problem = await verifiedInFull(path, draft.inspection, draft.context, fileSystem);
      if (problem !== null) draft.inspection = unreadableInspection(path, maxRevivals, problem);
      return finishInspection(draft, null);
    }
    const full = draft.needsFullRead
      ? await readTailState(path, { fileSystem, strategy: 'full' })
      : null;
    return finishInspection(draft, full);
  } catch (error) {
    return unreadableInspection(path, maxRevivals, `${path}: cannot inspect (${String(error)})`);
  }
}

/**
 * The full check: every record read from the start; the reason the transcript is unreadable,
 * or where the verdict read from its checkpoint disagrees with the records', or null.
 */
async function verifiedInFull(
  path: string,
  inspection: Inspection,
  context: Parameters<typeof assessTail>[1],
  fileSystem: FileSystem,
): Promise<string | null> {
  const full = await readTailState(path, { fileSystem, strategy: 'full' });
  if (!full.ok) return full.detail;
  if (inspection.reason === 'unreadable') return null;
  const problem = verdictDisagreement(inspection, assessTail(full.state, context));
  return problem;
}

/** The claim file of the caller's claim while it holds it. */
function ownClaim(claim: TreeClaim | undefined): string | undefined {
  return claim?.held === true && typeof claim.path === 'string' ? claim.path : undefined;
}

/**
 * Whether another reviver holds the claim of the tree `path` is in: the claim lies beside the
 * tree's root, which is one of the transcript's ancestors by layout — each probed (a stat and
 * the kernel's lock table; nothing read from the transcripts). The claim `held` by the caller
 * itself is not another reviver. The reviver and the root it claimed, or null.
 */
async function probeTreeClaims(
  fileSystem: FileSystem,
  path: string,
  held: string | undefined,
  layout: ChildLayout | undefined,
): Promise<NonNullable<Inspection['reviver']> | null> {
  const roots = layoutAncestors(path, layout).filter((root) => claimPathOf(root) !== held);
  const holders = await Promise.all(roots.map((root) => probeTreeClaim(fileSystem, root)));
  for (const [index, holder] of holders.entries()) {
    if (holder !== null) return { root: roots[index] as string, ...holder };
  }
  return null;
}

/**
 * The answer for a transcript that cannot be read: not revivable, nothing open, nothing to send.
 * `detail` should name the file, the line and the cause.
 *
 * @example
 * unreadableInspection('runs/a.jsonl', 2, 'runs/a.jsonl: line 7: checksum mismatch').reason;
 * // 'unreadable'
 */
export function unreadableInspection(
  path: string,
  maxRevivals: number,
  detail: string,
): Inspection {
  return unreadableAnswer(path, maxRevivals, detail);
}
