import type { PostgresStore, StoreRunRow } from '../store/postgres/postgres-store.ts';
import type { CommandIo } from './command.ts';
import { EXIT, type ExitCode } from './exit-codes.ts';
import { fitTable, type TableCell } from './fit-table.ts';
import { jsonText } from './json-text.ts';
import { terminalSafe } from './terminal-safe.ts';

/**
 * A run of the PostgreSQL store as `status --database` shows it: `running` (a worker holds it,
 * its lease current), `dead` (held, lease expired: its worker died and no supervisor has acted
 * yet), or how it waits or ended (`queued`, `open`, `finished`, `failed`, `stopped`,
 * `awaiting-approval`, `approved`, `capped`).
 *
 * @example
 * const state = databaseRunState(row); // 'awaiting-approval'
 */
export function databaseRunState(row: StoreRunRow): string {
  if (row.owner === null) return row.status;
  return row.leaseExpired ? 'dead' : 'running';
}

/**
 * `status --database`: every run of the store with its state, owner and lease; exit 3 when a
 * person has something to decide (a run awaiting approval, or dead with nobody supervising).
 *
 * @example
 * return await databaseStatus(io, store, values.json === true);
 */
export async function databaseStatus(
  io: CommandIo,
  store: PostgresStore,
  json: boolean,
  width: number,
): Promise<ExitCode> {
  const rows = await store.runs();
  const states = rows.map(databaseRunState);
  const summary: Record<string, number> = { total: rows.length };
  for (const state of states) summary[state] = (summary[state] ?? 0) + 1;
  const exitCode =
    (summary['awaiting-approval'] ?? 0) + (summary.dead ?? 0) > 0 ? EXIT.revivable : EXIT.ok;
  if (json) {
    const runs = rows.map((row, index) => ({
      run: row.run,
      state: states[index],
      status: row.status,
      owner: row.owner,
      epoch: row.epoch,
      leaseExpires: row.leaseExpires,
      revivalsUsed: row.revivalsUsed,
      records: row.lastSeq + 1,
    }));
    io.stdout.write(`${jsonText({ runs, summary, exitCode }, io.stdout)}\n`);
    return exitCode;
  }
  if (rows.length === 0) {
    io.stdout.write('No runs in the database.\n');
    return exitCode;
  }
  const table: TableCell[][] = rows.map((row, index) => [
    { text: terminalSafe(row.run) },
    { text: states[index] as string },
    { text: terminalSafe(row.owner ?? '—') },
    { text: row.leaseExpires ?? '—' },
    { text: String(row.revivalsUsed) },
    { text: String(row.lastSeq + 1) },
  ]);
  const fitted = fitTable(
    [
      { header: 'RUN', cut: 12, comfort: 24, cutLast: true },
      { header: 'STATE' },
      { header: 'OWNER', cut: 8, comfort: 20, drop: 2 },
      { header: 'LEASE UNTIL', drop: 1, dropEarly: true },
      { header: 'REVIVALS', drop: 3 },
      { header: 'RECORDS', drop: 0, dropEarly: true },
    ],
    table,
    width,
    io.out.bold,
  );
  const counts = Object.entries(summary)
    .filter(([state]) => state !== 'total')
    .map(([state, count]) => `${count} ${state}`);
  io.stdout.write(
    `${fitted.lines.join('\n')}\n\n${rows.length} run${rows.length === 1 ? '' : 's'}: ${counts.join(', ')}.\n`,
  );
  if ((summary['awaiting-approval'] ?? 0) > 0) {
    io.stdout.write('Approve a run waiting for a person: llm-agent revive --database URL RUN\n');
  }
  return exitCode;
}
