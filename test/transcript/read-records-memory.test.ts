import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { encodeLine } from '../../src/transcript/line-codec.ts';
import { makeTempFolder, metaBody, removeFolder, textMessage } from '../support/transcripts.ts';

/*
 * readRecords streams: a child process whose JavaScript heap is capped at 64 MB reads a
 * 160 MiB transcript to its end. The cap is the proof, not a measurement: the same read keeping
 * every record runs out of heap under it, so a reader that held the file could not finish.
 * (How much memory the read takes is printed here and measured by bench/memory-section.ts.)
 * The file is made quickly by encoding 64 KiB lines and writing them in 8 MiB batches.
 */

const MiB = 1024 * 1024;
const FILE_BYTES = 160 * MiB;
const HEAP_CAP_MB = 64;
const CHILD = fileURLToPath(new URL('../support/read-records-child.ts', import.meta.url));

function writeLargeTranscript(path: string): { records: number; bytes: number } {
  const fd = openSync(path, 'w', 0o600);
  const text = 'streaming '.repeat(6500);
  let batch: Buffer[] = [];
  let batchBytes = 0;
  let bytes = 0;
  let seq = 0;
  const flush = () => {
    writeSync(fd, Buffer.concat(batch, batchBytes));
    batch = [];
    batchBytes = 0;
  };
  try {
    while (bytes < FILE_BYTES) {
      const body = seq === 0 ? metaBody() : textMessage('user', `${seq} ${text}`);
      const line = encodeLine({ v: 1, seq, at: '2026-01-01T00:00:00.000Z' }, body).bytes;
      batch.push(line);
      batchBytes += line.length;
      bytes += line.length;
      seq += 1;
      if (batchBytes >= 8 * MiB) flush();
    }
    flush();
  } finally {
    closeSync(fd);
  }
  return { records: seq, bytes };
}

test('readRecords reads a transcript far larger than the memory it may use', async () => {
  const folder = await makeTempFolder();
  try {
    const path = join(folder, 'large.jsonl');
    const written = writeLargeTranscript(path);
    assert.ok(written.bytes >= 2 * HEAP_CAP_MB * MiB, 'the file is at least twice the cap');
    const read = (...extra: string[]) =>
      promisify(execFile)(
        process.execPath,
        [`--max-old-space-size=${HEAP_CAP_MB}`, CHILD, path, ...extra],
        { maxBuffer: MiB },
      );
    // The cap holds: keeping every record does not fit under it.
    await assert.rejects(read('hold'), /heap out of memory|Allocation failed/);
    const { stdout } = await read();
    const report = JSON.parse(stdout) as { records: number; baselineRss: number; peakRss: number };
    console.log(
      `read ${report.records} records, ${(written.bytes / MiB).toFixed(0)} MiB, under a ${HEAP_CAP_MB} MB heap; RSS grew ${((report.peakRss - report.baselineRss) / MiB).toFixed(1)} MiB`,
    );
    assert.equal(report.records, written.records);
  } finally {
    await removeFolder(folder);
  }
});
