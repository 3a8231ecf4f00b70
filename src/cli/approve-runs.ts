import { createInterface } from 'node:readline/promises';
import { assessTail } from '../revival/assess-tail.ts';
import type { PostgresStore } from '../store/postgres/postgres-store.ts';
import { emptyTailState, foldTailState } from '../transcript/tail-state.ts';
import type { CommandIo } from './command.ts';
import { databaseRunState } from './database-status.ts';
import { EXIT, type ExitCode } from './exit-codes.ts';
import { formatCount, plural } from './format-status.ts';
import { terminalSafe as safe } from './terminal-safe.ts';
import { UserError } from './user-error.ts';

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
  const rows = new Map((await store.runs()).map((row) => [row.run, row]));
  const approvable: string[] = [];
  let tokens = 0;
  const lines: string[] = [io.out.bold('Plan:')];
  for (const run of runs) {
    const row = rows.get(run);
    if (row === undefined)
      throw new UserError(`revive: no run named ${JSON.stringify(run)} in the database`);
    const state = databaseRunState(row);
    if (state !== 'awaiting-approval') {
      lines.push(`  ${safe(run)}: ${state} — nothing to approve`);
      continue;
    }
    const read = await store.read(run);
    if (!read.ok) {
      lines.push(`  ${safe(run)}: unreadable — ${safe(read.detail)}`);
      continue;
    }
    let folded = emptyTailState();
    for (const record of read.records) folded = foldTailState(folded, record, 0);
    const assessment = assessTail(folded, { maxRevivals: options.maxRevivals, running: false });
    if (!assessment.revivable) {
      lines.push(`  ${safe(run)}: ${assessment.reason} — ${safe(assessment.detail ?? '')}`);
      continue;
    }
    const estimate = Math.ceil(
      read.records.reduce(
        (sum, record) => sum + (record.type === 'message' ? JSON.stringify(record).length : 0),
        0,
      ) / 4,
    );
    tokens += estimate;
    approvable.push(run);
    lines.push(`  ${approvable.length}. revive ${io.out.bold(safe(run))} (its worker died)`);
    for (const call of assessment.openDispatches) {
      lines.push(
        `       answer ${safe(call.toolName)} ${io.out.dim(safe(call.callId))} (${safe(call.idempotency)}) as interrupted, outcome unknown — NOT retried`,
      );
    }
    lines.push(
      `       tell it it was resumed, count revival ${assessment.revivalsUsed + 1} of ${options.maxRevivals}, run it: about ${formatCount(estimate)} tokens`,
    );
  }
  io.stdout.write(`${lines.join('\n')}\n`);
  if (approvable.length === 0) {
    io.stdout.write('Nothing to approve.\n');
    return EXIT.ok;
  }
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
        ? `Approved ${safe(run)}: a worker revives it (llm-agent worker --database URL).\n`
        : `${safe(run)}: no longer awaiting approval; left as it is.\n`,
    );
  }
  return EXIT.ok;
}
