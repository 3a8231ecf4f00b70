import type { InspectSection } from './bench-results.ts';
import { DEFAULT_SIZES, type InspectMeasurement } from './inspect.ts';
import { runChild } from './run-child.ts';

const CHILD = new URL('./inspect-child.ts', import.meta.url).pathname;

/**
 * Goal 1, measured by bench/inspect.ts (`Revival.inspect`, median of nine, against
 * a full parse of the same file, on the generated 10 MB / 100 MB / 1 GiB transcripts that the
 * revival section uses too). This only calls it and reshapes its answer.
 *
 * @example
 * const section = await inspectSection(false, 'bench/data', console.log);
 */
export async function inspectSection(
  quick: boolean,
  dataFolder: string,
  log: (line: string) => void,
): Promise<InspectSection> {
  try {
    // In a process of its own (bench/inspect-child.ts says why).
    const answer = await runChild<InspectMeasurement[]>(
      CHILD,
      [JSON.stringify({ sizes: quick ? DEFAULT_SIZES.slice(0, 2) : DEFAULT_SIZES, dataFolder })],
      undefined,
      (line) => log(`  ${line.trim()}`),
    );
    if (!answer.ok) throw new Error(answer.reason);
    const rows = answer.value;
    return {
      ok: true,
      source:
        'bench/inspect.ts in a process of its own, median of 9 inspects after 200 unmeasured ones, page cache warm',
      sizes: rows.map((row) => ({
        bytes: row.bytes,
        inspectMs: row.inspectMs,
        firstInspectMs: row.firstInspectMs,
        fullParseMs: row.fullParseMs,
        ratio: row.ratio,
      })),
    };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
}
