import { assessTail } from '../revival/assess-tail.ts';
import { unreadableInspection } from '../revival/inspect.ts';
import type { PostgresStore, StoreRunRow, StoreTail } from '../store/postgres/postgres-store.ts';
import type { CommandIo } from './command.ts';
import type { ExitCode } from './exit-codes.ts';
import { statusExitCode, statusJson, statusText, summarize } from './format-status.ts';
import type { InspectionView as Inspection } from './inspection.ts';
import { jsonText } from './json-text.ts';
import { type DatabaseHold, type RunNode, stateOf } from './run-tree.ts';

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
  options: { json: boolean; width: number; wide: boolean; maxRevivals: number },
): Promise<ExitCode> {
  const [rows, tails] = await Promise.all([store.runs(), store.tails()]);
  const nodes = new Map<string, RunNode>();
  for (const row of rows) nodes.set(row.run, runNode(row, tails.get(row.run), options.maxRevivals));
  const roots: RunNode[] = [];
  for (const row of rows) {
    const node = nodes.get(row.run) as RunNode;
    const parent = row.parent === null ? undefined : nodes.get(row.parent);
    if (parent === undefined) roots.push(node);
    else parent.children.push(node);
  }
  const exitCode = statusExitCode(summarize(roots));
  if (options.json) {
    const json = { ...statusJson(roots, options.maxRevivals), exitCode };
    io.stdout.write(`${jsonText(json, io.stdout)}\n`);
    return exitCode;
  }
  io.stdout.write(
    statusText(roots, io.out, { width: options.width, wide: options.wide }, { database: true }),
  );
  return exitCode;
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
  if (tail === undefined || !tail.ok) {
    inspection = {
      ...unreadableInspection(path, maxRevivals, tail?.detail ?? `${path}: no records`),
      bytes: row.bytes,
    };
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
