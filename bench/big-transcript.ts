import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { random, writeTranscript } from './status-corpus.ts';

const GENERATOR_VERSION = 3;

/**
 * A revivable transcript of about `bytes` (an assistant turn whose call was dispatched and
 * never settled, after many ordinary turns), written through a real Session so that it has
 * the writer's checkpoints. Made once under `dataFolder` and reused while its stamp matches.
 *
 * @example
 * const path = await bigTranscript('bench/data', 100 * 1024 * 1024);
 */
export async function bigTranscript(
  dataFolder: string,
  bytes: number,
  log: (line: string) => void = () => undefined,
): Promise<{ path: string; bytes: number; generatedMs: number }> {
  const path = join(dataFolder, `revivable-${bytes}.jsonl`);
  const stampPath = `${path}.stamp.json`;
  try {
    const stamp = JSON.parse(await readFile(stampPath, 'utf8')) as {
      version: number;
      size: number;
    };
    const size = (await stat(path)).size;
    if (stamp.version === GENERATOR_VERSION && stamp.size === size) {
      return { path, bytes: size, generatedMs: 0 };
    }
  } catch {
    // Absent or stale: generate below.
  }
  log(`  generating a ${Math.round(bytes / 1048576)} MiB revivable transcript (reused later)`);
  const started = performance.now();
  await rm(path, { force: true });
  await rm(`${path}.lock`, { force: true });
  // The writer's size estimate runs about 4% short: aim above, so a "1 GiB" file is one.
  await writeTranscript(path, 'revivable', bytes * 1.07, random(bytes % 1_000_003), {
    agentId: 'main',
  });
  const size = (await stat(path)).size;
  await writeFile(stampPath, JSON.stringify({ version: GENERATOR_VERSION, size }));
  return { path, bytes: size, generatedMs: performance.now() - started };
}
