import { createInterface } from 'node:readline/promises';
import { assessTail } from '../revival/assess-tail.ts';
import type { PostgresStore } from '../store/postgres/postgres-store.ts';
import type { CommandIo } from './command-io.ts';
import { databaseRunState } from './database-status.ts';
import { EXIT, type ExitCode } from '../render/exit-codes.ts';
import { formatCount, plural } from '../render/format-status.ts';
import { terminalSafe as safe } from '../render/terminal-safe.ts';
import type { Style } from '../render/terminal-style.ts';
import { UserError } from './user-error.ts';
import { idempotencyLabel } from '../render/idempotency-label.ts';

/**
 * `revive --database URL RUN…`: a person's approval of runs a supervisor parked
 * `awaiting-approval`. Shows what reviving each will do — the calls that will be answered as
 * interrupted (never retried), the revival against the cap, the token estimate — asks (or
 * `--yes`), and marks them `approved`; a worker then revives each exactly once. Nothing is
 * approved without the answer.
 *
 * @example
 * return await approveRuns(io, store, ['report-42'], { yes: false, maxRevivals: 3 });
 */
export async function approveRuns(
  io: CommandIo,
  store: PostgresStore,
  runs: string[],
  options: { yes: boolean; maxRevivals: number },
): Promise<ExitCode> {
  const { approvable, tokens, text } = await planApproval(store, runs, {
    maxRevivals: options.maxRevivals,
    style: io.out,
  });
  io.stdout.write(text);
  if (approvable.length === 0) return EXIT.ok;
  if (!options.yes) {
    if (io.stdin.isTTY !== true) {
      throw new UserError(
        'revive: stdin is not a terminal, so nobody can confirm: pass --yes to approve without asking (nothing was approved)',
      );
    }
    const reader = createInterface({ input: io.stdin, output: io.stderr });
    const answer = await reader
      .question(
        `Approve ${plural(approvable.length, 'run')}, sending about ${formatCount(tokens)} tokens? [y/N] `,
      )
      .finally(() => reader.close());
    if (!/^\s*y(es)?\s*$/i.test(answer)) return EXIT.declined;
  }
  for (const run of approvable) {
    const marked = await store.mark(run, 'awaiting-approval', 'approved');
    io.stdout.write(
      marked
        ? `Approved ${safe(run)}: the next worker of this store to look revives it.\n`
        : `${safe(run)}: no longer awaiting approval; left as it is.\n`,
    );
  }
  return EXIT.ok;
}

/**
 * What approving some runs will do, as `revive --database URL RUN…` prints it before asking.
 *
 * @example
 * const plan: ApprovalPlan = await planApproval(store, ['report-42'], { maxRevivals: 3, style });
 */
export interface ApprovalPlan {
  /** The runs that approving marks `approved`, in the order given. */
  approvable: string[];
  /** About how many tokens reviving them sends. */
  tokens: number;
  /**
   * The plan: each run with what reviving it does (the calls answered as interrupted, the
   * revival against the cap, the token estimate) or why it is not approvable; then
   * `Nothing to approve.` when no run is.
   */
  text: string;
}

/**
 * The plan of approving `runs` (names of the store's runs; one the store does not hold is a
 * {@link UserError}): each run parked `awaiting-approval` whose records can be read and that
 * is revivable (under its cap) is approvable. Reads only; `revive --database` and
 * `llm-agent ui --database` both show it. Names, tool names and details come from the
 * records: each is made safe for a terminal before `style` colours it.
 *
 * @example
 * const plan = await planApproval(store, ['report-42'], { maxRevivals: 3, style: createStyle(false) });
 * process.stdout.write(plan.text);
 */
export async function planApproval(
  store: PostgresStore,
  runs: readonly string[],
  options: { maxRevivals: number; style: Style },
): Promise<ApprovalPlan> {
  const { maxRevivals, style } = options;
  const rows = new Map((await store.runs()).map((row) => [row.run, row]));
  const approvable: string[] = [];
  let tokens = 0;
  // No heading over no runs: the page of a store where nothing waits says only that.
  const lines: string[] = runs.length === 0 ? [] : [style.bold('Plan:')];
  for (const run of runs) {
    const row = rows.get(run);
    if (row === undefined)
      throw new UserError(`revive: no run named ${JSON.stringify(run)} in the database`);
    const state = databaseRunState(row);
    if (state !== 'awaiting-approval') {
      lines.push(`  ${safe(run)}: ${state} — nothing to approve`);
      continue;
    }
    // Every record read and checked; the estimate counted from the stored lines, as `status
    // --database` counts it, so that the tree and the plan say the same number.
    const read = await store.readState(run);
    if (!read.ok) {
      lines.push(`  ${safe(run)}: unreadable — ${safe(read.detail)}`);
      continue;
    }
    const assessment = assessTail(read.state, { maxRevivals, running: false });
    if (!assessment.revivable) {
      lines.push(`  ${safe(run)}: ${assessment.reason} — ${safe(assessment.detail ?? '')}`);
      continue;
    }
    const estimate = assessment.estimatedTokens;
    tokens += estimate;
    approvable.push(run);
    lines.push(`  ${approvable.length}. revive ${style.bold(safe(run))} (its worker died)`);
    // A join the process died in is no call to interrupt: the revived run waits on, and is
    // answered by, its children's ends (as `revive` on files says it).
    const joins = new Map(assessment.pendingJoins.map((join) => [join.callId, join.agentIds]));
    for (const call of assessment.openDispatches) {
      const children = joins.get(call.callId);
      if (children !== undefined) {
        lines.push(
          `       keep ${safe(call.toolName)} ${style.dim(safe(call.callId))} open for ${children.map((id) => safe(id)).join(', ') || 'its children'}: their ends answer it`,
        );
        continue;
      }
      // A keyed call may be settled by its tool's reconcile, which the reviving worker asks
      // (it holds the tools; this plan does not): say so rather than promise "interrupted".
      const unless =
        call.idempotencyKey === undefined
          ? ''
          : ', unless its tool has a reconcile, which the reviving worker asks first (nothing is run again)';
      lines.push(
        `       answer ${safe(call.toolName)} ${style.dim(safe(call.callId))} (${safe(idempotencyLabel(call))}) as interrupted, outcome unknown — NOT retried${unless}`,
      );
    }
    lines.push(
      `       tell it it was resumed, count revival ${assessment.revivalsUsed + 1} of ${maxRevivals}, run it: about ${formatCount(estimate)} tokens`,
    );
  }
  if (approvable.length === 0) lines.push('Nothing to approve.');
  return { approvable, tokens, text: `${lines.join('\n')}\n` };
}
