import { describeError } from './transcript-error.ts';
import type { FileSystem } from './file-system.ts';
import { decodeLine } from './line-codec.ts';
import type { ForeignRecord, TranscriptRecord } from './records.ts';
import type { LineInfo } from './scan-transcript.ts';
import { isKnownRecord } from './validate-record.ts';
import { ViewSurvivors } from './view-survivors.ts';

/**
 * What {@link ViewLineIndex.read} found.
 *
 * @example
 * const lines = new ViewLineIndex(); // fed by a scan first, as ViewLineIndex shows
 * const read: ViewLinesRead = await lines.read(path, nodeFileSystem);
 * if (!read.ok) console.error(read.reason, read.detail);
 */
export type ViewLinesRead =
  | { ok: true; records: (TranscriptRecord | ForeignRecord)[] }
  | { ok: false; reason: 'io-error' | 'changed'; detail: string };

/** Lines closer than this are read together, with the bytes between them. */
const GAP_BYTES = 64 * 1024;
/** …as long as one read stays under this. */
const SPAN_BYTES = 1024 * 1024;

/**
 * The conversation view of a transcript being streamed, held as where its lines lie: for each
 * message and compaction summary that survives the compactions seen so far, its line's offset
 * and length — a few numbers, whatever the message holds. Once the stream ends,
 * {@link ViewLineIndex.read} reads those lines back, and `conversationView` of what it returns
 * is `conversationView` of the whole transcript (the records it leaves out are exactly those
 * some compaction removed, which no other record's place depends on).
 *
 * Why not hold the messages themselves ({@link ConversationViewBuilder})? Each one held until a
 * compaction drops it outlives many young-generation collections, and V8 sizes its young
 * generation by what survives: streaming a 1 GiB transcript while holding its messages cost
 * 30–40 MiB more peak memory than holding their positions (bench/revival-child.mjs).
 *
 * @example
 * const lines = new ViewLineIndex();
 * await scanTranscript(path, { onRecord: (record, info) => lines.add(record, info) });
 * const read = await lines.read(path, nodeFileSystem);
 * if (read.ok) console.log(conversationView(read.records));
 */
export class ViewLineIndex {
  readonly #survivors = new ViewSurvivors();

  /** How many lines are held now (the view's messages and summaries so far). */
  get held(): number {
    return this.#survivors.size;
  }

  /** Take the next record in file order, with where its line lies. Never throws. */
  add(record: TranscriptRecord | ForeignRecord, info: LineInfo): void {
    if (!isKnownRecord(record)) return;
    if (record.type === 'message') {
      this.#survivors.addMessage(record.seq, info.offset, info.length);
    } else if (record.type === 'compaction') {
      this.#survivors.addCompaction(
        record.seq,
        record.fromSeq,
        record.toSeq,
        info.offset,
        info.length,
      );
    }
  }

  /**
   * Read the surviving records back from `path`, in file order; each line is checked (checksum,
   * fields) as a scan checks it. The lines are only ever appended to, so they read back as they
   * were while the writer lock is held; a line that does not (the file was changed under the
   * lock) is `changed`. Never throws: a failed read is `io-error`.
   */
  async read(path: string, fileSystem: FileSystem): Promise<ViewLinesRead> {
    const lines = this.#survivors
      .inViewOrder()
      .map(({ seq, a, b }) => ({ seq, offset: a, length: b }))
      .sort((left, right) => left.offset - right.offset);
    const records: (TranscriptRecord | ForeignRecord)[] = [];
    let fd: number;
    try {
      fd = await fileSystem.open(path, 'read');
    } catch (error) {
      return {
        ok: false,
        reason: 'io-error',
        detail: `${path}: cannot read (${describeError(error)})`,
      };
    }
    try {
      for (let first = 0; first < lines.length; ) {
        // One read for a run of lines close together.
        let last = first;
        const start = (lines[first] as { offset: number }).offset;
        let end = start + (lines[first] as { length: number }).length;
        while (last + 1 < lines.length) {
          const next = lines[last + 1] as { offset: number; length: number };
          const nextEnd = next.offset + next.length;
          if (next.offset - end > GAP_BYTES || nextEnd - start > SPAN_BYTES) break;
          end = Math.max(end, nextEnd);
          last += 1;
        }
        const bytes = Buffer.allocUnsafe(end - start);
        let filled = 0;
        while (filled < bytes.length) {
          const read = await fileSystem.read(fd, bytes.subarray(filled), start + filled);
          if (read === 0) break;
          filled += read;
        }
        for (let index = first; index <= last; index += 1) {
          const line = lines[index] as { seq: number; offset: number; length: number };
          const from = line.offset - start;
          const decoded =
            from + line.length <= filled
              ? decodeLine(bytes.subarray(from, from + line.length - 1))
              : null;
          if (decoded === null || !decoded.ok || decoded.record.seq !== line.seq) {
            const why =
              decoded === null
                ? 'the file ends before it'
                : decoded.ok
                  ? `seq ${decoded.record.seq}, not ${line.seq}`
                  : decoded.message;
            return {
              ok: false,
              reason: 'changed',
              detail: `${path}: the line at byte ${line.offset} no longer reads as it did (${why})`,
            };
          }
          records.push(decoded.record);
        }
        first = last + 1;
      }
      return { ok: true, records };
    } catch (error) {
      return {
        ok: false,
        reason: 'io-error',
        detail: `${path}: cannot read (${describeError(error)})`,
      };
    } finally {
      await fileSystem.close(fd).catch(() => undefined);
    }
  }
}
