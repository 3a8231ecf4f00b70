/**
 * One read-only or reviving operation on one transcript, in its own process, for the bench's
 * memory section (bench/memory-section.ts) to measure its peak RSS from outside:
 * `node bench/memory-child.ts inspect|peek|revive PATH` prints one JSON line
 * { op, answer, maxRssBytes } — `answer` the reason or state it ended with.
 *
 * @example
 * node bench/memory-child.ts inspect bench/data/memory/junk-60mb.jsonl
 */
import { Revival } from '../src/revival/index.ts';
import { peek } from '../src/transcript/peek.ts';

const [op, path] = process.argv.slice(2);
if (path === undefined) throw new Error('usage: memory-child.ts inspect|peek|revive PATH');
let answer: string;
if (op === 'inspect') {
  const found = await Revival.inspect({ path, maxRevivals: 3 });
  answer = found.revivable ? 'revivable' : `${found.reason}: ${found.detail ?? ''}`;
} else if (op === 'peek') {
  const found = await peek(path);
  answer = found.ok ? `${found.state}, ${found.records.length} records` : found.reason;
} else if (op === 'revive') {
  const revived = await Revival.revive({ path, agentId: 'main', maxRevivals: 3 });
  answer = revived.ok ? `revived, ${revived.interrupted.length} interrupted` : revived.reason;
  if (revived.ok) await revived.session.close();
} else {
  throw new Error(`unknown op ${op}`);
}
process.stdout.write(
  `${JSON.stringify({ op, answer: answer.slice(0, 200), maxRssBytes: process.resourceUsage().maxRSS * 1024 })}\n`,
);
