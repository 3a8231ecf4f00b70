import type { FileSystem } from './file-system.ts';
import type { ForeignRecord, TranscriptRecord } from './records.ts';
import { scanRecords } from './scan-transcript.ts';
import { TranscriptError } from './transcript-error.ts';

/**
 * Stream a transcript's records in file order, in constant memory (beyond the longest line),
 * for transcripts larger than memory. A torn tail ends the stream quietly (it is a crash's
 * leftovers, not records); damage throws a {@link TranscriptError} `unreadable` naming the line —
 * after the records before it have been yielded. Use {@link peek} for an answer that never
 * throws.
 *
 * @example
 * for await (const record of readRecords('runs/a.jsonl')) {
 *   if (record.type === 'message') console.log(record.role);
 * }
 */
export async function* readRecords(
  path: string,
  options: { fileSystem?: FileSystem } = {},
): AsyncGenerator<TranscriptRecord | ForeignRecord, void, undefined> {
  const iterator = scanRecords(path, options);
  for (;;) {
    const step = await iterator.next();
    if (step.done !== true) {
      yield step.value.record;
      continue;
    }
    const result = step.value;
    if (!result.ok) {
      throw new TranscriptError(
        result.reason === 'io-error' ? 'io' : 'unreadable',
        path,
        result.detail,
        result.line === undefined ? {} : { line: result.line },
      );
    }
    return;
  }
}
