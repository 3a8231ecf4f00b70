import type { Pool, PoolClient } from 'pg';
import { decodeFramedLine } from '../../transcript/framed-line.ts';
import { MAX_LINE_BYTES } from '../../transcript/line-codec.ts';
import { TranscriptError } from '../../transcript/transcript-error.ts';
import { emptyTailState, foldTailState, type TailState } from '../../transcript/tail-state.ts';
import { releasedStatus } from './postgres-writer.ts';
import { SQL } from './sql.ts';

/** A batch is sent once it holds this many bytes of lines (or {@link BATCH_LINES} lines). */
const BATCH_BYTES = 1024 * 1024;
const BATCH_LINES = 2000;

/**
 * What an import stored.
 *
 * @example
 * const stored: ImportedRun = { records: 6, bytes: 1834 };
 */
export interface ImportedRun {
  records: number;
  bytes: number;
}

/**
 * Bring a run into the store from the bytes of a v1 transcript, given as a stream of chunks
 * cut anywhere: every line checked (checksum, fields, seqs from 0) and stored byte for byte,
 * in batches of about 1 MiB, all in one transaction — so nobody sees the run before its last
 * line is in, and bad bytes (named by line) leave nothing behind. Memory: one batch and one
 * line (a line is kept whole, as the store keeps it), whatever the size of the stream. A run
 * of that name is refused (`exists`) before the first chunk is read.
 *
 * @example
 * await importRun(pool, '"llm_agent"', 'postgres://db#report-42', 'report-42', [bytes]);
 */
export async function importRun(
  pool: Pool,
  schema: string,
  path: string,
  run: string,
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
): Promise<ImportedRun> {
  const client = await pool.connect();
  let done = false;
  try {
    await client.query('BEGIN');
    const created = await client.query(SQL.IMPORT_RUN(schema), [run]);
    if (created.rowCount === 0)
      throw new TranscriptError('exists', path, `${path}: a run of that name exists`);
    const batches = new LineBatches(client, schema, path, run);
    for await (const chunk of chunks) await batches.feed(chunk);
    const state = await batches.finish();
    await client.query(SQL.IMPORT_DONE(schema), [
      run,
      batches.records - 1,
      // A run that did not finish waits for a person before anyone spends tokens on it.
      releasedStatus(state) === 'finished' ? 'finished' : 'awaiting-approval',
      state.revivals,
      batches.bytes,
      JSON.stringify(state),
    ]);
    await client.query('COMMIT');
    done = true;
    return { records: batches.records, bytes: batches.bytes };
  } finally {
    if (!done) await client.query('ROLLBACK').catch(() => undefined);
    client.release();
  }
}

/** Lines cut from chunks, checked, folded and sent in batches. */
class LineBatches {
  readonly #client: PoolClient;
  readonly #schema: string;
  readonly #path: string;
  readonly #run: string;
  #state: TailState = emptyTailState();
  /** The start of a line the chunks so far cut off. */
  #partial: Buffer[] = [];
  #partialBytes = 0;
  #lines: Buffer[] = [];
  #types: string[] = [];
  #batchBytes = 0;
  records = 0;
  bytes = 0;

  constructor(client: PoolClient, schema: string, path: string, run: string) {
    this.#client = client;
    this.#schema = schema;
    this.#path = path;
    this.#run = run;
  }

  async feed(chunk: Uint8Array): Promise<void> {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    for (let end = bytes.indexOf(0x0a, start); end !== -1; end = bytes.indexOf(0x0a, start)) {
      const piece = bytes.subarray(start, end + 1);
      // A copy: the chunk may be reused by its reader, and a batch outlives it.
      const line =
        this.#partial.length === 0 ? Buffer.from(piece) : Buffer.concat([...this.#partial, piece]);
      this.#partial = [];
      this.#partialBytes = 0;
      await this.#accept(line);
      start = end + 1;
    }
    if (start < bytes.length) {
      this.#partialBytes += bytes.length - start;
      if (this.#partialBytes > MAX_LINE_BYTES + 1) {
        throw this.#refusal(`longer than any record (over ${MAX_LINE_BYTES} bytes)`);
      }
      this.#partial.push(Buffer.from(bytes.subarray(start)));
    }
  }

  async finish(): Promise<TailState> {
    if (this.#partialBytes > 0)
      throw this.#refusal('the last line has no newline (a torn tail is not imported)');
    await this.#flush();
    if (this.records === 0)
      throw new TranscriptError(
        'unreadable',
        this.#path,
        `${this.#path}: nothing to import (no records)`,
      );
    return this.#state;
  }

  async #accept(line: Buffer): Promise<void> {
    const decoded = decodeFramedLine(line, this.records + this.#lines.length);
    if (!decoded.ok) throw this.#refusal(decoded.detail);
    this.#state = foldTailState(this.#state, decoded.record, line.length);
    this.#lines.push(line);
    this.#types.push(decoded.record.type);
    this.#batchBytes += line.length;
    if (this.#batchBytes >= BATCH_BYTES || this.#lines.length >= BATCH_LINES) await this.#flush();
  }

  async #flush(): Promise<void> {
    if (this.#lines.length === 0) return;
    await this.#client.query(SQL.IMPORT_LINES(this.#schema), [
      this.#run,
      this.records,
      this.#lines,
      this.#types,
    ]);
    this.records += this.#lines.length;
    this.bytes += this.#batchBytes;
    this.#lines = [];
    this.#types = [];
    this.#batchBytes = 0;
  }

  /** Bad bytes at the line being read, named by its number. */
  #refusal(reason: string): TranscriptError {
    const line = this.records + this.#lines.length + 1;
    return new TranscriptError('unreadable', this.#path, `line ${line}: ${reason}`, { line });
  }
}
