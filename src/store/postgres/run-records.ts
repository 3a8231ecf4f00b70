import { encodeLine } from '../../transcript/line-codec.ts';
import {
  type ForeignRecord,
  recordVersion,
  type TranscriptRecord,
} from '../../transcript/records.ts';
import type { SessionMeta } from '../../transcript/session.ts';
import { describeError, TranscriptError } from '../../transcript/transcript-error.ts';
import { emptyTailState, foldTailState, type TailState } from '../../transcript/tail-state.ts';
import type { StoreRead } from '../transcript-store.ts';
import type { PostgresTranscriptWriter } from './postgres-writer.ts';
import { prepared, SQL } from './sql.ts';
import { runPath, type StoreContext, withClient, writerFor } from './store-context.ts';
import { checkStoredLine } from './stored-line.ts';

/**
 * A run's records as {@link readRun} found them, with each line's length (for the token
 * estimate of the state) — or why they cannot be read.
 *
 * @example
 * const found: RunLines = await readRun(context, 'main');
 */
export type RunLines =
  | { ok: true; records: (TranscriptRecord | ForeignRecord)[]; lengths: number[] }
  | Extract<StoreRead, { ok: false }>;

/**
 * A new run at epoch 1, owned by the store's owner, with its `session-meta`, in one
 * transaction; `parent` makes it that run's child. A run of that name is refused (`exists`).
 *
 * @example
 * const writer = await createRun(context, 'main', meta, null);
 */
export async function createRun(
  context: StoreContext,
  run: string,
  meta: SessionMeta,
  parent: string | null,
): Promise<PostgresTranscriptWriter> {
  const path = runPath(context, run);
  const body = { type: 'session-meta' as const, ...meta };
  const line = encodeLine(
    { v: recordVersion(body), seq: 0, at: context.clock().toISOString() },
    body,
  );
  const state = foldTailState(emptyTailState(), line.record, line.bytes.length);
  const created = await withClient(context.pool, async (client) => {
    await client.query('BEGIN');
    try {
      const inserted = await client.query({
        ...prepared(SQL.CREATE_RUN(context.schema)),
        values: [run, context.owner, context.leaseMs, parent],
      });
      if (inserted.rowCount === 0) {
        await client.query('ROLLBACK');
        return false;
      }
      await client.query({
        ...prepared(SQL.APPEND(context.schema)),
        values: [
          run,
          1,
          -1,
          [line.bytes],
          ['session-meta'],
          context.leaseMs,
          JSON.stringify(state),
        ],
      });
      await client.query('COMMIT');
      return true;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw new TranscriptError(
        'io',
        path,
        `${path}: cannot create the run (${describeError(error)})`,
        {
          cause: error,
        },
      );
    }
  });
  if (!created) throw new TranscriptError('exists', path, `${path}: a run of that name exists`);
  return writerFor(context, run, 1, 0, state);
}

/**
 * Every record of `run` in seq order, each line's checksum and seq checked, with its length.
 * Never throws.
 *
 * @example
 * const found = await readRun(context, 'main');
 * if (found.ok) console.log(found.records.length);
 */
export async function readRun(context: StoreContext, run: string): Promise<RunLines> {
  const path = context.label === '' ? run : `${context.label}#${run}`;
  try {
    const result = await context.pool.query<{ seq: string; line: Buffer }>(
      SQL.READ_LINES(context.schema),
      [run],
    );
    if (result.rows.length === 0) {
      const exists = await context.pool.query(SQL.RUN_EXISTS(context.schema), [run]);
      if (exists.rowCount === 0)
        return { ok: false, reason: 'missing', detail: `${path}: no such run` };
    }
    const records: (TranscriptRecord | ForeignRecord)[] = [];
    const lengths: number[] = [];
    for (const [index, row] of result.rows.entries()) {
      const seq = Number(row.seq);
      const checked = checkStoredLine(row.line, seq, index, `${path}: record ${seq}`);
      if (!checked.ok) return { ok: false, reason: 'unreadable', detail: checked.detail };
      records.push(checked.record);
      lengths.push(row.line.length);
    }
    return { ok: true, records, lengths };
  } catch (error) {
    return {
      ok: false,
      reason: 'io-error',
      detail: `${path}: cannot read (${describeError(error)})`,
    };
  }
}

/**
 * The state of records read by {@link readRun}, folded from the first.
 *
 * @example
 * const found = await readRun(context, 'main');
 * if (found.ok) console.log(foldRunLines(found).revivals);
 */
export function foldRunLines(found: Extract<RunLines, { ok: true }>): TailState {
  let state = emptyTailState();
  found.records.forEach((record, index) => {
    state = foldTailState(state, record, found.lengths[index] ?? 0);
  });
  return state;
}

/**
 * The run's lines, concatenated: a v1 transcript file, byte for byte.
 *
 * @example
 * const bytes = await exportRunBytes(context, 'main');
 */
export async function exportRunBytes(context: StoreContext, run: string): Promise<Buffer> {
  const found = await readRun(context, run);
  if (!found.ok) throw new Error(found.detail);
  const result = await context.pool.query<{ line: Buffer }>(SQL.READ_LINES(context.schema), [run]);
  return Buffer.concat(result.rows.map((row) => row.line));
}

/**
 * Start a run and leave it for a worker: its `session-meta` and the user's first turn in one
 * statement, unowned and `queued`; a child only while its parent's epoch is `parent.epoch`.
 * See {@link PostgresStore.submit}.
 *
 * @example
 * await submitRun(context, 'report-42', meta, 'Write the report.');
 */
export async function submitRun(
  context: StoreContext,
  run: string,
  meta: SessionMeta,
  prompt: string,
  parent?: { run: string; epoch: number },
): Promise<void> {
  const path = runPath(context, run);
  const at = context.clock().toISOString();
  const lines = [
    encodeLine({ v: 1, seq: 0, at }, { type: 'session-meta', ...meta }),
    encodeLine(
      { v: 1, seq: 1, at },
      { type: 'message', role: 'user', content: [{ type: 'text', text: prompt }] },
    ),
  ];
  let inserted: number;
  try {
    // One statement: a run is never there without its task, so a crash can never leave one
    // a worker would find empty.
    const result = await context.pool.query(SQL.SUBMIT(context.schema), [
      run,
      lines.map((line) => line.bytes),
      lines.map((line) => line.record.type),
      parent?.run ?? null,
      parent?.epoch ?? null,
      JSON.stringify(
        lines.reduce(
          (state, line) => foldTailState(state, line.record, line.bytes.length),
          emptyTailState(),
        ),
      ),
    ]);
    inserted = result.rowCount ?? 0;
  } catch (error) {
    throw new TranscriptError(
      'io',
      path,
      `${path}: cannot submit the run (${describeError(error)})`,
      {
        cause: error,
      },
    );
  }
  if (inserted === 0) {
    const exists = await context.pool.query(SQL.RUN_EXISTS(context.schema), [run]);
    if (exists.rowCount === 0 && parent !== undefined) {
      throw new TranscriptError(
        'ownership-lost',
        path,
        `${path}: not submitted: its parent ${parent.run} was taken over (its epoch is no longer ${parent.epoch})`,
      );
    }
    throw new TranscriptError('exists', path, `${path}: a run of that name exists`);
  }
}
