import type { FileSystem } from './file-system.ts';
import type { ForeignRecord, TranscriptRecord } from './records.ts';
import type { DamagedTail } from './classify-tail.ts';
import { scanRecords, type TornTail, type UnreadableReason } from './scan-transcript.ts';

/**
 * What {@link peek} found.
 *
 * @example
 * const found: PeekResult = await peek('runs/a.jsonl');
 * if (found.ok) console.log(found.records.length, found.torn !== null);
 */
export type PeekResult =
  | {
      ok: true;
      records: (TranscriptRecord | ForeignRecord)[];
      /** `torn-tail`: a crash's leftovers (or a write in progress) follow the last record. */
      state: 'clean' | 'torn-tail';
      torn?: TornTail;
      validBytes: number;
    }
  | {
      ok: false;
      reason: UnreadableReason;
      detail: string;
      line?: number;
      /** Damage that ends the file, which `Session.open`'s `salvageDamagedTail` would cut off. */
      salvage?: DamagedTail;
    };

/**
 * Read a transcript without writing anything: no file created, no byte changed, no lock
 * taken. It never throws — a missing file, a folder, junk, a newer version or an I/O error is
 * an answer with a reason — and it can read a file another process is appending to right now
 * (a line being written shows as a torn tail).
 *
 * @example
 * const result = await peek('runs/a.jsonl');
 * if (result.ok) console.log(result.records.length, result.state);
 * else console.error(result.detail);
 */
export async function peek(
  path: string,
  options: { fileSystem?: FileSystem } = {},
): Promise<PeekResult> {
  try {
    const records: (TranscriptRecord | ForeignRecord)[] = [];
    const iterator = scanRecords(path, options);
    for (;;) {
      const step = await iterator.next();
      if (step.done !== true) {
        records.push(step.value.record);
        continue;
      }
      const result = step.value;
      if (!result.ok) {
        const failure: PeekResult = { ok: false, reason: result.reason, detail: result.detail };
        if (result.line !== undefined) failure.line = result.line;
        if (result.salvage !== undefined) failure.salvage = result.salvage;
        return failure;
      }
      const found: PeekResult = {
        ok: true,
        records,
        state: result.state,
        validBytes: result.validBytes,
      };
      if (result.torn !== undefined) found.torn = result.torn;
      return found;
    }
  } catch (error) {
    // scanRecords reports its own failures; this is the last guard of the contract.
    return { ok: false, reason: 'io-error', detail: `${path}: ${String(error)}` };
  }
}
