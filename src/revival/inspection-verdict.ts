/**
 * The decisions of `inspect` once its reads are made — the tail read, the writer's lock, the
 * tree's claim — kept apart from the reads so that a caller reading thousands of transcripts
 * its own way (`status`) reaches the very same answer: {@link draftInspection}, then
 * {@link finishInspection}. Pure; no I/O.
 *
 * @module
 */
import { type TailRead, WINDOW_BYTES } from '../transcript/read-tail-state.ts';
import { heldDetail } from '../transcript/tree-claim.ts';
import { describeHolder, type LockHolder } from '../transcript/writer-lock.ts';
import { assessTail } from './assess-tail.ts';
import type { Inspection } from './inspection.ts';
import { unreadableAnswer } from './unreadable-answer.ts';
import { verdictDisagreement } from './verdict-agreement.ts';

/**
 * An inspection decided but for one check: whether the checkpoint the fold started from tells
 * the truth. `needsFullRead` says whether that check needs the transcript folded from its
 * start ({@link finishInspection} then gets that read).
 *
 * @example
 * const draft = draftInspection(path, 3, read, null, null);
 */
export interface InspectionDraft {
  path: string;
  maxRevivals: number;
  validCap: boolean;
  givenCap: unknown;
  inspection: Inspection;
  context: Parameters<typeof assessTail>[1];
  reviver: NonNullable<Inspection['reviver']> | null;
  holder: LockHolder | null;
  needsFullRead: boolean;
}

/**
 * The inspection of a transcript from what was found about it — its tail read, who holds its
 * writer lock, who revives its tree — without any I/O: what `inspectTranscript` (inspect.ts) answers,
 * for a caller that did the reads its own way (`status`, reading thousands of transcripts).
 * An unreadable read is the answer at once; otherwise a draft for {@link finishInspection}.
 *
 * @example
 * const draft = draftInspection(path, 3, read, holder, reviver);
 * const inspection = 'needsFullRead' in draft ? finishInspection(draft, full) : draft;
 */
export function draftInspection(
  path: string,
  givenCap: unknown,
  read: TailRead,
  holder: LockHolder | null,
  reviver: NonNullable<Inspection['reviver']> | null,
): Inspection | InspectionDraft {
  const validCap = Number.isSafeInteger(givenCap) && (givenCap as number) >= 0;
  const maxRevivals = validCap ? (givenCap as number) : 0;
  if (!read.ok) return unreadableAnswer(path, maxRevivals, read.detail);
  const context: Parameters<typeof assessTail>[1] = {
    maxRevivals,
    running: holder !== null || reviver !== null,
  };
  if (holder !== null) {
    context.runningDetail = `a live process holds the writer lock (${describeHolder(holder)})`;
  } else if (reviver !== null) {
    context.runningDetail = heldDetail(reviver.root, reviver);
  }
  const inspection: Inspection = { path, bytes: read.bytes, ...assessTail(read.state, context) };
  // The checkpoint is checked where it costs no more than one more read of what inspect read
  // already: for a revivable verdict (the only one a revive acts on) of a transcript that fits
  // in the window. A longer transcript's checkpoint is checked by revive's full read.
  const needsFullRead =
    inspection.revivable && read.fromCheckpoint !== null && read.bytes <= WINDOW_BYTES;
  return {
    path,
    maxRevivals,
    validCap,
    givenCap,
    inspection,
    context,
    reviver,
    holder,
    needsFullRead,
  };
}

/**
 * The inspection a draft becomes, given the transcript folded from its start when the draft
 * asked for it (`full`; null otherwise): the two verdicts are compared as revive compares them
 * (verdictDisagreement), and a checkpoint that lies makes the transcript unreadable. Pure.
 *
 * @example
 * const inspection = finishInspection(draft, draft.needsFullRead ? full : null);
 */
export function finishInspection(draft: InspectionDraft, full: TailRead | null): Inspection {
  const { path, maxRevivals, context, reviver, holder } = draft;
  let inspection = draft.inspection;
  if (full?.ok === true) {
    const problem = verdictDisagreement(inspection, assessTail(full.state, context));
    if (problem !== null) {
      inspection = unreadableAnswer(path, maxRevivals, problem);
    }
  }
  if (holder === null && reviver !== null) inspection.reviver = reviver;
  if (!draft.validCap && inspection.reason === 'revival-cap') {
    inspection.detail = `maxRevivals must be a non-negative integer (got ${String(draft.givenCap)}); treated as 0`;
  }
  // The detail names the file once: a full read's own detail already does (`path:N: …`).
  if (inspection.detail !== undefined && !inspection.detail.startsWith(`${path}:`)) {
    inspection.detail = `${path}: ${inspection.detail}`;
  }
  return readingOrder(inspection);
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
