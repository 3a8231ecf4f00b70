import { readRecords } from '../../src/transcript/read-records.ts';

/*
 * Read a transcript with readRecords in a fresh process and report how much memory that took:
 * `node read-records-child.ts <path>` prints one JSON line
 * { records, bytes, baselineRss, peakRss } (bytes of RSS; peak sampled after every record).
 */

const path = process.argv[2] ?? '';
globalThis.gc?.();
const baselineRss = process.memoryUsage.rss();
let peakRss = baselineRss;
let records = 0;
let lastSeq = -1;
for await (const record of readRecords(path)) {
  records += 1;
  if (record.seq !== lastSeq + 1) throw new Error(`seq ${record.seq} after ${lastSeq}`);
  lastSeq = record.seq;
  peakRss = Math.max(peakRss, process.memoryUsage.rss());
}
process.stdout.write(`${JSON.stringify({ records, baselineRss, peakRss })}\n`);
