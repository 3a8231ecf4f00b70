import { readRecords } from '../../src/transcript/read-records.ts';

/*
 * Read a transcript with readRecords in a fresh process and report how much memory that took:
 * `node read-records-child.ts <path> [hold]` prints one JSON line
 * { records, baselineRss, peakRss } (bytes of RSS; peak sampled after every record). With
 * `hold`, every record is kept, as a reader that does not stream would.
 */

const path = process.argv[2] ?? '';
const held: unknown[] = [];
const hold = process.argv[3] === 'hold';
globalThis.gc?.();
const baselineRss = process.memoryUsage.rss();
let peakRss = baselineRss;
let records = 0;
let lastSeq = -1;
for await (const record of readRecords(path)) {
  records += 1;
  if (record.seq !== lastSeq + 1) throw new Error(`seq ${record.seq} after ${lastSeq}`);
  lastSeq = record.seq;
  if (hold) held.push(record);
  peakRss = Math.max(peakRss, process.memoryUsage.rss());
}
process.stdout.write(`${JSON.stringify({ records, baselineRss, peakRss })}\n`);
