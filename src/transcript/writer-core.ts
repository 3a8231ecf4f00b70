import { TranscriptError } from './transcript-error.ts';
import type { TailState } from './tail-state.ts';

/**
 * What both writers of a transcript — the file {@link Session} and the PostgreSQL store's
 * writer — keep the same way, whatever their medium: one queue that runs writes and barriers
 * in call order; the poison latch (the first failure is kept, and from then on every append,
 * barrier and queued write is refused with it); the `closed` refusal; a close that happens
 * once (a closing checkpoint when one is due, a last barrier, then the medium's release,
 * never rejecting for a failed write); and when a checkpoint is due.
 *
 * A writer keeps its medium — what a write, a barrier and a fencing check are — and hands the
 * rest to its core. `appendDurable` puts the append and its barrier in the queue in the same
 * tick, so a `close` called meanwhile finds both queued: the record is made durable by the
 * barrier asked for it, and never refused as `closed` after it was accepted.
 *
 * @example
 * const core = new WriterCore('runs/a.jsonl', 32 * 1024, 'session');
 * await core.enqueue(async () => undefined); // runs in order; refused once poisoned
 */
export class WriterCore {
  readonly path: string;
  readonly #checkpointBytes: number;
  readonly #what: string;
  #queue: Promise<unknown> = Promise.resolve();
  #failure: TranscriptError | null = null;
  #closed = false;
  #closing: Promise<void> | undefined;
  #bytesSinceCheckpoint = 0;
  /** Records appended since the last checkpoint: whether closing should add one. */
  #recordsSinceCheckpoint = 0;

  /** `what` names the writer in the `closed` refusal (`session`, `writer`). */
  constructor(path: string, checkpointBytes: number, what: string) {
    this.path = path;
    this.#checkpointBytes = checkpointBytes;
    this.#what = what;
  }

  /** The failure the writer latched, or null. */
  get failure(): TranscriptError | null {
    return this.#failure;
  }

  /** True once a write failed or ownership was lost. */
  get poisoned(): boolean {
    const code = this.#failure?.code;
    return code === 'poisoned' || code === 'ownership-lost';
  }

  /** Latch `error` as the writer's failure unless one is latched already; the latched one. */
  fail(error: TranscriptError): TranscriptError {
    this.#failure ??= error;
    return this.#failure;
  }

  /** Throw the latched failure, or `closed` once close was called. */
  assertUsable(): void {
    if (this.#failure !== null) throw this.#failure;
    if (this.#closed) {
      throw new TranscriptError('closed', this.path, `${this.path}: the ${this.#what} is closed`);
    }
  }

  /** Run `operation` after everything queued before it, unless the writer is poisoned by then. */
  enqueue<T>(operation: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(() => {
      if (this.#failure !== null) throw this.#failure;
      return operation();
    });
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Count an appended line; true when a checkpoint is due now (this many bytes of other
   * records since the last one).
   */
  counted(type: string, bytes: number): boolean {
    this.#bytesSinceCheckpoint += bytes;
    this.#recordsSinceCheckpoint = type === 'checkpoint' ? 0 : this.#recordsSinceCheckpoint + 1;
    return type !== 'checkpoint' && this.#bytesSinceCheckpoint >= this.#checkpointBytes;
  }

  /** A checkpoint is being appended: the bytes count again from it. */
  checkpointStarted(): void {
    this.#bytesSinceCheckpoint = 0;
  }

  /**
   * `append` and `barrier` asked in the same tick (both queued before anything else can be):
   * the record once both are done. Awaited together, so when the write fails neither
   * rejection goes unhandled.
   */
  async appendDurable<R>(append: () => Promise<R>, barrier: () => Promise<void>): Promise<R> {
    const record = append();
    const [written] = await Promise.all([record, barrier()]);
    return written;
  }

  /**
   * Close once: from the call on `assertUsable` refuses (`closed`); unless poisoned, a closing
   * checkpoint when records were appended since the last one and the transcript holds a
   * conversation (`checkpoint`), then `barrier`; then, once the queue is empty, `release`. A
   * failed write is latched, never thrown; a second call returns the first call's promise.
   */
  close(
    state: () => TailState,
    checkpoint: () => Promise<void>,
    barrier: () => Promise<void>,
    release: () => Promise<void>,
  ): Promise<void> {
    this.#closing ??= this.#close(state, checkpoint, barrier, release);
    return this.#closing;
  }

  async #close(
    state: () => TailState,
    checkpoint: () => Promise<void>,
    barrier: () => Promise<void>,
    release: () => Promise<void>,
  ): Promise<void> {
    this.#closed = true;
    if (this.#failure === null) {
      try {
        if (this.#recordsSinceCheckpoint > 0 && state().conversationMessages > 0) {
          await checkpoint();
        }
        await barrier();
      } catch {
        // The failure is latched; closing must still release what the writer holds.
      }
    }
    await this.#queue.catch(() => undefined);
    await release();
  }
}
