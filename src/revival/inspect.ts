import { type FileSystem, nodeFileSystem } from '../transcript/file-system.ts';
import {
  claimPathOf,
  heldDetail,
  probeTreeClaim,
  type TreeClaim,
} from '../transcript/tree-claim.ts';
import { describeHolder, probeWriterLock } from '../transcript/writer-lock.ts';
import { assessTail } from './assess-tail.ts';
import type { Inspection } from './inspection.ts';
import { readTailState, WINDOW_BYTES } from '../transcript/read-tail-state.ts';
import { verdictDisagreement } from './verdict-agreement.ts';
import { layoutAncestors } from './tree-root.ts';

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
   * The caller's own claim on the transcript's tree ({@link Revival.claimTree}), so that the
   * tree is not reported `running` because of it.
   */
  treeClaim?: TreeClaim;
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
      probeTreeClaims(fileSystem, path, ownClaim(options.treeClaim)),
    ]);
    if (!read.ok) return unreadableInspection(path, maxRevivals, read.detail);
    const context: Parameters<typeof assessTail>[1] = {
      maxRevivals,
      running: holder !== null || reviver !== null,
    };
    if (holder !== null) {
      context.runningDetail = `a live process holds the writer lock (${describeHolder(holder)})`;
    } else if (reviver !== null) {
      context.runningDetail = heldDetail(reviver.root, reviver);
    }
    let inspection: Inspection = { path, bytes: read.bytes, ...assessTail(read.state, context) };
    const lie = await checkpointLie(path, read, inspection, context, fileSystem);
    if (lie !== null) inspection = unreadableInspection(path, maxRevivals, lie);
    if (holder === null && reviver !== null) inspection.reviver = reviver;
    if (!validCap && inspection.reason === 'revival-cap') {
      inspection.detail = `maxRevivals must be a non-negative integer (got ${String(options?.maxRevivals)}); treated as 0`;
    }
    if (inspection.detail !== undefined) inspection.detail = `${path}: ${inspection.detail}`;
    return readingOrder(inspection);
  } catch (error) {
    return unreadableInspection(path, maxRevivals, `${path}: cannot inspect (${String(error)})`);
  }
}

/**
 * Whether the checkpoint the fold started from tells the truth, checked where it costs no more
 * than one more read of what inspect read already: for a revivable verdict (the only one a
 * revive acts on) of a transcript that fits in the window, the records are folded from the
 * start too, and the two verdicts compared as revive compares them (verdictDisagreement).
 * A longer transcript's checkpoint is checked by revive's full read.
 */
async function checkpointLie(
  path: string,
  read: Extract<Awaited<ReturnType<typeof readTailState>>, { ok: true }>,
  inspection: Inspection,
  context: Parameters<typeof assessTail>[1],
  fileSystem: FileSystem,
): Promise<string | null> {
  if (!inspection.revivable || read.fromCheckpoint === null || read.bytes > WINDOW_BYTES) {
    return null;
  }
  const full = await readTailState(path, { fileSystem, strategy: 'full' });
  if (!full.ok) return null;
  const problem = verdictDisagreement(inspection, assessTail(full.state, context));
  return problem === null ? null : `${path}: ${problem}`;
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
): Promise<NonNullable<Inspection['reviver']> | null> {
  const roots = layoutAncestors(path).filter((root) => claimPathOf(root) !== held);
  const holders = await Promise.all(roots.map((root) => probeTreeClaim(fileSystem, root)));
  for (const [index, holder] of holders.entries()) {
    if (holder !== null) return { root: roots[index] as string, ...holder };
  }
  return null;
}

const ORDER: (keyof Inspection)[] = [
  'path',
  'revivable',
  'reason',
  'detail',
  'reviver',
  'tail',
  'halt',
  'revivalsUsed',
  'maxRevivals',
  'agentId',
  'agentType',
  'label',
  'parent',
  'openDispatches',
  'neverDispatched',
  'pendingJoins',
  'bytes',
  'messages',
  'estimatedTokens',
];

/** The same fields in the order a person reads them (for `--json` output and the docs). */
function readingOrder(inspection: Inspection): Inspection {
  const ordered: Record<string, unknown> = {};
  for (const key of ORDER) {
    if (inspection[key] !== undefined) ordered[key] = inspection[key];
  }
  return ordered as unknown as Inspection;
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
  return {
    path,
    revivable: false,
    reason: 'unreadable',
    detail,
    revivalsUsed: 0,
    maxRevivals,
    openDispatches: [],
    neverDispatched: [],
    pendingJoins: [],
    bytes: 0,
    messages: 0,
    estimatedTokens: 0,
  };
}
