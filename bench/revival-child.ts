/**
 * Child process of the revival benchmark: one `Revival.inspect` or `Revival.revive` on one
 * transcript, in a fresh process, printing its latency and the process's peak resident memory
 * (VmHWM) before and after — so the figure is the operation's, not the bench's.
 *
 * @example
 * node bench/revival-child.ts revive bench/data/revivable-104857600.jsonl 1000
 */
import { readFileSync } from 'node:fs';

interface RevivalLike {
  inspect(options: {
    path: string;
    maxRevivals: number;
  }): Promise<{ revivable: boolean; reason?: string }>;
  revive(options: {
    path: string;
    agentId: string;
    maxRevivals: number;
  }): Promise<{ ok: boolean; reason?: string; session?: { close(): Promise<void> } }>;
}

const REVIVAL_MODULE = '../src/revival/index.ts';

/** Peak resident set size of this process so far, in bytes (Linux: VmHWM; else maxRSS). */
export function peakRssBytes(): number {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    if (match?.[1] !== undefined) return Number(match[1]) * 1024;
  } catch {
    // Not Linux: fall through.
  }
  return process.resourceUsage().maxRSS * 1024;
}

async function main(): Promise<void> {
  const [operation, path = '', cap = '1000'] = process.argv.slice(2);
  const { Revival } = (await import(REVIVAL_MODULE)) as { Revival: RevivalLike };
  const maxRevivals = Number(cap);
  const baseline = peakRssBytes();
  const started = performance.now();
  let outcome: string;
  if (operation === 'inspect') {
    const found = await Revival.inspect({ path, maxRevivals });
    outcome = found.revivable ? 'revivable' : `not revivable: ${found.reason}`;
  } else {
    const revived = await Revival.revive({ path, agentId: 'main', maxRevivals });
    outcome = revived.ok ? 'revived' : `refused: ${revived.reason}`;
    const ms = performance.now() - started;
    await revived.session?.close();
    process.stdout.write(
      `${JSON.stringify({ ms, outcome, baselineRssBytes: baseline, peakRssBytes: peakRssBytes() })}\n`,
    );
    return;
  }
  const ms = performance.now() - started;
  process.stdout.write(
    `${JSON.stringify({ ms, outcome, baselineRssBytes: baseline, peakRssBytes: peakRssBytes() })}\n`,
  );
}

await main();
