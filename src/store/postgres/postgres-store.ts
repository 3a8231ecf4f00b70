import { hostname } from 'node:os';
import type { Pool, PoolClient } from 'pg';
import { decodeLine, encodeLine } from '../../transcript/line-codec.ts';
import {
  FORMAT_VERSION,
  type ForeignRecord,
  type TranscriptRecord,
} from '../../transcript/records.ts';
import { SessionError, describeError } from '../../transcript/session-error.ts';
import type { SessionMeta } from '../../transcript/session.ts';
import {
  emptyTailState,
  foldTailState,
  type TailState,
  tailStateFromJson,
} from '../../transcript/tail-state.ts';
import type { TranscriptWriter } from '../../transcript/transcript-writer.ts';
import type { StoreRead, TranscriptStore } from '../transcript-store.ts';
import { type ImportedRun, importRun } from './import-run.ts';
import { migrate, quoteSchema, SCHEMA_VERSION, schemaVersion } from './migrations.ts';

export { SCHEMA_VERSION };
import { PostgresTranscriptWriter } from './postgres-writer.ts';
import { RunNotifications, type RunWatch } from './run-notifications.ts';
import { SQL } from './sql.ts';

/**
 * How to reach the store: the server, the schema its tables live in, who this process is, and
 * how long its leases last.
 *
 * @example
 * const options: PostgresStoreOptions = { connectionString: 'postgres://127.0.0.1/agents' };
 */
export interface PostgresStoreOptions {
  /** A libpq connection string (`postgres://user@host:5432/db`). */
  connectionString: string;
  /** The schema of the store's tables (default `llm_agent`). */
  schema?: string;
  /** This worker incarnation, as it shows in `owner` (default `host:pid:<random>`). */
  owner?: string;
  /** How long a writer's lease lasts without a barrier or heartbeat (default 30 s). */
  leaseMs?: number;
  /** Stamps each record's `at` (default: the system clock). */
  clock?: () => Date;
  /** A checkpoint after this many bytes of other records (default 32 KiB, as on files). */
  checkpointBytes?: number;
  /** Connections in the pool (default 4). */
  maxConnections?: number;
  /** How its connections show in `pg_stat_activity` (default `llm-agent`). */
  applicationName?: string;
}

/**
 * One run as the `runs` table holds it.
 *
 * @example
 * const row: StoreRunRow = (await store.runs())[0];
 */
export interface StoreRunRow {
  run: string;
  /** The worker holding it, or null. */
  owner: string | null;
  epoch: number;
  leaseExpires: string | null;
  /** True when it is held and its lease ran out: its worker died. */
  leaseExpired: boolean;
  lastSeq: number;
  status: string;
  revivalsUsed: number;
  /** The run whose `spawn_agent` started it; null for a root run. */
  parent: string | null;
  /** 0 for a root run, its parent's plus one for a child. */
  depth: number;
  /** The size of its lines: what its transcript file would take. */
  bytes: number;
  /** Why it was parked `unreadable` (null in any other status). */
  detail: string | null;
}

/**
 * A run's state folded from its records ({@link PostgresStore.tails}): from its last checkpoint
 * on, every line's checksum verified — or why it cannot be read.
 *
 * @example
 * const tail: StoreTail = (await store.tails()).get('main');
 */
export type StoreTail = { ok: true; state: TailState } | { ok: false; detail: string };

/**
 * Why a store would not start on the database's schema: older (run `llm-agent db migrate`)
 * or newer (written by a newer llm-agent) than {@link SCHEMA_VERSION}.
 *
 * @example
 * if (error instanceof SchemaVersionError && error.found < SCHEMA_VERSION) console.error('run: llm-agent db migrate');
 */
export class SchemaVersionError extends Error {
  readonly found: number;
  constructor(found: number, message: string) {
    super(message);
    this.name = 'SchemaVersionError';
    this.found = found;
  }
}

const DEFAULT_SCHEMA = 'llm_agent';
const DEFAULT_LEASE_MS = 30_000;
const DEFAULT_CHECKPOINT_BYTES = 32 * 1024;

/**
 * Runs in PostgreSQL, for many workers on many machines: the same records, checksums and
 * write order as the file store (the same contract suite runs on both), with ownership as a
 * lease carrying a fencing epoch. Every append is one statement that succeeds only while the
 * writer's epoch is current, so a worker paused past its lease (SIGSTOP, a GC pause, a
 * partition) and resumed can never append again — its next barrier fails `ownership-lost`.
 * A barrier is a commit. Needs the `pg` package (an optional peer dependency) and a schema
 * migrated by `llm-agent db migrate` (or {@link PostgresStore.migrate}); a schema older or
 * newer than this version is refused at {@link PostgresStore.connect}.
 *
 * @example
 * const connectionString = process.env.DATABASE_URL ?? 'postgres://127.0.0.1/runs';
 * await PostgresStore.migrate({ connectionString });
 * const store = await PostgresStore.connect({ connectionString });
 * const writer = await store.create('main', meta);
 * await new Loop({ backends: [model], session: writer }).start('Hello');
 * await writer.close();
 * await store.close();
 */
export class PostgresStore implements TranscriptStore {
  readonly kind = 'postgres';
  readonly owner: string;
  readonly #pool: Pool;
  readonly #schema: string;
  readonly #label: string;
  readonly #leaseMs: number;
  readonly #clock: () => Date;
  readonly #checkpointBytes: number;
  readonly #notifications: RunNotifications;

  private constructor(pool: Pool, options: PostgresStoreOptions) {
    this.#pool = pool;
    this.#schema = quoteSchema(options.schema ?? DEFAULT_SCHEMA);
    this.#label = databaseLabel(options.connectionString);
    this.owner =
      options.owner ?? `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 10)}`;
    this.#leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.#clock = options.clock ?? (() => new Date());
    this.#checkpointBytes = options.checkpointBytes ?? DEFAULT_CHECKPOINT_BYTES;
    this.#notifications = new RunNotifications(
      options.connectionString,
      options.schema ?? DEFAULT_SCHEMA,
      `${options.applicationName ?? 'llm-agent'} listener`,
    );
  }

  /**
   * Connect, and check that the schema is the version this store reads and writes: a
   * {@link SchemaVersionError} says to run `llm-agent db migrate` (older) or to use a newer
   * llm-agent (newer).
   */
  static async connect(options: PostgresStoreOptions): Promise<PostgresStore> {
    const schema = options.schema ?? DEFAULT_SCHEMA;
    quoteSchema(schema);
    const pool = await createPool(options);
    try {
      const version = await withClient(pool, (client) => schemaVersion(client, schema));
      if (version < SCHEMA_VERSION) {
        throw new SchemaVersionError(
          version,
          `${databaseLabel(options.connectionString)}: the schema "${schema}" is at version ${version}, this llm-agent needs ${SCHEMA_VERSION}: run llm-agent db migrate --database URL`,
        );
      }
      if (version > SCHEMA_VERSION) {
        throw new SchemaVersionError(
          version,
          `${databaseLabel(options.connectionString)}: the schema "${schema}" is at version ${version}, newer than this llm-agent's ${SCHEMA_VERSION}: use a newer llm-agent`,
        );
      }
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw error;
    }
    return new PostgresStore(pool, options);
  }

  /** Apply the schema's missing migrations; the versions applied (none when current). */
  static async migrate(options: PostgresStoreOptions): Promise<number[]> {
    const pool = await createPool(options);
    try {
      return await withClient(pool, (client) => migrate(client, options.schema ?? DEFAULT_SCHEMA));
    } finally {
      await pool.end();
    }
  }

  /** A new run at epoch 1, owned by this store's `owner`, with its `session-meta`, in one transaction. */
  create(run: string, meta: SessionMeta): Promise<TranscriptWriter> {
    return this.#create(run, meta, null);
  }

  async #create(run: string, meta: SessionMeta, parent: string | null): Promise<TranscriptWriter> {
    const path = this.#pathOf(run);
    const line = encodeLine(
      { v: FORMAT_VERSION, seq: 0, at: this.#clock().toISOString() },
      { type: 'session-meta', ...meta },
    );
    const created = await withClient(this.#pool, async (client) => {
      await client.query('BEGIN');
      try {
        const inserted = await client.query(SQL.CREATE_RUN(this.#schema), [
          run,
          this.owner,
          this.#leaseMs,
          parent,
        ]);
        if (inserted.rowCount === 0) {
          await client.query('ROLLBACK');
          return false;
        }
        await client.query(SQL.APPEND(this.#schema), [
          run,
          1,
          -1,
          [line.bytes],
          ['session-meta'],
          this.#leaseMs,
        ]);
        await client.query('COMMIT');
        return true;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw new SessionError(
          'io',
          path,
          `${path}: cannot create the run (${describeError(error)})`,
          {
            cause: error,
          },
        );
      }
    });
    if (!created) throw new SessionError('exists', path, `${path}: a run of that name exists`);
    return this.#writer(run, 1, 0, foldTailState(emptyTailState(), line.record, line.bytes.length));
  }

  /** Take the run over — a new epoch, a fresh lease — when nobody holds it, then read and check every record. */
  async open(run: string): Promise<TranscriptWriter> {
    const path = this.#pathOf(run);
    const claimed = await this.#pool.query<{ epoch: string; last_seq: string }>(
      SQL.CLAIM(this.#schema),
      [run, this.owner, this.#leaseMs],
    );
    return this.#opened(run, path, claimed.rows[0]);
  }

  /**
   * Take a run over only while it is still the work it was listed as by {@link work}: `dead`
   * (held, its lease expired), or unowned and `queued` or `approved`. Null when it is not any
   * more — another worker took it, or took it and finished — so a stale list never makes a
   * worker carry a run on twice.
   *
   * @example
   * const writer = await store.take('report-42', 'queued');
   * if (writer === null) console.log('another worker has it');
   */
  async take(
    run: string,
    kind: 'dead' | 'queued' | 'approved',
  ): Promise<PostgresTranscriptWriter | null> {
    const path = this.#pathOf(run);
    const taken = await this.#pool.query<{ epoch: string; last_seq: string }>(
      SQL.TAKE(this.#schema),
      [run, this.owner, this.#leaseMs, kind],
    );
    const row = taken.rows[0];
    if (row === undefined) return null;
    try {
      return await this.#opened(run, path, row);
    } catch (error) {
      // Taken, but it cannot be read: left held, its lease would run out and every worker
      // would take it again at every lease. A person decides what becomes of it.
      if (SessionError.isInstance(error) && error.code === 'unreadable')
        await this.parkUnreadable(run, Number(row.epoch), error.message);
      throw error;
    }
  }

  /**
   * Let go of a run its taker (at `epoch`, its writer's) found it cannot read, parked for a person: unowned,
   * `unreadable`, with why (`detail`, shown by `status --database`). No worker takes it again.
   * True when the epoch was still current. {@link PostgresStore.take} does it itself for a run
   * whose records do not read.
   *
   * @example
   * await store.parkUnreadable('report-42', 7, 'record 7: checksum mismatch');
   */
  async parkUnreadable(run: string, epoch: number, detail: string): Promise<boolean> {
    const parked = await this.#pool.query(SQL.PARK_UNREADABLE(this.#schema), [run, epoch, detail]);
    return parked.rowCount === 1;
  }

  async #opened(
    run: string,
    path: string,
    row: { epoch: string; last_seq: string } | undefined,
  ): Promise<PostgresTranscriptWriter> {
    if (row === undefined) {
      const holder = await this.#pool.query<{ owner: string | null; lease_expires: Date | null }>(
        SQL.HOLDER(this.#schema),
        [run],
      );
      const held = holder.rows[0];
      if (held === undefined) throw new SessionError('unreadable', path, `${path}: no such run`);
      throw new SessionError(
        'locked',
        path,
        `${path}: another writer holds this run (${held.owner ?? 'unknown'}, lease until ${held.lease_expires?.toISOString() ?? '?'})`,
      );
    }
    const epoch = Number(row.epoch);
    const lastSeq = Number(row.last_seq);
    const found = await this.#read(run);
    if (!found.ok || found.records.length !== lastSeq + 1) {
      const detail = found.ok
        ? `${path}: the run says its last seq is ${lastSeq} but holds ${found.records.length} records`
        : found.detail;
      throw new SessionError('unreadable', path, detail);
    }
    let state = emptyTailState();
    found.records.forEach((record, index) => {
      state = foldTailState(state, record, found.lengths[index] ?? 0);
    });
    return this.#writer(run, epoch, lastSeq, state);
  }

  /** Every record in seq order, each line's checksum and seq checked. Never throws. */
  async read(run: string): Promise<StoreRead> {
    const found = await this.#read(run);
    return found.ok ? { ok: true, records: found.records, tornBytes: 0 } : found;
  }

  /** {@link read}, with each record's line length (for the token estimate of the state). */
  async #read(
    run: string,
  ): Promise<
    | { ok: true; records: (TranscriptRecord | ForeignRecord)[]; lengths: number[] }
    | Extract<StoreRead, { ok: false }>
  > {
    const path = this.#label === '' ? run : `${this.#label}#${run}`;
    try {
      const result = await this.#pool.query<{ seq: string; line: Buffer }>(
        SQL.READ_LINES(this.#schema),
        [run],
      );
      if (result.rows.length === 0) {
        const exists = await this.#pool.query(SQL.RUN_EXISTS(this.#schema), [run]);
        if (exists.rowCount === 0)
          return { ok: false, reason: 'missing', detail: `${path}: no such run` };
      }
      const records: (TranscriptRecord | ForeignRecord)[] = [];
      const lengths: number[] = [];
      for (const [index, row] of result.rows.entries()) {
        const seq = Number(row.seq);
        const where = `${path}: record ${seq}`;
        if (seq !== index) {
          return {
            ok: false,
            reason: 'unreadable',
            detail: `${where}: seq ${seq} where ${index} was expected`,
          };
        }
        const bytes = row.line;
        if (bytes.length === 0 || bytes[bytes.length - 1] !== 0x0a) {
          return { ok: false, reason: 'unreadable', detail: `${where}: the line has no newline` };
        }
        const decoded = decodeLine(bytes.subarray(0, bytes.length - 1));
        if (!decoded.ok)
          return { ok: false, reason: 'unreadable', detail: `${where}: ${decoded.message}` };
        if (decoded.record.seq !== seq) {
          return {
            ok: false,
            reason: 'unreadable',
            detail: `${where}: the line says seq ${decoded.record.seq}`,
          };
        }
        records.push(decoded.record);
        lengths.push(bytes.length);
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

  /** The run's lines, concatenated: a v1 transcript file, byte for byte. */
  async exportBytes(run: string): Promise<Buffer> {
    const found = await this.read(run);
    if (!found.ok) throw new Error(found.detail);
    const result = await this.#pool.query<{ line: Buffer }>(SQL.READ_LINES(this.#schema), [run]);
    return Buffer.concat(result.rows.map((row) => row.line));
  }

  /**
   * Start a run and leave it for a worker: its `session-meta` and the user's first turn,
   * committed together with the run, unowned and `queued`. With `parent`, the run is that run's child (a
   * `spawn_agent`'s: its `session-meta` names the parent): one level deeper, and listed as work
   * before its parent — submitted only while the parent's epoch is `parent.epoch` (the
   * parent's writer's), so a parent's worker fenced out cannot start a child (`ownership-lost`). A run of that name is refused (`SessionError` `exists`).
   *
   * @example
   * await store.submit('report-42', meta, 'Write the report.');
   */
  async submit(
    run: string,
    meta: SessionMeta,
    prompt: string,
    parent?: { run: string; epoch: number },
  ): Promise<void> {
    const path = this.#pathOf(run);
    const at = this.#clock().toISOString();
    const lines = [
      encodeLine({ v: FORMAT_VERSION, seq: 0, at }, { type: 'session-meta', ...meta }),
      encodeLine(
        { v: FORMAT_VERSION, seq: 1, at },
        { type: 'message', role: 'user', content: [{ type: 'text', text: prompt }] },
      ),
    ];
    let inserted: number;
    try {
      // One statement: a run is never there without its task, so a crash can never leave one
      // a worker would find empty.
      const result = await this.#pool.query(SQL.SUBMIT(this.#schema), [
        run,
        lines.map((line) => line.bytes),
        lines.map((line) => line.record.type),
        parent?.run ?? null,
        parent?.epoch ?? null,
      ]);
      inserted = result.rowCount ?? 0;
    } catch (error) {
      throw new SessionError(
        'io',
        path,
        `${path}: cannot submit the run (${describeError(error)})`,
        {
          cause: error,
        },
      );
    }
    if (inserted === 0) {
      const exists = await this.#pool.query(SQL.RUN_EXISTS(this.#schema), [run]);
      if (exists.rowCount === 0 && parent !== undefined) {
        throw new SessionError(
          'ownership-lost',
          path,
          `${path}: not submitted: its parent ${parent.run} was taken over (its epoch is no longer ${parent.epoch})`,
        );
      }
      throw new SessionError('exists', path, `${path}: a run of that name exists`);
    }
  }

  /**
   * The work waiting, oldest first: runs whose writer died (`dead`: the lease expired) and runs
   * nobody holds that are `queued` or `approved`. Taking one is `open` (or a revive), which
   * exactly one of several workers wins.
   *
   * @example
   * for (const item of await store.work(10)) console.log(item.run, item.dead ? 'dead' : item.status);
   */
  async work(limit: number): Promise<{ run: string; status: string; dead: boolean }[]> {
    const result = await this.#pool.query<{ run_id: string; status: string; dead: boolean }>(
      SQL.WORK(this.#schema),
      [limit],
    );
    return result.rows.map((row) => ({ run: row.run_id, status: row.status, dead: row.dead }));
  }

  /**
   * Fence a dead run without reviving it — a new epoch, so its old writer can never append —
   * and leave it waiting as `status` (`awaiting-approval`, `capped`). True for the one caller
   * that parked it; false when it was not dead any more or another supervisor got there first.
   *
   * @example
   * if (await store.park('report-42', 'awaiting-approval')) console.log('waits for a person');
   */
  async park(run: string, status: 'awaiting-approval' | 'capped'): Promise<boolean> {
    const parked = await this.#pool.query(SQL.PARK(this.#schema), [run, status]);
    return parked.rowCount === 1;
  }

  /**
   * Move an unowned run from one waiting status to another (`awaiting-approval` → `approved`
   * when a person approves; `open` → `capped`). True when it was in `from`.
   *
   * @example
   * await store.mark('report-42', 'awaiting-approval', 'approved');
   */
  async mark(run: string, from: string, to: string): Promise<boolean> {
    const marked = await this.#pool.query(SQL.MARK(this.#schema), [run, to, from]);
    return marked.rowCount === 1;
  }

  /**
   * Where each of `runs` stands — who holds it, its status and depth — for a join waiting on
   * children; a run that does not exist is absent from the map.
   *
   * @example
   * const standing = await store.standing(['main.agents/researcher-call_1']);
   */
  async standing(
    runs: readonly string[],
  ): Promise<Map<string, { owner: string | null; status: string; depth: number }>> {
    const result = await this.#pool.query<{
      run_id: string;
      owner: string | null;
      status: string;
      depth: number;
    }>(SQL.STANDING(this.#schema), [runs]);
    return new Map(
      result.rows.map((row) => [
        row.run_id,
        { owner: row.owner, status: row.status, depth: row.depth },
      ]),
    );
  }

  /**
   * How many children of `parent` have not ended (held, or waiting to be run or approved).
   *
   * @example
   * if ((await store.activeChildren('main')) >= 4) console.log('wait for one first');
   */
  async activeChildren(parent: string): Promise<number> {
    const result = await this.#pool.query<{ active: number }>(SQL.ACTIVE_CHILDREN(this.#schema), [
      parent,
    ]);
    return result.rows[0]?.active ?? 0;
  }

  /**
   * Watch runs for a change of owner or status (LISTEN/NOTIFY, see {@link RunNotifications}):
   * read them after this resolves, then `changed(pollMs, signal)` waits for the next change —
   * never longer than `pollMs`, so a notification lost with a connection costs one interval.
   *
   * @example
   * const child = 'main.agents/researcher-call_1';
   * const watch = await store.watch([child]);
   * try {
   *   while ((await store.standing([child])).get(child)?.status !== 'finished') await watch.changed(1000);
   * } finally {
   *   watch.dispose();
   * }
   */
  watch(runs: readonly string[]): Promise<RunWatch> {
    return this.#notifications.watch(runs);
  }

  /**
   * Every run with who holds it and how: for `status --database`.
   *
   * @example
   * for (const row of await store.runs()) console.log(row.run, row.status, row.owner);
   */
  async runs(): Promise<StoreRunRow[]> {
    const result = await this.#pool.query<{
      run_id: string;
      owner: string | null;
      epoch: string;
      lease_expires: Date | null;
      expired: boolean | null;
      last_seq: string;
      status: string;
      revivals_used: number;
      parent_run: string | null;
      depth: number;
      bytes: string;
      status_detail: string | null;
    }>(SQL.RUNS(this.#schema));
    return result.rows.map((row) => ({
      run: row.run_id,
      owner: row.owner,
      epoch: Number(row.epoch),
      leaseExpires: row.lease_expires?.toISOString() ?? null,
      leaseExpired: row.expired === true,
      lastSeq: Number(row.last_seq),
      status: row.status,
      revivalsUsed: row.revivals_used,
      parent: row.parent_run,
      depth: row.depth,
      bytes: Number(row.bytes),
      detail: row.status === 'unreadable' ? row.status_detail : null,
    }));
  }

  /**
   * Every run's state, as `status` needs it: folded from the run's last checkpoint on (a
   * checkpoint holds the state of everything before it), each line decoded and its checksum
   * verified; a run whose checkpoint this version cannot read is folded from its first record.
   * Damage before the last checkpoint is found by a full read ({@link read}, which revive does).
   *
   * @example
   * for (const [run, tail] of await store.tails()) if (!tail.ok) console.error(run, tail.detail);
   */
  async tails(): Promise<Map<string, StoreTail>> {
    const result = await this.#pool.query<{ run_id: string; seq: string; line: Buffer }>(
      SQL.TAILS(this.#schema),
    );
    const tails = new Map<string, StoreTail>();
    let run: string | null = null;
    let state: TailState | null = null;
    let failed: string | null = null;
    let expected = 0;
    const finish = () => {
      if (run === null) return;
      tails.set(
        run,
        failed !== null
          ? { ok: false, detail: failed }
          : { ok: true, state: state ?? emptyTailState() },
      );
    };
    const rereads: string[] = [];
    for (const row of result.rows) {
      if (row.run_id !== run) {
        finish();
        run = row.run_id;
        state = null;
        failed = null;
        expected = Number(row.seq);
      }
      if (failed !== null) continue;
      const seq = Number(row.seq);
      const where = `${this.#label}#${run}: record ${seq}`;
      const bytes = row.line;
      const decoded =
        bytes[bytes.length - 1] === 0x0a ? decodeLine(bytes.subarray(0, bytes.length - 1)) : null;
      if (seq !== expected) failed = `${where}: seq ${seq} where ${expected} was expected`;
      else if (decoded === null) failed = `${where}: the line has no newline`;
      else if (!decoded.ok) failed = `${where}: ${decoded.message}`;
      else if (decoded.record.seq !== seq)
        failed = `${where}: the line says seq ${decoded.record.seq}`;
      if (failed !== null || decoded === null || !decoded.ok) continue;
      expected += 1;
      const record = decoded.record;
      if (state === null && seq > 0) {
        // The first line is the last checkpoint: its state is everything before it.
        const saved =
          record.type === 'checkpoint' && 'state' in record
            ? tailStateFromJson(record.state as never)
            : null;
        if (saved === null) {
          rereads.push(run as string);
          failed = 'reread';
          continue;
        }
        state = saved;
      }
      state = foldTailState(state ?? emptyTailState(), record, bytes.length);
    }
    finish();
    for (const reread of rereads) {
      const found = await this.#read(reread);
      if (!found.ok) {
        tails.set(reread, { ok: false, detail: found.detail });
        continue;
      }
      let folded = emptyTailState();
      found.records.forEach((record, index) => {
        folded = foldTailState(folded, record, found.lengths[index] ?? 0);
      });
      tails.set(reread, { ok: true, state: folded });
    }
    return tails;
  }

  /**
   * Bring a run in from the bytes of a v1 transcript (an export, or a file a laptop wrote):
   * every line checked (checksum, fields, seqs from 0), stored byte for byte, unowned —
   * `finished`, or for a run left mid-work `awaiting-approval`, so that a person approves
   * before a worker revives it and spends tokens. `exportBytes` gives the same bytes back. A run of that name is refused (`exists`); bad bytes are refused
   * naming the line, and nothing is written.
   *
   * @example
   * import { readFile } from 'node:fs/promises';
   * await store.importBytes('report-42', await readFile('runs/report-42.jsonl'));
   */
  async importBytes(run: string, bytes: Buffer): Promise<void> {
    await this.importStream(run, [bytes]);
  }

  /**
   * {@link PostgresStore.importBytes} from a stream of a transcript's bytes (chunks cut
   * anywhere): checked and stored in batches of about 1 MiB in one transaction, so memory holds
   * one batch and one line whatever the size of the transcript. Returns how many records and
   * bytes were stored.
   *
   * @example
   * import { createReadStream } from 'node:fs';
   * await store.importStream('report-42', createReadStream('runs/report-42.jsonl'));
   */
  importStream(
    run: string,
    chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  ): Promise<ImportedRun> {
    return importRun(this.#pool, this.#schema, this.#pathOf(run), run, chunks);
  }

  /** Every run, sorted by name. */
  async list(): Promise<string[]> {
    const result = await this.#pool.query<{ run_id: string }>(SQL.LIST_RUNS(this.#schema));
    return result.rows.map((row) => row.run_id);
  }

  /** Close the connection pool and the notification listener. */
  async close(): Promise<void> {
    await this.#notifications.close();
    await this.#pool.end();
  }

  #pathOf(run: string): string {
    if (
      typeof run !== 'string' ||
      run === '' ||
      run.length > 200 ||
      [...run].some((character) => {
        const code = character.codePointAt(0) ?? 0;
        return code < 0x20 || code === 0x7f;
      })
    ) {
      throw new TypeError(
        `PostgresStore: "${String(run)}" is not a run name (1 to 200 characters, no control characters)`,
      );
    }
    return `${this.#label}#${run}`;
  }

  #writer(
    run: string,
    epoch: number,
    lastSeq: number,
    state: ReturnType<typeof emptyTailState>,
  ): PostgresTranscriptWriter {
    return new PostgresTranscriptWriter({
      pool: this.#pool,
      schema: this.#schema,
      run,
      path: this.#pathOf(run),
      epoch,
      lastSeq,
      state,
      leaseMs: this.#leaseMs,
      clock: this.#clock,
      checkpointBytes: this.#checkpointBytes,
    });
  }
}

async function createPool(options: PostgresStoreOptions): Promise<Pool> {
  let pg: typeof import('pg');
  try {
    pg = ((await import('pg')) as unknown as { default: typeof import('pg') }).default;
  } catch {
    throw new Error('the PostgreSQL store needs the pg package: npm install pg');
  }
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.maxConnections ?? 4,
    application_name: options.applicationName ?? 'llm-agent',
  });
  // An idle connection the server closed is the pool's to replace, not the process's to die of.
  pool.on('error', () => undefined);
  return pool;
}

async function withClient<T>(pool: Pool, body: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    return await body(client);
  } finally {
    client.release();
  }
}

/** The connection string without credentials: `postgres://host:port/db`. */
function databaseLabel(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return 'postgres';
  }
}
