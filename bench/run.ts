/**
 * `npm run bench`: measures the goals of issue 8 on this machine, prints a Markdown table,
 * writes bench/results.json, and refreshes the measured part of docs/performance.md and its
 * plot, docs/performance-per-step.svg (a `--quick` or `--only` run writes
 * bench/data/results-partial.json instead and leaves the docs alone). Generated data lives in bench/data (git-ignored) and is
 * reused by later runs.
 *
 * Options: `--quick` (1,000 transcripts, 200 steps, no 1 GiB file; goals not judged),
 * `--only inspect,status,persistence,revival,memory,scale-out,ui,wrapper` (a subset; wrapper is
 * the AI SDK wrapper's cost per step against the same ToolLoopAgent unwrapped; scale-out is
 * bench/scale-out.ts, with results of its own; ui is `llm-agent ui` on a 1,000-run tree, the
 * same in a `--quick` run, and needs Chromium for its browser figures), `--no-docs` (leave the docs alone),
 * `--report-only` (re-render the last bench/results.json without measuring).
 * Needs for the LangGraph durable row: PostgreSQL's server binaries (see bench/local-postgres.ts)
 * or BENCH_POSTGRES_URL; without them that row is skipped with the reason.
 *
 * @example
 * npm run bench -- --quick
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import type { BenchResults } from './bench-results.ts';
import { ensureBuilt } from './ensure-built.ts';
import { inspectSection } from './inspect-section.ts';
import { machineInfo } from './machine-info.ts';
import { memorySection } from './memory-section.ts';
import { persistenceSection } from './persistence-section.ts';
import { judgeGoals, markdownReport, perStepSvg, updatePerformanceDoc } from './report.ts';
import { revivalSection } from './revival-section.ts';
import { statusSection } from './status-section.ts';

const MIB = 1024 * 1024;
const SECTIONS = [
  'inspect',
  'status',
  'persistence',
  'revival',
  'memory',
  'scale-out',
  'ui',
  'wrapper',
];
const ROOT = new URL('..', import.meta.url).pathname;

function commitMeasured(): { id: string; dirty: boolean } {
  try {
    const id = execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
    const status = execFileSync('git', ['status', '--porcelain', '--', 'src'], {
      encoding: 'utf8',
    });
    return { id, dirty: status.trim() !== '' };
  } catch {
    return { id: 'unknown', dirty: false };
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      'no-docs': { type: 'boolean', default: false },
      'report-only': { type: 'boolean', default: false },
    },
  });
  process.chdir(ROOT);
  if (values['report-only'] === true) {
    // Re-judge and re-render the last run's figures (after a change to the report itself).
    const last = JSON.parse(await readFile('bench/results.json', 'utf8')) as BenchResults;
    await publish(last, true, values['no-docs'] !== true);
    return;
  }
  const quick = values.quick === true;
  const only = new Set(values.only?.split(',') ?? SECTIONS);
  const dataFolder = 'bench/data';
  await mkdir(dataFolder, { recursive: true });
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const started = performance.now();
  const results: BenchResults = {
    formatVersion: 1,
    startedAt: new Date().toISOString(),
    durationMs: 0,
    quick,
    commit: commitMeasured(),
    machine: machineInfo(dataFolder),
    goals: [],
  };
  // Both measure the compiled CLI and library (the revival section measures `src/` when
  // BENCH_REVIVAL_SOURCE=1; the status section always measures `dist/`).
  const revivalFromDist =
    (only.has('revival') || only.has('memory')) && process.env.BENCH_REVIVAL_SOURCE !== '1';
  if (only.has('status') || revivalFromDist) await ensureBuilt(log);
  // Status first, on a quiet machine: after the sections that read a gigabyte, this machine's
  // kernel stays busy with memory for a while, and the same status command measured 2.1 s
  // there against 1.5 s before them (docs/performance.md).
  if (only.has('status')) {
    log('2. status over a folder of transcripts');
    results.status = await statusSection(dataFolder, quick ? 1000 : 10_000, !quick, log);
  }
  // Before the sections that read a gigabyte, for the same reason: it times pages and clicks.
  if (only.has('ui')) {
    log('ui. llm-agent ui on a 1,000-run tree (the server in-process, from src/; Chromium)');
    // Loaded only here: it loads the CLI's server and the show command from src/.
    const { uiSection } = await import('./ui-section.ts');
    results.ui = await uiSection(dataFolder, log);
  }
  if (only.has('wrapper')) {
    log('\n== wrapper: a ToolLoopAgent step, wrapped against unwrapped ==');
    const { wrapperSection } = await import('./wrapper-section.ts');
    results.wrapper = await wrapperSection(dataFolder, log, quick ? 30 : 100);
  }
  if (only.has('inspect')) {
    log('1. inspect vs a full parse');
    results.inspect = await inspectSection(quick, dataFolder, log);
  }
  if (only.has('persistence')) {
    log('3. persistence of a scripted run, ours against LangGraph');
    results.persistence = await persistenceSection(dataFolder, quick ? 200 : 1000, log);
    results.machine.postgres = results.persistence.postgres;
  }
  if (only.has('revival')) {
    log('4. revival latency and peak memory');
    const sizes = quick ? [10 * MIB, 100 * MIB] : [10 * MIB, 100 * MIB, 1024 * MIB];
    results.revival = await revivalSection(dataFolder, sizes, log);
  }
  if (only.has('memory')) {
    log('5. peak memory on hostile inputs (junk lines, a huge torn line)');
    results.memory = await memorySection(dataFolder, log);
  }
  if (only.has('scale-out')) {
    // Its own script and its own results (bench/scale-out-results.json, docs/performance.md
    // "Scale-out on PostgreSQL"): it needs a PostgreSQL, as the persistence section does.
    log('6. scale-out on PostgreSQL, ours against PostgresSaver (bench/scale-out.ts)');
    const scaleOut = spawnSync(
      process.execPath,
      ['bench/scale-out.ts', ...(quick ? ['--quick'] : [])],
      { stdio: ['ignore', 'inherit', 'inherit'] },
    );
    if (scaleOut.status !== 0)
      throw new Error(`bench/scale-out.ts failed (exit ${scaleOut.status})`);
  }
  results.durationMs = performance.now() - started;
  results.machine.loadAverage.end = loadavg()[0] ?? 0;
  const complete = !quick && SECTIONS.every((section) => only.has(section));
  await publish(results, complete, values['no-docs'] !== true);
}

/**
 * Judge the goals and print the report. A complete run (every section, not `--quick`) is
 * what bench/results.json and the docs show; a partial one goes to bench/data, so that trying
 * one section never overwrites the published figures.
 */
async function publish(results: BenchResults, complete: boolean, docs: boolean): Promise<void> {
  const log = (line: string) => process.stderr.write(`${line}\n`);
  results.goals = judgeGoals(results);
  const report = markdownReport(results);
  process.stdout.write(`\n${report}`);
  const target = complete ? 'bench/results.json' : 'bench/data/results-partial.json';
  await writeFile(target, `${JSON.stringify(results, null, 2)}\n`);
  // In the formatter's layout, so that a local `npm run check` passes over bench/data too.
  spawnSync('node_modules/.bin/biome', ['format', '--write', target], { stdio: 'ignore' });
  log(`wrote ${target}`);
  if (complete && docs) {
    await writeFile('docs/performance-per-step.svg', perStepSvg(results));
    const updated = await updatePerformanceDoc('docs/performance.md', report);
    // The project's formatter owns Markdown layout (aligned tables): keep `npm run check` green.
    spawnSync('node_modules/.bin/biome', ['format', '--write', 'docs/performance.md'], {
      stdio: 'ignore',
    });
    log(
      updated
        ? 'updated docs/performance.md and docs/performance-per-step.svg'
        : 'wrote docs/performance-per-step.svg (docs/performance.md has no result markers)',
    );
  }
}

await main();
