import { randomBytes as cryptoRandomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { link, lstat, mkdtemp, open, rm, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { describeError } from '../transcript/transcript-error.ts';
import { type ProcessTable, readProcessTable } from './process-table.ts';
import {
  type OpencodePlan,
  type OpencodeRows,
  PART_UPDATED_EVENT,
  planOpencode,
} from './opencode-plan.ts';
import type { RepairOptions, RepairOutcome, RepairRefusal } from './repair-session.ts';

/** The first 16 bytes of every SQLite database file. */
const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/**
 * Whether the file at `path` starts as an SQLite database does (read without following a
 * symbolic link at the path). False for anything unreadable.
 *
 * @example
 * if (await isSqliteFile('~/.local/share/opencode/opencode.db')) console.log('a database');
 */
export async function isSqliteFile(path: string): Promise<boolean> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    // Non-blocking: a FIFO at the path must not hold the repair; only a regular file is read.
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    if (!(await handle.stat()).isFile()) return false;
    const header = Buffer.alloc(16);
    const { bytesRead } = await handle.read(header, 0, 16, 0);
    return bytesRead === 16 && header.equals(SQLITE_HEADER);
  } catch {
    return false;
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/**
 * Repair an opencode database (`opencode.db`) that a killed opencode left with tool calls
 * `pending` or `running`: each such part is set to the `error` state opencode writes for a
 * failed tool, with the interrupted text, and the change is recorded as the session's next
 * `message.part.updated.1` event, all in one transaction. First a consistent copy of the
 * database (SQLite's backup API, which reads committed pages, WAL included) is written to
 * `opencode.db.bak-<time>`, created exclusively. Refused, writing nothing: a database open in
 * another process (opencode keeps its database open while it runs) unless `force` (the
 * outcome's `forced` then says what it risks), one locked by a writer, a schema or opencode
 * version the repair was not tested with, a part of a shape it does not know. A dry run gives
 * the verdict a repair would. Needs Node's `node:sqlite` with `backup` (Node 22.16 or later); on
 * an older Node it refuses, saying so. Never throws.
 *
 * @example
 * const outcome = await repairOpencodeDatabase('/home/me/.local/share/opencode/opencode.db', { dryRun: true });
 * if (outcome.status === 'planned') console.log(outcome.calls.length, 'calls');
 */
export async function repairOpencodeDatabase(
  path: string,
  options: RepairOptions = {},
): Promise<RepairOutcome> {
  const refused = (reason: RepairRefusal, detail: string, plan?: OpencodePlan): RepairOutcome => {
    const outcome: RepairOutcome = {
      path,
      status: 'refused',
      reason,
      detail: `${path}: ${detail}`,
    };
    if (plan?.detection !== undefined) outcome.detection = plan.detection;
    return outcome;
  };
  let sqlite: typeof import('node:sqlite');
  try {
    sqlite = await import('node:sqlite');
    if (typeof sqlite.backup !== 'function') throw new Error('no backup()');
  } catch {
    return refused(
      'io-error',
      `repairing an opencode database needs node:sqlite with backup() (Node 22.16 or later); this is Node ${process.versions.node}`,
    );
  }
  // Checked for a dry run too (and so for --scan): it must give the verdict a repair would.
  const holders = await databaseHolders(path, options.processTable ?? readProcessTable);
  if (holders !== null && options.force !== true) {
    return refused(
      'live',
      `${holders}; stop opencode first (or wait for its tool to finish) and repair again; --force repairs it anyway, and opencode may then overwrite the repair or stop on it`,
    );
  }
  const forced =
    holders === null
      ? {}
      : {
          forced: `Repaired anyway (--force) while ${holders}: if opencode still runs, it may overwrite the repair or stop on it, and a call still running may finish after our answer`,
        };
  let db: DatabaseSync | undefined;
  try {
    db = new sqlite.DatabaseSync(path, { readOnly: options.dryRun === true, timeout: 0 });
    const now = (options.clock ?? (() => new Date()))();
    const context = {
      now,
      randomBytes: options.randomBytes ?? ((count: number) => cryptoRandomBytes(count)),
    };
    if (options.dryRun === true) {
      const planned = dryRun(path, planOpencode(readRows(db), context), refused);
      return planned.status === 'planned' ? { ...planned, ...forced } : planned;
    }
    try {
      db.exec('BEGIN IMMEDIATE');
    } catch (error) {
      return refused(
        'live',
        `another connection is writing the database (${describeError(error)})`,
      );
    }
    let committed = false;
    try {
      const plan = planOpencode(readRows(db), context);
      if (plan.kind === 'refuse' || plan.kind === 'clean')
        return nothingToWrite(path, plan, refused);
      const backup = await backUp(sqlite, path, now);
      write(db, plan, now.getTime());
      db.exec('COMMIT');
      committed = true;
      return {
        path,
        status: 'repaired',
        detection: plan.detection,
        calls: plan.calls,
        appended: plan.updates.length,
        backup,
        skipped: [],
        ...forced,
      };
    } finally {
      if (!committed) db.exec('ROLLBACK');
    }
  } catch (error) {
    return refused('io-error', describeError(error));
  } finally {
    db?.close();
  }
}

/** The outcome of a plan that writes nothing: a refusal (its version or its shape), or clean. */
function nothingToWrite(
  path: string,
  plan: Extract<OpencodePlan, { kind: 'refuse' | 'clean' }>,
  refused: (reason: RepairRefusal, detail: string, plan?: OpencodePlan) => RepairOutcome,
): RepairOutcome {
  if (plan.kind === 'refuse') {
    return refused(
      plan.detection?.supported === false ? 'unsupported-version' : 'shape',
      plan.detail,
      plan,
    );
  }
  return {
    path,
    status: 'clean',
    detection: plan.detection,
    detail: plan.detail,
    tornBytes: 0,
    skipped: [],
  };
}

function dryRun(
  path: string,
  plan: OpencodePlan,
  refused: (reason: RepairRefusal, detail: string, plan?: OpencodePlan) => RepairOutcome,
): RepairOutcome {
  if (plan.kind === 'refuse' || plan.kind === 'clean') return nothingToWrite(path, plan, refused);
  return {
    path,
    status: 'planned',
    detection: plan.detection,
    calls: plan.calls,
    append: plan.updates.map((update) => update.event),
    tornBytes: 0,
    skipped: [],
  };
}

/** Which processes have the database or its WAL files open, or null when none (or no /proc). */
async function databaseHolders(
  path: string,
  processTable: () => Promise<ProcessTable>,
): Promise<string | null> {
  const targets: { name: string; dev: number; ino: number }[] = [];
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    const found = await stat(file).catch(() => null);
    if (found !== null) targets.push({ name: basename(file), dev: found.dev, ino: found.ino });
  }
  const table = await processTable();
  const holders: string[] = [];
  for (const entry of table.processes) {
    const held = targets.filter((target) =>
      entry.descriptors.some((open) => open.dev === target.dev && open.ino === target.ino),
    );
    if (held.length > 0) {
      holders.push(
        `pid ${entry.pid} ${entry.command} has ${held.map((target) => target.name).join(', ')} open`,
      );
    }
  }
  if (!table.complete) holders.push('not every process could be checked within the time allowed');
  return holders.length === 0 ? null : holders.join('; ');
}

/** The rows the plan needs, read inside the caller's transaction. */
function readRows(db: DatabaseSync): OpencodeRows {
  const tables = new Set(
    db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
      .all()
      .map((row) => String(row.name)),
  );
  for (const table of ['migration', 'session', 'message', 'part', 'event', 'event_sequence']) {
    if (!tables.has(table)) throw new Error(`the database has no ${table} table: not opencode's`);
  }
  const strings = (sql: string) =>
    db
      .prepare(sql)
      .all()
      .map((row) => String(Object.values(row)[0]));
  return {
    migrations: strings('SELECT id FROM migration'),
    sessions: db
      .prepare('SELECT id, version FROM session')
      .all()
      .map((row) => ({ id: String(row.id), version: String(row.version) })),
    parts: db
      .prepare(
        `SELECT id, message_id, session_id, data FROM part
         WHERE json_valid(data) AND json_extract(data, '$.type') = 'tool'
           AND json_extract(data, '$.state.status') IN ('pending', 'running')
         ORDER BY session_id, message_id, id`,
      )
      .all()
      .map((row) => ({
        id: String(row.id),
        messageId: String(row.message_id),
        sessionId: String(row.session_id),
        data: String(row.data),
      })),
    sequences: db
      .prepare('SELECT aggregate_id, seq FROM event_sequence')
      .all()
      .map((row) => ({ aggregateId: String(row.aggregate_id), seq: Number(row.seq) })),
    nextModel: tables.has('session_message')
      ? strings('SELECT DISTINCT session_id FROM session_message')
      : [],
  };
}

/** The plan's updates, events and sequence numbers, inside the caller's transaction. */
function write(
  db: DatabaseSync,
  plan: Extract<OpencodePlan, { kind: 'repair' }>,
  time: number,
): void {
  const part = db.prepare('UPDATE part SET data = ?, time_updated = ? WHERE id = ?');
  const event = db.prepare(
    'INSERT INTO event (id, aggregate_id, seq, type, data) VALUES (?, ?, ?, ?, ?)',
  );
  for (const update of plan.updates) {
    const changed = part.run(update.data, time, update.partId);
    if (Number(changed.changes) !== 1) throw new Error(`part ${update.partId} was not updated`);
    event.run(update.eventId, update.sessionId, update.seq, PART_UPDATED_EVENT, update.event);
  }
  const sequence = db.prepare(
    `INSERT INTO event_sequence (aggregate_id, seq) VALUES (?, ?)
     ON CONFLICT (aggregate_id) DO UPDATE SET seq = excluded.seq`,
  );
  for (const [aggregate, seq] of plan.sequences) sequence.run(aggregate, seq);
}

/**
 * A consistent copy of the database at `path.bak-<time>`, through SQLite's backup API on a
 * connection of its own (the caller's holds the write lock, so the copy is the state the repair
 * starts from). SQLite writes the copy in a fresh private folder; it is then linked to its name
 * (never replacing a file there, never through a link) and synced.
 */
async function backUp(
  sqlite: typeof import('node:sqlite'),
  path: string,
  now: Date,
): Promise<string> {
  const backup = `${path}.bak-${now.toISOString().replace(/[:.]/g, '-')}`;
  const folder = await mkdtemp(join(dirname(path), `.${basename(path)}.backup-`));
  try {
    const staged = join(folder, 'copy.db');
    const source = new sqlite.DatabaseSync(path, { readOnly: true, timeout: 5000 });
    try {
      await sqlite.backup(source, staged);
    } finally {
      source.close();
    }
    const handle = await open(staged, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    await link(staged, backup);
    await unlink(staged);
    const there = await lstat(backup);
    if (!there.isFile()) throw new Error(`${backup} is not the backup just written`);
    const parent = await open(dirname(path), constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      await parent.sync();
    } finally {
      await parent.close();
    }
    return backup;
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
