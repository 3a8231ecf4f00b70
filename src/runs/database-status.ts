import { jsonText } from '../render/json-text.ts';
import { type DatabaseHold, type RunNode, stateOf } from '../render/run-node.ts';
import { assessTail } from '../revival/assess-tail.ts';
import { unreadableAnswer } from '../revival/unreadable-answer.ts';
import { verdictDisagreement } from '../revival/verdict-agreement.ts';
import type {
  PostgresStore,
  StoreRunRow,
  StoreRunSummary,
  StoreTail,
} from '../store/postgres/postgres-store.ts';
import type { CommandIo } from './command-io.ts';
import type { ExitCode } from '../render/exit-codes.ts';
import {
  type StatusNext,
  statusExitCode,
  statusJson,
  statusJsonPieces,
  statusText,
  summarize,
} from '../render/format-status.ts';
import type { InspectionView as Inspection } from './inspection.ts';
import { StatusJsonStream, statusJsonPart } from '../render/status-json-parts.ts';
import { ChunkedText } from './chunked-text.ts';

/**
 * A run of the PostgreSQL store as `status --database` shows it: `running` (a worker holds it,
 * its lease current), `dead` (held, lease expired: its worker died and no supervisor has acted
 * yet), or how it waits or ended (`queued`, `open`, `finished`, `failed`, `stopped`,
 * `awaiting-approval`, `approved`, `capped`, `unreadable`: a worker could not read it and
 * parked it for a person).
 *
 * @example
 * const state = databaseRunState(row); // 'awaiting-approval'
 */
export function databaseRunState(row: StoreRunRow): string {
  if (row.owner === null) return row.status;
  return row.leaseExpired ? 'dead' : 'running';
}

/**
 * `status --database`: every run of the store in the shape of `status` on files — the tree
 * (children under the run that spawned them), each run's state, why, revivals, open calls,
 * size and token estimate, decided from its records exactly as on files — plus the worker
 * holding it and its lease. A run a worker holds is `running`; one whose lease expired (its
 * worker died) is revivable, as is one parked `awaiting-approval`; `queued` is not taken yet.
 * Exit codes as on files.
 *
 * @example
 * return await databaseStatus(io, store, { json: false, width: 80, maxRevivals: 3 });
 */
export async function databaseStatus(
  io: CommandIo,
  store: PostgresStore,
  options: {
    json: boolean;
    width: number;
    wide: boolean;
    maxRevivals: number;
    verify?: boolean;
    next?: StatusNext;
  },
): Promise<ExitCode> {
  const tty = (io.stdout as { isTTY?: boolean }).isTTY === true;
  if (options.json && !tty && options.verify !== true) {
    // For a program: on one line, made as the rows arrive (100,000 runs are 48 MB).
    return await writeDatabaseStatusJson(io.stdout, store, options.maxRevivals);
  }
  const roots = await databaseTree(store, options);
  const exitCode = statusExitCode(summarize(roots));
  if (options.json) {
    // For a person, indented; with --verify to a program, on one line and in pieces.
    if (tty) {
      io.stdout.write(`${jsonText(statusJson(roots, options.maxRevivals), io.stdout)}\n`);
    } else {
      for (const piece of statusJsonPieces(roots, options.maxRevivals)) io.stdout.write(piece);
      io.stdout.write('\n');
    }
    return exitCode;
  }
  io.stdout.write(
    statusText(
      roots,
      io.out,
      { width: options.width, wide: options.wide },
      { ...options.next, database: true },
    ),
  );
  return exitCode;
}

/**
 * `status --database --json` on one line (to a pipe or a file): the text of
 * {@link statusJson} for {@link databaseTree}'s tree, made as the rows arrive — each run
 * decided from its summary and turned into its own line of JSON, each tree at the top made
 * into bytes once all its runs have come — so that 100,000 runs are never held at once as
 * objects or strings (they were most of its garbage collection), only as the bytes of the
 * answer; those are written once every row has been read, so a read that fails writes
 * nothing. A run without a summary is folded from its records after the rows, as in
 * {@link databaseTree}; the trees from its own on wait for it.
 *
 * @example
 * const exitCode = await writeDatabaseStatusJson(io.stdout, store, 3);
 */
export async function writeDatabaseStatusJson(
  out: NodeJS.WritableStream,
  store: PostgresStore,
  maxRevivals: number,
): Promise<ExitCode> {
  const text = new ChunkedText();
  const stream = new StatusJsonStream((piece) => text.write(piece), maxRevivals);
  const unsummarised: StoreRunSummary[] = [];
  await store.eachSummary((row) => {
    if (row.summary === null) unsummarised.push(row);
    const part =
      row.summary === null
        ? null
        : statusJsonPart(runNode(row, { ok: true, state: row.summary }, maxRevivals));
    stream.add(row.run, row.parent, row.children, part);
  });
  if (unsummarised.length > 0) {
    const tails = await store.tails(unsummarised.map((row) => row.run));
    for (const row of unsummarised) {
      stream.decided(row.run, statusJsonPart(runNode(row, tails.get(row.run), maxRevivals)));
    }
  }
  const summary = stream.end();
  text.write('\n');
  text.writeTo(out);
  return statusExitCode(summary);
}

/**
 * Every run of the store as a tree of {@link RunNode}s, as `status --database` shows it and
 * `llm-agent ui --database` draws it: children under the run that spawned them (a run whose
 * parent is not in the store is a root), each run's state decided from its records (from its
 * last checkpoint on; every record with `verify`) and its row (who holds it, its lease).
 *
 * @example
 * const roots = await databaseTree(store, { maxRevivals: 3 });
 */
export async function databaseTree(
  store: PostgresStore,
  options: { maxRevivals: number; verify?: boolean },
): Promise<RunNode[]> {
  const rows = await store.summaries();
  const tails =
    options.verify === true
      ? await verifiedTails(store, rows, await store.tails(), options.maxRevivals)
      : await summaryTails(store, rows);
  const nodes = new Map<string, RunNode>();
  for (const row of rows) nodes.set(row.run, runNode(row, tails.get(row.run), options.maxRevivals));
  const roots: RunNode[] = [];
  for (const row of rows) {
    const node = nodes.get(row.run) as RunNode;
    const parent = row.parent === null ? undefined : nodes.get(row.parent);
    if (parent === undefined) roots.push(node);
    else parent.children.push(node);
  }
  return roots;
}

/**
 * Each run's state from its summary (kept with every append); a run without one (not written
 * since the schema had summaries) folded from its last checkpoint on.
 */
async function summaryTails(
  store: PostgresStore,
  rows: readonly StoreRunSummary[],
): Promise<Map<string, StoreTail>> {
  const tails = new Map<string, StoreTail>();
  const unsummarised: string[] = [];
  for (const row of rows) {
    if (row.summary === null) unsummarised.push(row.run);
    else tails.set(row.run, { ok: true, state: row.summary });
  }
  if (unsummarised.length > 0) {
    for (const [run, tail] of await store.tails(unsummarised)) tails.set(run, tail);
  }
  return tails;
}

/**
 * `--verify`: each run's every record read and checked (the store's full read), its state
 * folded from the first; a run whose last checkpoint or summary says otherwise than its
 * records is unreadable, as on files.
 */
async function verifiedTails(
  store: PostgresStore,
  rows: readonly StoreRunSummary[],
  fromCheckpoints: ReadonlyMap<string, StoreTail>,
  maxRevivals: number,
): Promise<Map<string, StoreTail>> {
  const verified = new Map<string, StoreTail>();
  const context = { maxRevivals, running: false };
  for (const row of rows) {
    // Folded from the first record, each counted by its stored line (the token estimate).
    const read = await store.readState(row.run);
    if (!read.ok) {
      verified.set(row.run, { ok: false, detail: read.detail });
      continue;
    }
    const state = read.state;
    const folded = assessTail(state, context);
    const saved = fromCheckpoints.get(row.run);
    const fromCheckpoint =
      saved?.ok === true ? verdictDisagreement(assessTail(saved.state, context), folded) : null;
    const fromSummary =
      row.summary !== null && verdictDisagreement(assessTail(row.summary, context), folded) !== null
        ? 'its summary (the runs row) says otherwise than its records; the row was changed after it was written, so it is not trusted'
        : null;
    const problem = fromCheckpoint ?? fromSummary;
    verified.set(
      row.run,
      problem === null ? { ok: true, state } : { ok: false, detail: `${row.run}: ${problem}` },
    );
  }
  return verified;
}

/** One store run as the status tree shows it. */
function runNode(row: StoreRunRow, tail: StoreTail | undefined, maxRevivals: number): RunNode {
  const database: DatabaseHold = {
    owner: row.owner,
    epoch: row.epoch,
    leaseExpires: row.leaseExpires,
    leaseExpired: row.leaseExpired,
    status: row.status,
  };
  const path = row.run;
  let inspection: Inspection;
  if (tail === undefined || !tail.ok || row.status === 'unreadable') {
    // A run parked unreadable may fold well from its last checkpoint: the worker read further.
    const detail = tail?.ok === false ? tail.detail : (row.detail ?? `${path}: no records`);
    inspection = { ...unreadableAnswer(path, maxRevivals, detail), bytes: row.bytes };
  } else {
    const held = row.owner !== null && !row.leaseExpired;
    // A queued run is not revived: a worker takes it as it is.
    const queued = row.owner === null && row.status === 'queued';
    const context: Parameters<typeof assessTail>[1] = { maxRevivals, running: held || queued };
    if (held) {
      context.runningDetail = `worker ${row.owner} holds it (epoch ${row.epoch}, lease until ${row.leaseExpires ?? '?'})`;
    } else if (queued) {
      context.runningDetail = 'queued: no worker has taken it yet';
    }
    inspection = { path, bytes: row.bytes, ...assessTail(tail.state, context) };
    if (inspection.detail !== undefined) inspection.detail = `${path}: ${inspection.detail}`;
  }
  const queued = row.owner === null && row.status === 'queued' && inspection.reason === 'running';
  return {
    path,
    displayPath: path,
    state: queued ? 'queued' : stateOf(inspection),
    inspection,
    children: [],
    database,
  };
}
