import type { QueryArrayConfig, QueryConfig } from 'pg';
import {
  emptyTailState,
  foldTailState,
  type TailState,
  tailStateFromJson,
} from '../../transcript/tail-state.ts';
import { foldRunLines, readRun } from './run-records.ts';
import { prepared, SQL } from './sql.ts';
import { pgModule, type StoreContext, withClient } from './store-context.ts';
import type { StoreRunRow, StoreRunSummary, StoreTail } from './store-run-row.ts';
import { checkStoredLine } from './stored-line.ts';

/**
 * The work waiting, oldest first and deepest first: dead runs and unowned `queued` or
 * `approved` ones.
 *
 * @example
 * const work = await waitingWork(context, 10);
 */
export async function waitingWork(
  context: StoreContext,
  limit: number,
): Promise<{ run: string; status: string; dead: boolean }[]> {
  const result = await context.pool.query<{ run_id: string; status: string; dead: boolean }>(
    SQL.WORK(context.schema),
    [limit],
  );
  return result.rows.map((row) => ({ run: row.run_id, status: row.status, dead: row.dead }));
}

/**
 * Where each of `runs` stands — who holds it, its status and depth; a run that does not exist
 * is absent.
 *
 * @example
 * const standing = await runStanding(context, ['main.agents/researcher-call_1']);
 */
export async function runStanding(
  context: StoreContext,
  runs: readonly string[],
): Promise<Map<string, { owner: string | null; status: string; depth: number }>> {
  const result = await context.pool.query<{
    run_id: string;
    owner: string | null;
    status: string;
    depth: number;
  }>(SQL.STANDING(context.schema), [runs]);
  return new Map(
    result.rows.map((row) => [
      row.run_id,
      { owner: row.owner, status: row.status, depth: row.depth },
    ]),
  );
}

/**
 * Whether a live writer holds `run` (its lease unexpired); false for a run that does not exist.
 *
 * @example
 * if (await runHeld(context, 'main.agents/researcher-call_1')) console.log('running elsewhere');
 */
export async function runHeld(context: StoreContext, run: string): Promise<boolean> {
  const result = await context.pool.query<{ held: boolean }>({
    ...prepared(SQL.HELD(context.schema)),
    values: [run],
  });
  return result.rows[0]?.held === true;
}

/**
 * How many children of `parent` have not ended.
 *
 * @example
 * const active = await activeChildCount(context, 'main');
 */
export async function activeChildCount(context: StoreContext, parent: string): Promise<number> {
  const result = await context.pool.query<{ active: number }>(SQL.ACTIVE_CHILDREN(context.schema), [
    parent,
  ]);
  return result.rows[0]?.active ?? 0;
}

/**
 * Every run with who holds it and how, sorted by name.
 *
 * @example
 * for (const row of await runRows(context)) console.log(row.run, row.status);
 */
export async function runRows(context: StoreContext): Promise<StoreRunRow[]> {
  const result = await context.pool.query<RunRowColumns>(SQL.RUNS(context.schema));
  return result.rows.map(rowOf);
}

/**
 * Every run with who holds it and its summary (the state its records fold to, or null when
 * it has none yet), sorted by name: one row per run, no record read.
 *
 * @example
 * for (const row of await runSummaries(context)) console.log(row.run, row.summary?.revivals);
 */
export async function runSummaries(context: StoreContext): Promise<StoreRunSummary[]> {
  const rows: StoreRunSummary[] = [];
  await eachRunSummary(context, (row) => {
    rows.push(row);
  });
  return rows;
}

/**
 * {@link runSummaries} one row at a time, each given to `visit` as it arrives from the server:
 * a caller that keeps less than the row (`status --database --json` keeps a tree only until it
 * is written) never holds 100,000 rows at once, and its work on a row overlaps the server's
 * sending of the next. Each row says how many children its run has, counted in the same
 * snapshot as the rows (a read-only repeatable-read transaction), so a caller knows when a
 * run's tree has all come. An error thrown by `visit` stops the visits and rejects, once the
 * query has ended.
 *
 * @example
 * await eachRunSummary(context, (row) => console.log(row.run, row.children));
 */
export async function eachRunSummary(
  context: StoreContext,
  visit: (row: StoreRunSummary) => void,
): Promise<void> {
  const { Query } = await pgModule();
  await withClient(context.pool, async (client) => {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    try {
      const counted = await client.query<{ parent_run: string; children: number }>(
        SQL.CHILD_COUNTS(context.schema),
      );
      const children = new Map(counted.rows.map((row) => [row.parent_run, row.children]));
      await new Promise<void>((resolve, reject) => {
        let failure: { error: unknown } | null = null;
        // Each row as an array of texts, converted here (no object per row and no type parser
        // per field in the driver), in the column order of SQL.SUMMARIES; not kept by the
        // driver (a Query with a row listener and no callback does not accumulate its rows).
        const config: QueryArrayConfig = {
          text: SQL.SUMMARIES(context.schema),
          rowMode: 'array',
          types: { getTypeParser: () => asText },
        };
        // The driver's types know `rowMode` on `query()`'s config only; its Query takes it too.
        const query = new Query<SummaryColumns>(config as QueryConfig);
        query.on('row', (row: SummaryColumns) => {
          if (failure !== null) return;
          try {
            visit(summaryOf(row, children.get(row[0]) ?? 0));
          } catch (error) {
            failure = { error };
          }
        });
        query.on('error', reject);
        query.on('end', () => (failure === null ? resolve() : reject(failure.error)));
        client.query(query);
      });
    } finally {
      // Read only: nothing to commit.
      await client.query('ROLLBACK').catch(() => undefined);
    }
  });
}

function summaryOf(row: SummaryColumns, children: number): StoreRunSummary {
  return {
    run: row[0],
    owner: row[1],
    epoch: Number(row[2]),
    leaseExpired: row[3] === 't',
    lastSeq: Number(row[4]),
    status: row[5],
    leaseExpires: row[6],
    revivalsUsed: Number(row[7]),
    parent: row[8],
    depth: Number(row[9]),
    bytes: Number(row[10]),
    detail: row[11],
    summary: row[12] === null ? null : tailStateFromJson(JSON.parse(row[12])),
    children,
  };
}

/** SQL.SUMMARIES's columns, each as the server's text (null for NULL). */
type SummaryColumns = [
  run: string,
  owner: string | null,
  epoch: string,
  expired: string | null,
  lastSeq: string,
  status: string,
  leaseExpires: string | null,
  revivalsUsed: string,
  parent: string | null,
  depth: string,
  bytes: string,
  detail: string | null,
  summary: string | null,
];

const asText = (value: string): string => value;

interface RunRowColumns {
  run_id: string;
  owner: string | null;
  epoch: string;
  lease_expires: string | null;
  expired: boolean | null;
  last_seq: string;
  status: string;
  revivals_used: number;
  parent_run: string | null;
  depth: number;
  bytes: string;
  status_detail: string | null;
}

function rowOf(row: RunRowColumns): StoreRunRow {
  return {
    run: row.run_id,
    owner: row.owner,
    epoch: Number(row.epoch),
    leaseExpires: row.lease_expires,
    leaseExpired: row.expired === true,
    lastSeq: Number(row.last_seq),
    status: row.status,
    revivalsUsed: row.revivals_used,
    parent: row.parent_run,
    depth: row.depth,
    bytes: Number(row.bytes),
    detail: row.status_detail ?? null,
  };
}

/**
 * Every run's state folded from its last checkpoint on, each line checked; a run whose
 * checkpoint this version cannot read is folded from its first record. See
 * {@link PostgresStore.tails}. With `only`, those runs alone.
 *
 * @example
 * const tails = await runTails(context);
 */
export async function runTails(
  context: StoreContext,
  only?: readonly string[],
): Promise<Map<string, StoreTail>> {
  const result = await context.pool.query<{ run_id: string; seq: string; line: Buffer }>(
    only === undefined ? SQL.TAILS(context.schema) : SQL.TAILS_OF(context.schema),
    only === undefined ? [] : [only],
  );
  const tails = new Map<string, StoreTail>();
  const rereads: string[] = [];
  const folds = new Map<string, TailFold>();
  for (const row of result.rows) {
    let fold = folds.get(row.run_id);
    if (fold === undefined) {
      fold = { run: row.run_id, state: null, failed: null, expected: Number(row.seq) };
      folds.set(row.run_id, fold);
    }
    if (fold.failed !== null) continue;
    if (!foldTailRow(fold, context.label, row)) rereads.push(fold.run);
  }
  for (const fold of folds.values()) tails.set(fold.run, finished(fold));
  for (const run of rereads) {
    const found = await readRun(context, run);
    tails.set(
      run,
      found.ok ? { ok: true, state: foldRunLines(found) } : { ok: false, detail: found.detail },
    );
  }
  return tails;
}

/** A run's tail being folded: from its first row (the last checkpoint, or record 0). */
interface TailFold {
  run: string;
  state: TailState | null;
  failed: string | null;
  expected: number;
}

/** The tail's first record is a checkpoint this version cannot read: fold the run whole. */
const REREAD = 'reread';

function finished(fold: TailFold): StoreTail {
  return fold.failed !== null
    ? { ok: false, detail: fold.failed }
    : { ok: true, state: fold.state ?? emptyTailState() };
}

/** Fold one row into the run's tail; false when the run must be read and folded whole. */
function foldTailRow(fold: TailFold, label: string, row: { seq: string; line: Buffer }): boolean {
  const seq = Number(row.seq);
  const checked = checkStoredLine(
    row.line,
    seq,
    fold.expected,
    `${label}#${fold.run}: record ${seq}`,
  );
  if (!checked.ok) {
    fold.failed = checked.detail;
    return true;
  }
  fold.expected += 1;
  const record = checked.record;
  if (fold.state === null && seq > 0) {
    // The first line is the last checkpoint: its state is everything before it.
    const saved =
      record.type === 'checkpoint' && 'state' in record
        ? tailStateFromJson(record.state as never)
        : null;
    if (saved === null) {
      fold.failed = REREAD;
      return false;
    }
    fold.state = saved;
  }
  fold.state = foldTailState(fold.state ?? emptyTailState(), record, row.line.length);
  return true;
}

/**
 * Every run's name, sorted.
 *
 * @example
 * const names = await runNames(context);
 */
export async function runNames(context: StoreContext): Promise<string[]> {
  const result = await context.pool.query<{ run_id: string }>(SQL.LIST_RUNS(context.schema));
  return result.rows.map((row) => row.run_id);
}
