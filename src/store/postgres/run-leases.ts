import { TranscriptError } from '../../transcript/transcript-error.ts';
import type { PostgresTranscriptWriter } from './postgres-writer.ts';
import { foldRunLines, readRun } from './run-records.ts';
import { SQL } from './sql.ts';
import { runPath, type StoreContext, writerFor } from './store-context.ts';

/** What a claim returns: the new epoch and the run's last seq. */
type Claimed = { epoch: string; last_seq: string };

/**
 * Take the run over — a new epoch, a fresh lease — when nobody holds it, then read and check
 * every record: its writer. Refused while another writer holds it (`locked`).
 *
 * @example
 * const writer = await claimRun(context, 'main');
 */
export async function claimRun(
  context: StoreContext,
  run: string,
): Promise<PostgresTranscriptWriter> {
  const path = runPath(context, run);
  const claimed = await context.pool.query<Claimed>(SQL.CLAIM(context.schema), [
    run,
    context.owner,
    context.leaseMs,
  ]);
  return openedWriter(context, run, path, claimed.rows[0]);
}

/**
 * Take a run over only while it is still the work it was listed as (`dead`, or unowned and
 * `queued` or `approved`); null when it is not any more. See {@link PostgresStore.take}.
 *
 * @example
 * const writer = await takeRun(context, 'report-42', 'queued');
 */
export async function takeRun(
  context: StoreContext,
  run: string,
  kind: 'dead' | 'queued' | 'approved',
): Promise<PostgresTranscriptWriter | null> {
  const path = runPath(context, run);
  const taken = await context.pool.query<Claimed>(SQL.TAKE(context.schema), [
    run,
    context.owner,
    context.leaseMs,
    kind,
  ]);
  const row = taken.rows[0];
  if (row === undefined) return null;
  try {
    return await openedWriter(context, run, path, row);
  } catch (error) {
    // Taken, but it cannot be read: left held, its lease would run out and every worker
    // would take it again at every lease. A person decides what becomes of it.
    if (TranscriptError.isInstance(error) && error.code === 'unreadable') {
      await parkUnreadableRun(context, run, Number(row.epoch), error.message);
    } else if (kind !== 'dead') {
      // The database failed while reading it (a cut connection): nothing of it ran, so it goes
      // back to what it was, as it was. Should that fail too, its lease runs out and it is
      // revived as a run whose worker died. A dead run stays held: its lease runs out again.
      await context.pool
        .query(SQL.GIVE_BACK(context.schema), [run, Number(row.epoch), kind])
        .catch(() => undefined);
    }
    throw error;
  }
}

/**
 * Let go of a run its taker (at `epoch`) found it cannot read, parked for a person: unowned,
 * `unreadable`, with why (`detail`). No worker takes it again. True when the epoch was current.
 *
 * @example
 * await parkUnreadableRun(context, 'report-42', 7, 'record 7: checksum mismatch');
 */
export async function parkUnreadableRun(
  context: StoreContext,
  run: string,
  epoch: number,
  detail: string,
): Promise<boolean> {
  const parked = await context.pool.query(SQL.PARK_UNREADABLE(context.schema), [
    run,
    epoch,
    detail,
  ]);
  return parked.rowCount === 1;
}

/**
 * Fence a dead run without reviving it and leave it waiting as `status`; true for the one
 * caller that parked it.
 *
 * @example
 * if (await parkRun(context, 'report-42', 'awaiting-approval')) console.log('parked');
 */
export async function parkRun(
  context: StoreContext,
  run: string,
  status: 'awaiting-approval' | 'capped',
): Promise<boolean> {
  const parked = await context.pool.query(SQL.PARK(context.schema), [run, status]);
  return parked.rowCount === 1;
}

/**
 * Move an unowned run from the waiting status `from` to `to`; true when it was in `from`.
 *
 * @example
 * await markRun(context, 'report-42', 'awaiting-approval', 'approved');
 */
export async function markRun(
  context: StoreContext,
  run: string,
  from: string,
  to: string,
): Promise<boolean> {
  const marked = await context.pool.query(SQL.MARK(context.schema), [run, to, from]);
  return marked.rowCount === 1;
}

/** The writer of a run just claimed (`row`), its records read and checked; or why not. */
async function openedWriter(
  context: StoreContext,
  run: string,
  path: string,
  row: Claimed | undefined,
): Promise<PostgresTranscriptWriter> {
  if (row === undefined) {
    const holder = await context.pool.query<{ owner: string | null; lease_expires: Date | null }>(
      SQL.HOLDER(context.schema),
      [run],
    );
    const held = holder.rows[0];
    if (held === undefined) throw new TranscriptError('unreadable', path, `${path}: no such run`);
    throw new TranscriptError(
      'locked',
      path,
      `${path}: another writer holds this run (${held.owner ?? 'unknown'}, lease until ${held.lease_expires?.toISOString() ?? '?'})`,
    );
  }
  const epoch = Number(row.epoch);
  const lastSeq = Number(row.last_seq);
  const found = await readRun(context, run);
  if (!found.ok && found.reason === 'io-error') {
    // The database failed, not the run: never a reason to park it as unreadable.
    throw new TranscriptError('io', path, found.detail);
  }
  if (!found.ok || found.records.length !== lastSeq + 1) {
    const detail = found.ok
      ? `${path}: the run says its last seq is ${lastSeq} but holds ${found.records.length} records`
      : found.detail;
    throw new TranscriptError('unreadable', path, detail);
  }
  return writerFor(context, run, epoch, lastSeq, foldRunLines(found));
}
