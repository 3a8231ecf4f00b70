// @ts-check
/**
 * Child process of the revival benchmark: one `Revival.inspect` or `Revival.revive` on one
 * transcript, in a fresh process, printing its latency and the process's peak resident memory
 * (VmHWM) before and after — so the figure is the operation's, not the bench's.
 *
 * Plain JavaScript, loading the library as shipped — the compiled `dist/revival/index.js`
 * (bench/run.ts builds it first when src/ is newer) — so that the process is what a user's
 * process is: a `.ts` script makes Node load its type stripper (about 17 MiB), and the sources
 * through it cost about 16 MiB more again. `BENCH_REVIVAL_SOURCE=1` loads
 * `src/revival/index.ts` instead.
 *
 * @example
 * node bench/revival-child.mjs revive bench/data/revivable-104857600.jsonl 1000
 */
import { readFileSync } from 'node:fs';

const FROM_SOURCE = process.env.BENCH_REVIVAL_SOURCE === '1';
const REVIVAL_MODULE = FROM_SOURCE ? '../src/revival/index.ts' : '../dist/revival/index.js';

/** Peak resident set size of this process so far, in bytes (Linux: VmHWM; else maxRSS). */
function peakRssBytes() {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    if (match?.[1] !== undefined) return Number(match[1]) * 1024;
  } catch {
    // Not Linux: fall through.
  }
  return process.resourceUsage().maxRSS * 1024;
}

async function main() {
  const [operation, path = '', cap = '1000'] = process.argv.slice(2);
  const { Revival } = await import(REVIVAL_MODULE);
  const maxRevivals = Number(cap);
  const baseline = peakRssBytes();
  const started = performance.now();
  let outcome;
  let session;
  if (operation === 'inspect') {
    const found = await Revival.inspect({ path, maxRevivals });
    outcome = found.revivable ? 'revivable' : `not revivable: ${found.reason}`;
  } else {
    const revived = await Revival.revive({ path, agentId: 'main', maxRevivals });
    outcome = revived.ok ? 'revived' : `refused: ${revived.reason}`;
    session = revived.ok ? revived.session : undefined;
  }
  const ms = performance.now() - started;
  await session?.close();
  const figures = {
    ms,
    outcome,
    baselineRssBytes: baseline,
    peakRssBytes: peakRssBytes(),
    module: REVIVAL_MODULE,
  };
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}

await main();
