import { rm, stat, truncate } from 'node:fs/promises';
import { bigTranscript } from './big-transcript.ts';
import { median, runChild } from './run-child.ts';

interface ChildFigures {
  ms: number;
  outcome: string;
  baselineRssBytes: number;
  peakRssBytes: number;
}

/** One transcript size's revival figures. */
export interface RevivalSize {
  targetBytes: number;
  bytes: number;
  inspectMs: number[];
  inspectMedianMs: number;
  inspectOutcome: string;
  inspectPeakRssBytes: number;
  /** The process's peak before the operation: Node plus the library's modules. */
  inspectBaselineRssBytes: number;
  reviveMs: number | null;
  reviveOutcome: string;
  revivePeakRssBytes: number | null;
  reviveBaselineRssBytes: number | null;
}

/** Goal 4's figures (and the inspect latencies on our own revivable transcripts). */
export interface RevivalSection {
  sizes: RevivalSize[];
}

const CHILD = new URL('./revival-child.mjs', import.meta.url).pathname;

/**
 * Goal 4: for each size, `Revival.inspect` five times and `Revival.revive` once on a
 * generated revivable transcript, each in a fresh process that reports its latency and peak
 * RSS. A revive appends to the file; the bench truncates it back afterwards (and removes the
 * lock file if the revive created it), so the generated file is reused unchanged.
 *
 * @example
 * const section = await revivalSection('bench/data', [100 * 2 ** 20], console.log);
 */
export async function revivalSection(
  dataFolder: string,
  sizes: number[],
  log: (line: string) => void,
): Promise<RevivalSection> {
  const results: RevivalSize[] = [];
  for (const target of sizes) {
    const { path, bytes } = await bigTranscript(dataFolder, target, log);
    const inspects: ChildFigures[] = [];
    let inspectOutcome = '';
    for (let run = 0; run < 5; run += 1) {
      const answer = await runChild<ChildFigures>(CHILD, ['inspect', path, '1000']);
      if (!answer.ok) {
        inspectOutcome = answer.reason;
        break;
      }
      inspects.push(answer.value);
      inspectOutcome = answer.value.outcome;
    }
    const nametagExisted = await stat(`${path}.owner`).then(
      () => true,
      () => false,
    );
    const revived = await runChild<ChildFigures>(CHILD, ['revive', path, '1000']);
    await truncate(path, bytes);
    if (!nametagExisted) await rm(`${path}.owner`, { force: true });
    const row: RevivalSize = {
      targetBytes: target,
      bytes,
      inspectMs: inspects.map((figures) => figures.ms),
      inspectMedianMs: median(inspects.map((figures) => figures.ms)),
      inspectOutcome,
      inspectPeakRssBytes: Math.max(0, ...inspects.map((figures) => figures.peakRssBytes)),
      inspectBaselineRssBytes: Math.max(0, ...inspects.map((figures) => figures.baselineRssBytes)),
      reviveMs: revived.ok ? revived.value.ms : null,
      reviveOutcome: revived.ok ? revived.value.outcome : revived.reason,
      revivePeakRssBytes: revived.ok ? revived.value.peakRssBytes : null,
      reviveBaselineRssBytes: revived.ok ? revived.value.baselineRssBytes : null,
    };
    results.push(row);
    log(
      `  ${(bytes / 1048576).toFixed(0)} MiB: inspect ${row.inspectMedianMs.toFixed(1)} ms, ` +
        `revive ${row.reviveMs === null ? row.reviveOutcome : `${row.reviveMs.toFixed(0)} ms`}`,
    );
  }
  return { sizes: results };
}
