import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { random, writeTranscript } from './status-corpus.ts';

const GENERATOR_VERSION = 4;

/**
 * The conversation a run carries before it compacts: about 100k tokens at four bytes a token,
 * a model's context budget in the Loop's terms (src/loop/compaction.ts).
 */
export const COMPACT_ABOVE_BYTES = 400_000;

/**
 * A revivable transcript of about `bytes` (an assistant turn whose call was dispatched and
 * never settled, after many ordinary turns), written through a real Session so that it has
 * the writer's checkpoints. It is compacted the way a long run is: whenever the conversation
 * since the last compaction passes {@link COMPACT_ABOVE_BYTES}, a `compaction` replaces
 * everything from the first user turn up to the last turn by a short summary — a 1 GiB run
 * that never compacted would hand its model a 1 GiB conversation, which none accepts. Made
 * once under `dataFolder` and reused while its stamp matches.
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
  await rm(`${path}.owner`, { force: true });
  // The writer's size estimate runs about 4% short: aim above, so a "1 GiB" file is one.
  await writeTranscript(
    path,
    'revivable',
    bytes * 1.07,
    random(bytes % 1_000_003),
    { agentId: 'main' },
    { compactAboveBytes: COMPACT_ABOVE_BYTES },
  );
  const size = (await stat(path)).size;
  await writeFile(stampPath, JSON.stringify({ version: GENERATOR_VERSION, size }));
  return { path, bytes: size, generatedMs: performance.now() - started };
}
