import { existsSync } from 'node:fs';
import type { InspectSection } from './bench-results.ts';

const INSPECT_SCRIPT = new URL('./inspect.ts', import.meta.url);

/**
 * Goal 1, measured by helper C's bench/inspect.ts (inspect time against a full parse on
 * generated 10 MB / 100 MB / 1 GiB transcripts). This only calls it and reshapes its answer.
 *
 * @example
 * const section = await inspectSection(false, console.log);
 */
export async function inspectSection(
  quick: boolean,
  log: (line: string) => void,
): Promise<InspectSection> {
  if (!existsSync(INSPECT_SCRIPT)) {
    return { ok: false, reason: 'bench/inspect.ts (the inspect benchmark) is not in the tree yet' };
  }
  log(`  bench/inspect.ts${quick ? ' (quick)' : ''}`);
  return { ok: false, reason: 'bench/inspect.ts has no export this harness knows yet' };
}
