import type { ScanResult } from './classify-tail.ts';
import { type FileSystem, nodeFileSystem } from './file-system.ts';
import { findSeqOffset } from './find-seq-offset.ts';
import { type ScannedRecord, scanRecords } from './scan-transcript.ts';
import { type TailState, uncompactedRanges } from './tail-state.ts';

/**
 * The records of a transcript that no compaction removed, in file order, read without the
 * records compactions did remove: what the conversation view is built from, and every record
 * after the last compaction (the run's tail among them). Each range of seqs outside
 * `state.compacted` is found by {@link findSeqOffset} and scanned as a full scan scans — every
 * line checksum-verified, every seq the one expected — so damage inside a range refuses as it
 * would in a full scan; damage in a compacted range is never read, and so never seen.
 *
 * `state` is the transcript's state as a checkpoint and the records after it give it (the
 * session's, under its writer lock: the file holds still). It returns the scan's result for
 * the last range, which ends the file, or null when the ranges cannot be located or do not
 * read as the state says (an unknown `compacted`, a line start that does not read as one, a
 * range ending early): the caller then reads every record, which decides. Never throws.
 *
 * @example
 * const builder = new ConversationViewBuilder();
 * const iterator = scanUncompacted(session.path, session.state);
 * let step = await iterator.next();
 * for (; step.done !== true; step = await iterator.next()) builder.add(step.value.record);
 * if (step.value === null) console.log('read every record instead');
 */
export async function* scanUncompacted(
  path: string,
  state: Pick<TailState, 'compacted' | 'lastSeq'>,
  options: { fileSystem?: FileSystem } = {},
): AsyncGenerator<ScannedRecord, ScanResult | null, undefined> {
  const ranges = uncompactedRanges(state);
  if (ranges === null || ranges.length === 0) return null;
  const fileSystem = options.fileSystem ?? nodeFileSystem;
  let fd: number;
  try {
    fd = await fileSystem.open(path, 'read');
  } catch {
    return null;
  }
  try {
    const size = await fileSystem.size(fd);
    for (const [index, [from, to]] of ranges.entries()) {
      const last = index === ranges.length - 1;
      const offset = from === 0 ? 0 : await findSeqOffset(fileSystem, fd, size, from);
      if (offset === null) return null;
      const iterator = scanRecords(path, {
        fileSystem,
        fd,
        start: { offset, seq: from, line: from + 1 },
        // Nothing prefetched: the scan then starts with a small read and doubles it, so a
        // short range costs a few KiB, not a read sized to the rest of the file.
        prefetched: { bytes: Buffer.alloc(0), atEnd: false },
      });
      for (;;) {
        const step = await iterator.next();
        if (step.done === true) {
          if (!step.value.ok) return step.value;
          if (!last || step.value.lastSeq !== to) return null;
          return step.value;
        }
        if (step.value.record.seq > to && !last) {
          await iterator.return(undefined as never);
          break;
        }
        yield step.value;
      }
    }
    return null;
  } catch {
    return null;
  } finally {
    await fileSystem.close(fd).catch(() => undefined);
  }
}
