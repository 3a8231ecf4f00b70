import type { Assessment } from './assess-tail.ts';

/**
 * What a verdict is compared on: whether the run is revivable (or why not) and everything a
 * revive would act on.
 *
 * @example
 * const fields: VerdictFields = assessTail(state, { maxRevivals: 2, running: false });
 */
export type VerdictFields = Pick<
  Assessment,
  | 'revivable'
  | 'reason'
  | 'revivalsUsed'
  | 'tail'
  | 'openDispatches'
  | 'neverDispatched'
  | 'pendingJoins'
>;

/**
 * Why the verdict folded from a transcript's last checkpoint (what `inspect` and `status` read)
 * and the verdict folded from all its records (what `revive` reads while opening it) disagree,
 * or null when they agree. A checkpoint is the state of the records before it, so a
 * disagreement means the file was changed after it was written (a forged or edited
 * checkpoint, or edited records): neither reading is trusted, and both `status` and `revive`
 * answer `unreadable` with this detail. Pure.
 *
 * @example
 * const problem = verdictDisagreement(fromCheckpoint, assessTail(session.state, context));
 * if (problem !== null) return refused('unreadable', `${path}: ${problem}`);
 */
export function verdictDisagreement(
  fromCheckpoint: VerdictFields,
  fromRecords: VerdictFields,
): string | null {
  const said = summary(explainedByRepair(fromCheckpoint, fromRecords));
  const found = summary(fromRecords);
  if (said === found) return null;
  return `its last checkpoint disagrees with the records before it (the checkpoint says: ${said}; the records say: ${found}); the file was changed after it was written, so neither is trusted`;
}

/**
 * The checkpoint's verdict with the calls a repair made while opening has since marked as
 * possibly dispatched (an interrupted repair finished by this open, its cut bytes in the
 * sidecar): such a call was never started as the checkpoint saw it, and is open now, for the
 * repair — not a lie — moved it.
 */
function explainedByRepair(
  fromCheckpoint: VerdictFields,
  fromRecords: VerdictFields,
): VerdictFields {
  const moved = new Set(
    fromRecords.openDispatches
      .filter((open) => open.possiblyDispatched === true)
      .map((open) => open.callId),
  );
  if (!fromCheckpoint.neverDispatched.some((call) => moved.has(call.callId))) {
    return fromCheckpoint;
  }
  const openIds = new Set(fromCheckpoint.openDispatches.map((open) => open.callId));
  const added = fromRecords.openDispatches.filter(
    (open) => moved.has(open.callId) && !openIds.has(open.callId),
  );
  return {
    ...fromCheckpoint,
    openDispatches: [...fromCheckpoint.openDispatches, ...added],
    neverDispatched: fromCheckpoint.neverDispatched.filter((call) => !moved.has(call.callId)),
  };
}

function summary(verdict: VerdictFields): string {
  const ids = (items: readonly { callId: string }[]) =>
    items.map((item) => JSON.stringify(String(item.callId).slice(0, 64))).join(', ');
  const state = verdict.revivable ? `revivable (${verdict.tail ?? '?'})` : (verdict.reason ?? '?');
  return `${state}, ${verdict.revivalsUsed} revival(s), open [${ids(verdict.openDispatches)}], never started [${ids(verdict.neverDispatched)}], joins [${ids(verdict.pendingJoins)}]`;
}
