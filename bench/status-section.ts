import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { TreeStats } from '../src/runs/inspect-tree.ts';
import { median, runChild, timeProcess } from './run-child.ts';
import { type CorpusManifest, statusCorpus } from './status-corpus.ts';

/**
 * What a `status` said of its answers (`LLM_AGENT_STATUS_STATS=1`, one line on its stderr):
 * how many came from the status index and how many transcripts were read (by worker threads),
 * and the milliseconds of each part (`start`: from the process's start to the command's).
 */
export type StatusRunStats = Omit<TreeStats, 'indexPath' | 'ms'> & { ms: Record<string, number> };

/** One timed run: its time, the 1-minute load average as it started, and its stats line. */
export interface StatusRun {
  ms: number;
  load1: number;
  /** Null when the command printed no stats line (an older build, a failure). */
  stats: StatusRunStats | null;
}

/** Goal 2's figures. */
export interface StatusSection {
  count: number;
  manifest: CorpusManifest;
  generatedMs: number;
  /** The CLI as a process, `llm-agent status FOLDER --json`, warm page cache: each run. */
  processMs: number[];
  processMedianMs: number;
  processExitCode: number | null;
  processError?: string;
  /**
   * The CLI as a process with the status index off (`LLM_AGENT_STATUS_INDEX=off`): every
   * transcript read, as on a first run over the folder. Each run; absent in older results.
   */
  readAllMs?: number[];
  readAllMedianMs?: number;
  /** Each timed run as a process, with its load average and stats line (absent in older results). */
  processRuns?: StatusRun[];
  readAllRuns?: StatusRun[];
  coldRun?: StatusRun | null;
  /** The in-process runs' stats lines. */
  commandStats?: (StatusRunStats | null)[];
  /** The same command in-process (module loading excluded): each run. */
  commandMs: number[];
  commandMedianMs: number;
  /** States the command reported, to check against the manifest. */
  statesReported: Record<string, number>;
  /** One run after dropping the page cache (root only; null when not possible). */
  coldProcessMs: number | null;
  /** Set when the section was measured on its own and merged into a full run's results. */
  measuredAt?: string;
  commit?: { id: string; dirty: boolean };
  loadAverage?: { start: number; end?: number };
  note?: string;
}

// The command as installed: the compiled bin (bench/run.ts builds it first).
const CLI = new URL('../dist/cli/main.js', import.meta.url).pathname;
const DRIVER = new URL('./status-driver.ts', import.meta.url).pathname;

function dropPageCache(): boolean {
  try {
    writeFileSync('/proc/sys/vm/drop_caches', '3\n');
    return true;
  } catch {
    return false;
  }
}

/**
 * Goal 2: `status` over a generated folder of `count` transcripts (see
 * {@link statusCorpus}): after one unmeasured run (which also leaves the status index in the
 * user's cache), the CLI timed as a process three times; three times more with the index off,
 * every transcript read; the command's own time three times (once each when a run takes over
 * 10 s), and one cold-cache process run when the bench may drop the page cache.
 *
 * @example
 * const section = await statusSection('bench/data', 10_000, true, console.log);
 */
export async function statusSection(
  dataFolder: string,
  count: number,
  cold: boolean,
  log: (line: string) => void,
): Promise<StatusSection> {
  const { folder, manifest, generatedMs } = await statusCorpus(dataFolder, count, log);
  const absolute = join(process.cwd(), folder);
  log(
    `  corpus: ${manifest.count} transcripts, ${(manifest.bytes / 1048576).toFixed(0)} MiB` +
      (generatedMs > 0 ? ` (generated in ${(generatedMs / 1000).toFixed(1)} s)` : ' (reused)'),
  );
  const processMs: number[] = [];
  const processRuns: StatusRun[] = [];
  let processExitCode: number | null = null;
  let processError: string | undefined;
  // Every run reports where its answers came from (the index or a read) on stderr.
  const withStats = { ...process.env, LLM_AGENT_STATUS_STATS: '1' };
  const timedRun = async (env: NodeJS.ProcessEnv) => {
    const load1 = loadavg()[0] ?? Number.NaN;
    const timed = await timeProcess([CLI, 'status', absolute, '--json'], env);
    return { timed, run: { ms: timed.ms, load1, stats: statsLine(timed.stderrText) } };
  };
  // Three runs each, unless one takes so long that three would only cost minutes.
  const runs = (first: number | undefined) => (first !== undefined && first > 10_000 ? 1 : 3);
  // One unmeasured run first, so that the timed ones find the folder in the page cache as they
  // claim to: the corpus is read only here, and this machine's kernel reclaims page cache that
  // has not been touched for a minute (DAMON pageout; a first run read from disk took 5.6 s).
  // Where the bench may, it empties the page cache before that run, so that the warm runs start
  // from the same state whatever ran before them (the inspect section leaves a gigabyte there).
  if (cold) dropPageCache();
  const first = await timedRun(withStats);
  log(`  unmeasured first run: ${describeRun(first.run)}`);
  for (let run = 0; run < runs(processMs[0]); run += 1) {
    const { timed, run: measured } = await timedRun(withStats);
    processMs.push(timed.ms);
    processRuns.push(measured);
    log(`  as a process: ${describeRun(measured)}`);
    processExitCode = timed.exitCode;
    if (timed.stdoutBytes === 0) processError = timed.stderr;
  }
  // What the index saves: every transcript read, as a first run over the folder does.
  const readAllMs: number[] = [];
  const readAllRuns: StatusRun[] = [];
  const readAll = { ...withStats, LLM_AGENT_STATUS_INDEX: 'off' };
  for (let run = 0; run < runs(readAllMs[0]); run += 1) {
    const { run: measured } = await timedRun(readAll);
    readAllMs.push(measured.ms);
    readAllRuns.push(measured);
    log(`  index off: ${describeRun(measured)}`);
  }
  const commandMs: number[] = [];
  const commandStats: (StatusRunStats | null)[] = [];
  let statesReported: Record<string, number> = {};
  for (let run = 0; run < runs(commandMs[0]); run += 1) {
    const answer = await runChild<{
      ms: number;
      states: Record<string, number>;
      stats: StatusRunStats | null;
    }>(DRIVER, [absolute]);
    if (!answer.ok) {
      statesReported = { error: 1 };
      log(`  status in-process failed: ${answer.reason}`);
      break;
    }
    commandMs.push(answer.value.ms);
    commandStats.push(answer.value.stats ?? null);
    statesReported = answer.value.states;
  }
  let coldProcessMs: number | null = null;
  let coldRun: StatusRun | null = null;
  if (cold && dropPageCache()) {
    coldRun = (await timedRun(withStats)).run;
    coldProcessMs = coldRun.ms;
    log(`  page cache dropped: ${describeRun(coldRun)}`);
  }
  const section: StatusSection = {
    count,
    manifest,
    generatedMs,
    processMs,
    processMedianMs: median(processMs),
    processExitCode,
    readAllMs,
    readAllMedianMs: median(readAllMs),
    processRuns,
    readAllRuns,
    coldRun,
    commandStats,
    commandMs,
    commandMedianMs: median(commandMs),
    statesReported,
    coldProcessMs,
  };
  if (processError !== undefined) section.processError = processError;
  return section;
}

const STATS_PREFIX = 'llm-agent status stats: ';

/**
 * The stats line a `status` printed on stderr (`LLM_AGENT_STATUS_STATS=1`), or null.
 *
 * @example
 * statsLine('llm-agent status stats: {"fromIndex":10000,…}\n'); // { fromIndex: 10000, … }
 */
export function statsLine(stderr: string): StatusRunStats | null {
  const line = stderr.split('\n').find((candidate) => candidate.startsWith(STATS_PREFIX));
  if (line === undefined) return null;
  try {
    return JSON.parse(line.slice(STATS_PREFIX.length)) as StatusRunStats;
  } catch {
    return null;
  }
}

/**
 * Where a run's answers came from, in a few words: `10000 from the index`, `10000 read (4352
 * by 1 worker thread)`, or both.
 *
 * @example
 * answersOf(run.stats); // '9990 from the index, 10 read'
 */
export function answersOf(stats: StatusRunStats | null | undefined): string {
  if (stats === null || stats === undefined) return 'not reported';
  const parts: string[] = [];
  if (stats.fromIndex > 0 || stats.index === 'used')
    parts.push(`${stats.fromIndex} from the index`);
  if (stats.read > 0 || parts.length === 0) {
    const helpers =
      stats.helpers > 0
        ? ` (${stats.byHelpers} by ${stats.helpers} worker thread${stats.helpers === 1 ? '' : 's'})`
        : '';
    parts.push(`${stats.read} read${helpers}`);
  }
  if (stats.inspected > 0) parts.push(`${stats.inspected} by inspect`);
  if (stats.index === 'off') parts.push('index off');
  if (stats.indexSaved) parts.push('index written');
  return parts.join(', ');
}

function describeRun(run: StatusRun): string {
  const phases =
    run.stats === null
      ? ''
      : `; ms: ${Object.entries(run.stats.ms)
          .map(([phase, ms]) => `${phase} ${ms.toFixed(0)}`)
          .join(', ')}`;
  return `${run.ms.toFixed(0)} ms, load ${run.load1.toFixed(2)}; ${answersOf(run.stats)}${phases}`;
}
