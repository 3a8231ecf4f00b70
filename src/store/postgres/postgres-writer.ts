import type { Pool } from 'pg';
import { encodeLine, encodeReadableLine } from '../../transcript/line-codec.ts';
import { type RecordBody, recordVersion, type TranscriptRecord } from '../../transcript/records.ts';
import { TranscriptError } from '../../transcript/transcript-error.ts';
import { foldTailState, type TailState, tailStateToJson } from '../../transcript/tail-state.ts';
import { WriterCore } from '../../transcript/writer-core.ts';
import type { LeasedWriter } from '../run-queue.ts';
import { prepared, SQL } from './sql.ts';

/**
 * What a writer needs from its store: the pool, the tables, who it is, its lease.
 *
 * @example
 * new PostgresTranscriptWriter({ pool, schema: '"llm_agent"', run, path, epoch, lastSeq, state, leaseMs, clock, checkpointBytes });
 */
export interface PostgresWriterInit {
  pool: Pool;
  /** The quoted schema name. */
  schema: string;
  run: string;
  /** `<database>#<run>`, for messages. */
  path: string;
  epoch: number;
  lastSeq: number;
  state: TailState;
  leaseMs: number;
  clock: () => Date;
  checkpointBytes: number;
}

interface PendingLine {
  bytes: Buffer;
  type: string;
}

/**
 * The one writer of a run in PostgreSQL. Records wait in memory until a barrier, which sends
 * them all in one fenced statement — accepted only while the run's epoch is still the one this
 * writer claimed and its last seq the one it last wrote — and returns once it is committed.
 * Zero rows back means another writer took the run over: this one is poisoned
 * (`ownership-lost`) and never writes again. Its lease is renewed by every barrier and by a
 * heartbeat every third of the lease; a heartbeat that finds the epoch moved poisons it too.
 *
 * @example
 * const writer = await store.take('report-42', 'queued'); // a PostgresTranscriptWriter, or null
 * await writer?.append({ type: 'message', role: 'user', content: [{ type: 'text', text: 'Go on.' }] });
 * await writer?.barrier(); // committed, or ownership-lost
 */
export class PostgresTranscriptWriter implements LeasedWriter {
  readonly path: string;
  readonly #pool: Pool;
  readonly #schema: string;
  readonly #run: string;
  readonly #epoch: number;
  readonly #leaseMs: number;
  readonly #clock: () => Date;
  readonly #heartbeat: NodeJS.Timeout;
  /** The last seq the database holds from this writer (or held when it claimed the run). */
  #written: number;
  #nextSeq: number;
  #state: TailState;
  #pending: PendingLine[] = [];
  /** The queue, the poison latch, closing and when a checkpoint is due: as the file writer's. */
  readonly #core: WriterCore;
  #closed = false;
  #releaseAs: 'queued' | 'capped' | undefined;

  constructor(init: PostgresWriterInit) {
    this.path = init.path;
    this.#pool = init.pool;
    this.#schema = init.schema;
    this.#run = init.run;
    this.#epoch = init.epoch;
    this.#written = init.lastSeq;
    this.#nextSeq = init.lastSeq + 1;
    this.#state = init.state;
    this.#leaseMs = init.leaseMs;
    this.#clock = init.clock;
    this.#core = new WriterCore(init.path, init.checkpointBytes, 'writer');
    this.#heartbeat = setInterval(() => void this.#renewLease(), Math.max(50, init.leaseMs / 3));
    this.#heartbeat.unref();
  }

  /**
   * Let the run go as `queued` on close — a run taken from the queue that did not start — or
   * `capped` — a dead run at its revival cap — rather than as its state says (see
   * {@link releasedStatus}).
   *
   * @example
   * const writer = await store.take('report-42', 'queued');
   * writer?.releaseAs('queued'); // it did not start: back to the queue
   * await writer?.close();
   */
  releaseAs(status: 'queued' | 'capped'): void {
    this.#releaseAs = status;
  }

  /**
   * Stop holding the run without letting it go: nothing more is written, the heartbeat stops,
   * and `close` releases nothing — the lease runs out and a supervisor treats the run as its
   * worker's death (revives it, or parks it for a person). For a worker that cannot carry a run
   * on (its database went away mid-way) and must not leave it looking settled.
   *
   * @example
   * const writer = await store.take('report-42', 'dead');
   * writer?.abandon('the database connection was cut');
   */
  abandon(reason: string): void {
    this.#core.fail(
      new TranscriptError(
        'poisoned',
        this.path,
        `${this.path}: abandoned (${reason}); its lease runs out`,
      ),
    );
    clearInterval(this.#heartbeat);
  }

  /** The fencing epoch this writer holds. */
  get epoch(): number {
    return this.#epoch;
  }

  /** The folded state of everything appended so far. */
  get state(): TailState {
    return this.#state;
  }

  /** The seq of the last record appended (written or waiting for the barrier). */
  get lastSeq(): number {
    return this.#nextSeq - 1;
  }

  /**
   * How long this writer's hold on the run lasts from its last renewal, in milliseconds (the
   * store's `leaseMs`): work done before writing — asking reconciles, say — must end well within
   * it, or the run could be another worker's before this one writes.
   */
  get leaseMs(): number {
    return this.#leaseMs;
  }

  /** True once another writer took the run over (a newer epoch): this one was fenced out. */
  get fenced(): boolean {
    return this.#core.failure?.code === 'ownership-lost';
  }

  /** True once a write failed or the run was taken over. */
  get poisoned(): boolean {
    return this.#core.poisoned;
  }

  /** Append one record: it waits in memory for the next barrier. */
  append(body: RecordBody): Promise<TranscriptRecord> {
    this.#core.assertUsable();
    return Promise.resolve(this.#append(body, true));
  }

  #append(body: RecordBody, check = false): TranscriptRecord {
    const header = { v: recordVersion(body), seq: this.#nextSeq, at: this.#clock().toISOString() };
    let line: ReturnType<typeof encodeLine>;
    try {
      // A record its readers would refuse is not appended (see encodeReadableLine).
      line = check ? encodeReadableLine(header, body) : encodeLine(header, body);
    } catch (error) {
      throw error instanceof TypeError
        ? new TypeError(`${this.path}: not appended, ${error.message}`)
        : error;
    }
    this.#nextSeq += 1;
    this.#state = foldTailState(this.#state, line.record, line.bytes.length);
    this.#pending.push({ bytes: line.bytes, type: body.type });
    if (this.#core.counted(body.type, line.bytes.length)) this.#appendCheckpoint();
    return line.record;
  }

  /** Commit what waits, in one fenced statement; `ownership-lost` when the epoch moved. */
  barrier(): Promise<void> {
    this.#core.assertUsable();
    return this.#barrier();
  }

  #barrier(): Promise<void> {
    return this.#core.enqueue(async () => {
      const lines = this.#pending;
      if (lines.length === 0) {
        // Nothing to write: still prove the run is ours, as a file writer proves its identity.
        const found = await this.#guard(() =>
          this.#pool.query({
            ...prepared(SQL.FENCE_CHECK(this.#schema)),
            values: [this.#run, this.#epoch],
          }),
        );
        if (found.rowCount === 0) throw this.#lost();
        return;
      }
      this.#pending = [];
      // The state folded through exactly these lines: the run's summary, in the same statement.
      const summary = JSON.stringify(this.#state);
      const result = await this.#guard(() =>
        this.#pool.query({
          ...prepared(SQL.APPEND(this.#schema)),
          values: [
            this.#run,
            this.#epoch,
            this.#written,
            lines.map((line) => line.bytes),
            lines.map((line) => line.type),
            this.#leaseMs,
            summary,
          ],
        }),
      );
      if (result.rowCount !== lines.length) throw this.#lost();
      this.#written += lines.length;
    });
  }

  /**
   * `append`, then `barrier`, both asked at once: a `close` called meanwhile commits the record
   * with them rather than refusing the barrier as `closed`.
   */
  appendDurable(body: RecordBody): Promise<TranscriptRecord> {
    return this.#core.appendDurable(
      () => this.append(body),
      () => this.barrier(),
    );
  }

  /** A closing checkpoint, a barrier, then give the run up (owner cleared). */
  close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#heartbeat);
    return this.#core.close(
      () => this.#state,
      async () => this.#appendCheckpoint(),
      () => this.#barrier(),
      async () => {
        // A writer that failed leaves the lease to run out.
        if (this.#core.failure !== null) return;
        await this.#pool
          .query({
            ...prepared(SQL.RELEASE(this.#schema)),
            values: [
              this.#run,
              this.#epoch,
              this.#releaseAs ?? releasedStatus(this.#state),
              this.#state.revivals,
            ],
          })
          .catch(() => undefined);
      },
    );
  }

  #appendCheckpoint(): void {
    this.#core.checkpointStarted();
    this.#append({ type: 'checkpoint', state: tailStateToJson(this.#state) });
  }

  async #renewLease(): Promise<void> {
    if (this.#closed || this.#core.failure !== null) return;
    try {
      const renewed = await this.#pool.query({
        ...prepared(SQL.HEARTBEAT(this.#schema)),
        values: [this.#run, this.#epoch, this.#leaseMs],
      });
      if (renewed.rowCount === 0 && this.#core.failure === null) this.#lost();
    } catch {
      // A missed heartbeat is not a lost run: the next barrier finds out for certain.
    }
  }

  /** A database error poisons the writer: whether the statement committed is not known here. */
  async #guard<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      throw this.#core.fail(
        new TranscriptError(
          'poisoned',
          this.path,
          `${this.path}: the database refused a write (${error instanceof Error ? error.message : String(error)}); open the run again to go on`,
          { cause: error },
        ),
      );
    }
  }

  #lost(): TranscriptError {
    clearInterval(this.#heartbeat);
    return this.#core.fail(
      new TranscriptError(
        'ownership-lost',
        this.path,
        `${this.path}: another writer took this run over (its epoch is no longer ${this.#epoch}); this writer stopped and writes nothing more`,
      ),
    );
  }
}

/**
 * How a writer that lets a run go left it, for the `status` column: `failed` or `stopped` when
 * the transcript says so, `finished` when its last turn is an answer, `open` for anything else
 * unfinished. (`queued` and `capped` are a worker's: {@link PostgresTranscriptWriter.releaseAs}.)
 * Pure.
 *
 * @example
 * releasedStatus(writer.state); // 'finished' after the run's last answer
 */
export function releasedStatus(state: TailState): 'open' | 'finished' | 'failed' | 'stopped' {
  if (state.halt !== null) return state.halt.state;
  const last = state.lastMessage;
  if (last?.role === 'assistant' && last.calls.length === 0) return 'finished';
  return 'open';
}
