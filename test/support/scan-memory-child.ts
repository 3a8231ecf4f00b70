import { inspectTranscript } from '../../src/revival/inspect.ts';
import { readTailState } from '../../src/transcript/read-tail-state.ts';
import { blockingReadFileSystem } from '../../src/transcript/file-system.ts';
import { scanTranscript } from '../../src/transcript/scan-transcript.ts';

/*
 * Read one transcript one way in a fresh process and report how much memory that took:
 * `node scan-memory-child.ts scan|inspect|status <path>` prints one JSON line
 * { answer, baselineRss, peakRss } (bytes; the peak is the process's maximum resident set).
 */

const [op, path = ''] = process.argv.slice(2);
globalThis.gc?.();
const baselineRss = process.memoryUsage.rss();
let answer: string;
if (op === 'scan') {
  const result = await scanTranscript(path);
  answer = result.ok ? result.state : `${result.reason}: ${result.detail}`;
} else if (op === 'inspect') {
  const found = await inspectTranscript({ path, maxRevivals: 2 });
  answer = found.revivable ? 'revivable' : `${found.reason}: ${found.detail ?? ''}`;
} else {
  const read = await readTailState(path, { fileSystem: blockingReadFileSystem });
  answer = read.ok ? (read.torn ? 'torn' : 'clean') : `${read.reason}: ${read.detail}`;
}
const peakRss = process.resourceUsage().maxRSS * 1024;
process.stdout.write(`${JSON.stringify({ answer: answer.slice(0, 300), baselineRss, peakRss })}\n`);
