// @ts-check
/**
 * Child process of the bench's memory section (bench/memory-section.ts): one operation on one
 * transcript in a fresh process, printing one JSON line { op, answer, maxRssBytes } — `answer`
 * the reason or state it ended with, `maxRssBytes` the process's peak resident memory. Plain
 * JavaScript loading the compiled library (`dist/`), as a user's process does (see
 * bench/revival-child.mjs); `BENCH_REVIVAL_SOURCE=1` loads `src/` instead.
 *
 * @example
 * node bench/memory-child.mjs inspect bench/data/memory/junk-60mb.jsonl
 */
const FROM_SOURCE = process.env.BENCH_REVIVAL_SOURCE === '1';
const root = FROM_SOURCE ? '../src' : '../dist';
const extension = FROM_SOURCE ? 'ts' : 'js';
const { Revival } = await import(`${root}/revival/index.${extension}`);

const [op, path] = process.argv.slice(2);
if (path === undefined) throw new Error('usage: memory-child.mjs inspect|revive PATH');
let answer;
if (op === 'inspect') {
  const found = await Revival.inspect({ path, maxRevivals: 3 });
  answer = found.revivable ? 'revivable' : `${found.reason}: ${found.detail ?? ''}`;
} else if (op === 'revive') {
  const revived = await Revival.revive({ path, agentId: 'main', maxRevivals: 3 });
  answer = revived.ok
    ? `revived, ${revived.interrupted.length} interrupted`
    : `${revived.reason}: ${revived.detail}`;
  if (revived.ok) await revived.session.close();
} else {
  throw new Error(`unknown op ${op}`);
}
const maxRssBytes = process.resourceUsage().maxRSS * 1024;
process.stdout.write(`${JSON.stringify({ op, answer: answer.slice(0, 200), maxRssBytes })}\n`);
