/*
 * Benchmark (a script, not a test): how long `Revival.inspect` takes on generated 10 MB,
 * 100 MB and 1 GiB transcripts, next to a full parse of the same files (every line read,
 * checksummed, parsed, validated and folded — what inspect would cost without checkpoints).
 *
 *   npm run bench:inspect            # 10 MB, 100 MB, 1 GiB
 *   npm run bench:inspect -- --quick # 10 MB only
 *
 * Transcripts are written once through the real Session writer (so they carry its
 * checkpoints) under bench/data (or $BENCH_DATA) and reused while their stamp matches.
 */
import { open } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Revival } from '../src/revival/index.ts';
import { readTailState } from '../src/transcript/read-tail-state.ts';
import { bigTranscript } from './big-transcript.ts';

/**
 * Unmeasured inspects before the timed ones, so that inspect runs as warm as the full parse
 * it is compared with. Fifty left the first file's inspect slower than the next files' in one
 * run (1.1 ms against 0.7 ms, the code not yet fully optimised).
 */
const WARM_UP_RUNS = 200;

/** One transcript size, measured. */
export interface InspectMeasurement {
  bytes: number;
  /** Median of the inspect runs, in milliseconds. */
  inspectMs: number;
  /** The first inspect of the file in the process, in milliseconds (cold code on the first file). */
  firstInspectMs: number;
  /** One full parse (median when repeated), in milliseconds. */
  fullParseMs: number;
  /** fullParseMs / inspectMs. */
  ratio: number;
  /** The seq of the checkpoint inspect started from (null: it read from the start). */
  fromCheckpoint: number | null;
  revivable: boolean;
}

export const DEFAULT_SIZES = [10 * 1024 * 1024, 100 * 1024 * 1024, 1024 * 1024 * 1024];

/**
 * Measure inspect against a full parse for each size.
 *
 * @example
 * const rows = await measureInspect({ sizes: [10 * 1024 * 1024], log: console.log });
 */
export async function measureInspect(
  options: {
    sizes?: number[];
    dataFolder?: string;
    log?: (line: string) => void;
    inspectRuns?: number;
  } = {},
): Promise<InspectMeasurement[]> {
  const sizes = options.sizes ?? DEFAULT_SIZES;
  const dataFolder =
    options.dataFolder ??
    process.env.BENCH_DATA ??
    fileURLToPath(new URL('./data', import.meta.url));
  const log = options.log ?? (() => undefined);
  const rows: InspectMeasurement[] = [];
  for (const size of sizes) {
    const { path, bytes } = await bigTranscript(dataFolder, size, log);
    const inspectTimes: number[] = [];
    let revivable = false;
    // The first call is reported on its own (on the first file it also compiles the code);
    // then unmeasured runs, so that inspect is timed as warm as a full parse — which runs long
    // enough to warm itself up — is: the same footing for both.
    const firstStarted = performance.now();
    await Revival.inspect({ path, maxRevivals: 3 });
    const firstInspectMs = performance.now() - firstStarted;
    for (let run = 0; run < WARM_UP_RUNS; run++) await Revival.inspect({ path, maxRevivals: 3 });
    for (let run = 0; run < (options.inspectRuns ?? 9); run++) {
      const started = performance.now();
      const found = await Revival.inspect({ path, maxRevivals: 3 });
      inspectTimes.push(performance.now() - started);
      revivable = found.revivable;
    }
    const tail = await readTailState(path);
    // The status section runs first and empties the page cache: read the file through once,
    // so that the full parse is timed warm, as inspect is.
    await readThrough(path);
    const parseTimes: number[] = [];
    for (let run = 0; run < (bytes > 200 * 1024 * 1024 ? 1 : 3); run++) {
      const started = performance.now();
      const full = await readTailState(path, { strategy: 'full' });
      parseTimes.push(performance.now() - started);
      if (!full.ok || !tail.ok) throw new Error(`${path}: cannot be read`);
      if (JSON.stringify(full.state) !== JSON.stringify(tail.state)) {
        throw new Error(`${path}: the fast path and the full parse disagree`);
      }
    }
    const inspectMs = median(inspectTimes);
    const fullParseMs = median(parseTimes);
    rows.push({
      bytes,
      inspectMs,
      firstInspectMs,
      fullParseMs,
      ratio: fullParseMs / inspectMs,
      fromCheckpoint: tail.ok ? tail.fromCheckpoint : null,
      revivable,
    });
    log(format(rows.at(-1) as InspectMeasurement));
  }
  return rows;
}

/** Read a file to its end and drop the bytes: it is then in the page cache. */
async function readThrough(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(4 * 1024 * 1024);
    while ((await handle.read(buffer, 0, buffer.length, null)).bytesRead > 0) {
      // Only the reading matters.
    }
  } finally {
    await handle.close();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

function format(row: InspectMeasurement): string {
  const size = `${(row.bytes / 1048576).toFixed(0)} MiB`.padStart(9);
  return `${size}  inspect ${row.inspectMs.toFixed(2).padStart(9)} ms   full parse ${row.fullParseMs.toFixed(0).padStart(7)} ms   ×${row.ratio.toFixed(0).padStart(6)}   from checkpoint seq ${row.fromCheckpoint ?? '— (none)'}${row.revivable ? '' : '  (not revivable!)'}`;
}

if (import.meta.main) {
  const quick = process.argv.includes('--quick');
  console.log(
    'Revival.inspect against a full parse (median of runs; the file is in the page cache)',
  );
  await measureInspect({
    sizes: quick ? DEFAULT_SIZES.slice(0, 1) : DEFAULT_SIZES,
    log: console.log,
  });
}
