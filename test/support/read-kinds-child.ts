import { inspectTranscript } from '../../src/revival/inspect.ts';
import { readTailState } from '../../src/transcript/read-tail-state.ts';
import { blockingReadFileSystem } from '../../src/transcript/file-system.ts';
import { peek } from '../../src/transcript/peek.ts';

/*
 * Read one path every way a read-only command does — peek, inspect, the tail read `status`
 * makes through the blocking file system — in a fresh process, so that a test can bound the
 * time it takes (a read that blocked on a FIFO would hang the process, not the test):
 * `node read-kinds-child.ts <path>` prints one JSON line { peek, inspect, status }, each the
 * reason and detail it answered.
 */

const path = process.argv[2] ?? '';
const peeked = await peek(path);
const inspected = await inspectTranscript({ path, maxRevivals: 2 });
const status = await readTailState(path, { fileSystem: blockingReadFileSystem });
const answer = (value: { ok?: boolean; reason?: string; detail?: string }) => ({
  reason: value.ok === true ? 'ok' : value.reason,
  detail: value.detail,
});
process.stdout.write(
  `${JSON.stringify({
    peek: answer(peeked),
    inspect: answer({ reason: inspected.reason ?? 'revivable', detail: inspected.detail ?? '' }),
    status: answer(status),
  })}\n`,
);
