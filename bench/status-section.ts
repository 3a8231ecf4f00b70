import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { median, runChild, timeProcess } from './run-child.ts';
import { type CorpusManifest, statusCorpus } from './status-corpus.ts';

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
  let processExitCode: number | null = null;
  let processError: string | undefined;
  // Three runs each, unless one takes so long that three would only cost minutes.
  const runs = (first: number | undefined) => (first !== undefined && first > 10_000 ? 1 : 3);
  // One unmeasured run first, so that the timed ones find the folder in the page cache as they
  // claim to: the corpus is read only here, and this machine's kernel reclaims page cache that
  // has not been touched for a minute (DAMON pageout; a first run read from disk took 5.6 s).
  // Where the bench may, it empties the page cache before that run, so that the warm runs start
  // from the same state whatever ran before them (the inspect section leaves a gigabyte there).
  if (cold) dropPageCache();
  await timeProcess([CLI, 'status', absolute, '--json']);
  for (let run = 0; run < runs(processMs[0]); run += 1) {
    const timed = await timeProcess([CLI, 'status', absolute, '--json']);
    processMs.push(timed.ms);
    processExitCode = timed.exitCode;
    if (timed.stdoutBytes === 0) processError = timed.stderr;
  }
  // What the index saves: every transcript read, as a first run over the folder does.
  const readAllMs: number[] = [];
  const readAll = { ...process.env, LLM_AGENT_STATUS_INDEX: 'off' };
  for (let run = 0; run < runs(readAllMs[0]); run += 1) {
    readAllMs.push((await timeProcess([CLI, 'status', absolute, '--json'], readAll)).ms);
  }
  const commandMs: number[] = [];
  let statesReported: Record<string, number> = {};
  for (let run = 0; run < runs(commandMs[0]); run += 1) {
    const answer = await runChild<{ ms: number; states: Record<string, number> }>(DRIVER, [
      absolute,
    ]);
    if (!answer.ok) {
      statesReported = { error: 1 };
      log(`  status in-process failed: ${answer.reason}`);
      break;
    }
    commandMs.push(answer.value.ms);
    statesReported = answer.value.states;
  }
  let coldProcessMs: number | null = null;
  if (cold && dropPageCache()) {
    coldProcessMs = (await timeProcess([CLI, 'status', absolute, '--json'])).ms;
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
    commandMs,
    commandMedianMs: median(commandMs),
    statesReported,
    coldProcessMs,
  };
  if (processError !== undefined) section.processError = processError;
  return section;
}
