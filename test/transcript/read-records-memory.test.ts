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
 * readRecords streams: a child process reads a 160 MiB transcript and its resident memory
 * grows by less than a quarter of the file size. The file
 * is made quickly by encoding 64 KiB lines and writing them in 8 MiB batches.
 */

const MiB = 1024 * 1024;
const FILE_BYTES = 160 * MiB;
const GROWTH_BOUND = 40 * MiB;
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

test('readRecords reads a transcript far larger than the memory it uses', async () => {
  const folder = await makeTempFolder();
  try {
    const path = join(folder, 'large.jsonl');
    const written = writeLargeTranscript(path);
    assert.ok(written.bytes >= 4 * GROWTH_BOUND, 'the file is at least 4 times the bound');
    const { stdout } = await promisify(execFile)(process.execPath, [CHILD, path], {
      maxBuffer: MiB,
    });
    const report = JSON.parse(stdout) as { records: number; baselineRss: number; peakRss: number };
    const growth = report.peakRss - report.baselineRss;
    console.log(
      `read ${report.records} records, ${(written.bytes / MiB).toFixed(0)} MiB; RSS grew ${(growth / MiB).toFixed(1)} MiB`,
    );
    assert.equal(report.records, written.records);
    assert.ok(growth < GROWTH_BOUND, `RSS grew ${growth} bytes reading ${written.bytes}`);
  } finally {
    await removeFolder(folder);
  }
});
