import { hostname } from 'node:os';
import type { Pool } from 'pg';
import type { SessionMeta } from '../../transcript/session.ts';
import type { TranscriptWriter } from '../../transcript/transcript-writer.ts';
import type { RunQueue, RunStanding, RunWatch } from '../run-queue.ts';
import type { StoreRead } from '../transcript-store.ts';
import { parentRunName } from '../child-run-name.ts';
import { assertSchemaVersion } from './check-schema-version.ts';
import { migrate, quoteSchema, SCHEMA_VERSION } from './migrations.ts';
import type { PostgresTranscriptWriter } from './postgres-writer.ts';
import { type ImportedRun, importRun } from './import-run.ts';
import { claimRun, markRun, parkRun, parkUnreadableRun, takeRun } from './run-leases.ts';
import { RunNotifications } from './run-notifications.ts';
import {
  activeChildCount,
  eachRunSummary,
  runHeld,
  runNames,
  runRows,
  runStanding,
  runSummaries,
  runTails,
  waitingWork,
} from './run-queries.ts';
import { createRun, exportRunBytes, foldRunLines, readRun, submitRun } from './run-records.ts';
import {
  createPool,
  databaseLabel,
  runPath,
  type StoreContext,
  withClient,
} from './store-context.ts';
import type { StoreRunRow, StoreRunSummary, StoreTail } from './store-run-row.ts';

export { SchemaVersionError } from './schema-version-error.ts';
export type { StoreRunRow, StoreRunSummary, StoreTail };
export { SCHEMA_VERSION };

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
 * await new Loop({ backends: [model], writer }).start('Hello');
 * await writer.close();
 * await store.close();
 */
export class PostgresStore implements RunQueue {
  readonly kind = 'postgres';
  readonly owner: string;
  readonly #context: StoreContext;
  readonly #notifications: RunNotifications;

  private constructor(pool: Pool, options: PostgresStoreOptions) {
    this.owner =
      options.owner ?? `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 10)}`;
    this.#context = {
      pool,
      schema: quoteSchema(options.schema ?? DEFAULT_SCHEMA),
      label: databaseLabel(options.connectionString),
      owner: this.owner,
      leaseMs: options.leaseMs ?? DEFAULT_LEASE_MS,
      clock: options.clock ?? (() => new Date()),
      checkpointBytes: options.checkpointBytes ?? DEFAULT_CHECKPOINT_BYTES,
    };
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
      await assertSchemaVersion(pool, options.connectionString, schema);
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

  /**
   * A new run at epoch 1, owned by this store's `owner`, with its `session-meta`, in one
   * transaction. A run whose `session-meta` names a parent and whose name is a child's
   * (`<parent>.agents/<agent id>`, as the `Composer` makes them) is recorded as that run's child.
   */
  create(run: string, meta: SessionMeta): Promise<TranscriptWriter> {
    return createRun(
      this.#context,
      run,
      meta,
      meta.parent === undefined ? null : parentRunName(run),
    );
  }

  /** Take the run over — a new epoch, a fresh lease — when nobody holds it, then read and check every record. */
  open(run: string): Promise<TranscriptWriter> {
    return claimRun(this.#context, run);
  }

  /**
   * Take a run over only while it is still the work it was listed as by {@link work}: `dead`
   * (held, its lease expired), or unowned and `queued` or `approved`. Null when it is not any
   * more — another worker took it, or took it and finished — so a stale list never makes a
   * worker carry a run on twice. A run taken whose records do not read is parked `unreadable`
   * (with why) and a TranscriptError `unreadable` thrown; a read the database failed (a cut
   * connection) throws `io`, and a queued or approved run goes back as it was listed.
   *
   * @example
   * const writer = await store.take('report-42', 'queued');
   * if (writer === null) console.log('another worker has it');
   */
  take(
    run: string,
    kind: 'dead' | 'queued' | 'approved',
  ): Promise<PostgresTranscriptWriter | null> {
    return takeRun(this.#context, run, kind);
  }

  /** Every record in seq order, each line's checksum and seq checked. Never throws. */
  async read(run: string): Promise<StoreRead> {
    const found = await readRun(this.#context, run);
    return found.ok ? { ok: true, records: found.records, tornBytes: 0 } : found;
  }

  /**
   * Every record read and checked, as {@link read} does, and the state they fold to from the
   * first — each counted by the bytes of its stored line, so that its token estimate is the one
   * {@link tails} and {@link summaries} give (a fold of decoded records alone counts none).
   * Never throws.
   *
   * @example
   * const full = await store.readState('report-42');
   * if (full.ok) console.log(full.state.messageBytes);
   */
  async readState(run: string): Promise<StoreTail> {
    const found = await readRun(this.#context, run);
    return found.ok
      ? { ok: true, state: foldRunLines(found) }
      : { ok: false, detail: found.detail };
  }

  /** The run's lines, concatenated: a v1 transcript file, byte for byte. */
  exportBytes(run: string): Promise<Buffer> {
    return exportRunBytes(this.#context, run);
  }

  /**
   * Start a run and leave it for a worker: its `session-meta` and the user's first turn,
   * committed together with the run, unowned and `queued`. With `parent`, the run is that run's child (a
   * `spawn_agent`'s: its `session-meta` names the parent): one level deeper, and listed as work
   * before its parent — submitted only while the parent's epoch is `parent.epoch` (the
   * parent's writer's), so a parent's worker fenced out cannot start a child (`ownership-lost`). A run of that name is refused (`TranscriptError` `exists`).
   *
   * @example
   * await store.submit('report-42', meta, 'Write the report.');
   */
  submit(
    run: string,
    meta: SessionMeta,
    prompt: string,
    parent?: { run: string; epoch: number },
  ): Promise<void> {
    return submitRun(this.#context, run, meta, prompt, parent);
  }

  /**
   * The work waiting, oldest first: runs whose writer died (`dead`: the lease expired) and runs
   * nobody holds that are `queued` or `approved`. Taking one is `open` (or a revive), which
   * exactly one of several workers wins.
   *
   * @example
   * for (const item of await store.work(10)) console.log(item.run, item.dead ? 'dead' : item.status);
   */
  work(limit: number): Promise<{ run: string; status: string; dead: boolean }[]> {
    return waitingWork(this.#context, limit);
  }

  /**
   * Fence a dead run without reviving it — a new epoch, so its old writer can never append —
   * and leave it waiting as `status` (`awaiting-approval`, `capped`). True for the one caller
   * that parked it; false when it was not dead any more or another supervisor got there first.
   *
   * @example
   * if (await store.park('report-42', 'awaiting-approval')) console.log('waits for a person');
   */
  park(run: string, status: 'awaiting-approval' | 'capped'): Promise<boolean> {
    return parkRun(this.#context, run, status);
  }

  /**
   * Move an unowned run from one waiting status to another (`awaiting-approval` → `approved`
   * when a person approves; `open` → `capped`). True when it was in `from`.
   *
   * @example
   * await store.mark('report-42', 'awaiting-approval', 'approved');
   */
  mark(run: string, from: string, to: string): Promise<boolean> {
    return markRun(this.#context, run, from, to);
  }

  /**
   * Where each of `runs` stands — who holds it, its status and depth — for a join waiting on
   * children; a run that does not exist is absent from the map.
   *
   * @example
   * const standing = await store.standing(['main.agents/researcher-call_1']);
   */
  standing(runs: readonly string[]): Promise<Map<string, RunStanding>> {
    return runStanding(this.#context, runs);
  }

  /**
   * Whether a live writer holds `run` now — an owner whose lease has not expired; false for a
   * run that does not exist.
   *
   * @example
   * if (await store.held('report-42')) console.log('a worker is on it');
   */
  held(run: string): Promise<boolean> {
    return runHeld(this.#context, run);
  }

  /**
   * How many children of `parent` have not ended (held, or waiting to be run or approved).
   *
   * @example
   * if ((await store.activeChildren('main')) >= 4) console.log('wait for one first');
   */
  activeChildren(parent: string): Promise<number> {
    return activeChildCount(this.#context, parent);
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
  runs(): Promise<StoreRunRow[]> {
    return runRows(this.#context);
  }

  /**
   * Every run's state, as `status` needs it: folded from the run's last checkpoint on (a
   * checkpoint holds the state of everything before it), each line decoded and its checksum
   * verified; a run whose checkpoint this version cannot read is folded from its first record.
   * Damage before the last checkpoint is found by a full read ({@link read}, which revive does).
   * With `only`, those runs alone.
   *
   * @example
   * for (const [run, tail] of await store.tails()) if (!tail.ok) console.error(run, tail.detail);
   */
  tails(only?: readonly string[]): Promise<Map<string, StoreTail>> {
    return runTails(this.#context, only);
  }

  /**
   * Every run with who holds it and its summary — the state its records fold to, replaced by
   * the same statement as each append — in one query that reads no record: what `status
   * --database` shows at 100,000 runs. A run with no summary yet (written before schema
   * version 4 and not since) has `summary: null`; fold it with {@link tails}.
   *
   * @example
   * for (const row of await store.summaries()) console.log(row.run, row.summary?.open.length);
   */
  summaries(): Promise<StoreRunSummary[]> {
    return runSummaries(this.#context);
  }

  /**
   * {@link summaries} one row at a time, each given to `visit` as it arrives: for a caller that
   * keeps less than every row (`status --database --json` keeps a tree until it is written),
   * and whose work on a row overlaps the server's sending of the next. Each row's `children`
   * is counted in the same snapshot as the rows. Rejects with the first error `visit` throws,
   * once the rows have all been read.
   *
   * @example
   * let dead = 0;
   * await store.eachSummary((row) => {
   *   if (row.leaseExpired) dead += 1;
   * });
   */
  eachSummary(visit: (row: StoreRunSummary) => void): Promise<void> {
    return eachRunSummary(this.#context, visit);
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
    return importRun(
      this.#context.pool,
      this.#context.schema,
      runPath(this.#context, run),
      run,
      chunks,
    );
  }

  /**
   * Let go of a run its taker (at `epoch`, its writer's) found it cannot read, parked for a
   * person: unowned, `unreadable`, with why (`detail`, shown by `status --database`). No worker
   * takes it again. True when the epoch was still current. {@link PostgresStore.take} does it
   * itself for a run whose records do not read.
   *
   * @example
   * await store.parkUnreadable('report-42', 7, 'record 7: checksum mismatch');
   */
  parkUnreadable(run: string, epoch: number, detail: string): Promise<boolean> {
    return parkUnreadableRun(this.#context, run, epoch, detail);
  }

  /** Every run, sorted by name. */
  list(): Promise<string[]> {
    return runNames(this.#context);
  }

  /** Close the connection pool and the notification listener. */
  async close(): Promise<void> {
    await this.#notifications.close();
    await this.#context.pool.end();
  }
}
