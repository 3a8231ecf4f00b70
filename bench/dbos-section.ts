/**
 * `npm run bench:scale-out -- --only dbos`: DBOS Transact side by side with ours on the same
 * PostgreSQL, the same scripted agent loop (bench/counting-model.ts). Rows:
 * - DBOS, their documented pattern: `generateText` with the model call a DBOS step (what their
 *   AI SDK middleware does: `wrapGenerate` = `DBOS.runStep(doGenerate)`) and each tool call a
 *   `DBOS.runStep`, inside one workflow;
 * - DBOS, bare steps: a workflow doing two trivial `DBOS.runStep`s per loop step (a model call
 *   and a tool call that do nothing) — what DBOS itself costs, no AI SDK;
 * - ours with the DBOS wrapper: the same workflow with DbosRun, dbosModel and dbosTools (DBOS's
 *   steps plus our transcript and at-most-once markers);
 * - ours: our Loop on the PostgresStore (given by the caller, as bench/scale-out.ts measures it).
 * DBOS keeps its system tables in a database of its own on the same server.
 *
 * @example
 * const rows = await dbosSection(url, admin, { steps: 1000, stepsPerRun: 25, concurrency: [1, 8] });
 */
import { readFile } from 'node:fs/promises';
import { DBOS } from '@dbos-inc/dbos-sdk';
import { generateText, stepCountIs, tool, wrapLanguageModel } from 'ai';
import type pg from 'pg';
import { z } from 'zod';
import { DbosRun, dbosModel, dbosTools } from '../src/integrations/dbos/index.ts';
import { PostgresStore } from '../src/store/postgres/postgres-store.ts';
import { countingModel, OPENING_TEXT, STEP_TOOL_NAME, stepToolOutput } from './counting-model.ts';
import { StepClock, summariseTimeline } from './step-timeline.ts';

const DATABASE = 'llm_bench_dbos';
const STORE_SCHEMA = 'bench_dbos_runs';
const POOL = 16;

type Clocked = (step: number) => void;
let onCall: Clocked = () => undefined;

/** The model calls of one workflow, told to the clock of the run being timed. */
function modelFor(steps: number) {
  return countingModel(steps, (step) => onCall(step));
}

const incrementTool = () =>
  tool({
    inputSchema: z.object({ value: z.number() }),
    execute: async ({ value }: { value: number }) => stepToolOutput(value),
  });

async function theirPattern(steps: number): Promise<string> {
  const model = wrapLanguageModel({
    model: modelFor(steps),
    middleware: {
      specificationVersion: 'v4',
      wrapGenerate: ({ doGenerate }) =>
        DBOS.runStep(
          async () => {
            const { content, finishReason, usage, warnings } = await doGenerate();
            return { content, finishReason, usage, warnings };
          },
          { name: 'model' },
        ),
    },
  });
  const plain = incrementTool();
  const tools = {
    [STEP_TOOL_NAME]: tool({
      inputSchema: z.object({ value: z.number() }),
      execute: (input: { value: number }, options) =>
        DBOS.runStep(async () => plain.execute?.(input, options) as Promise<string>, {
          name: STEP_TOOL_NAME,
        }),
    }),
  };
  const result = await generateText({
    model,
    tools,
    prompt: OPENING_TEXT,
    stopWhen: stepCountIs(steps + 5),
  });
  return result.text;
}

async function bareSteps(steps: number): Promise<number> {
  for (let step = 1; step <= steps + 1; step += 1) {
    onCall(step);
    await DBOS.runStep(async () => ({ call: step <= steps, step }), { name: 'model' });
    if (step <= steps) await DBOS.runStep(async () => stepToolOutput(step), { name: 'tool' });
  }
  return steps;
}

let store: PostgresStore | undefined;

async function ourWrapper(steps: number): Promise<string> {
  const tools = dbosTools(
    { [STEP_TOOL_NAME]: incrementTool() },
    {
      idempotency: { [STEP_TOOL_NAME]: 'idempotent' },
    },
  );
  const opened = await DbosRun.open({ store: store as PostgresStore, tools });
  if (!opened.ok) throw new Error(opened.detail);
  const { run } = opened;
  try {
    const result = await run.within(() =>
      generateText({
        model: dbosModel(modelFor(steps)),
        tools,
        prompt: OPENING_TEXT,
        stopWhen: stepCountIs(steps + 5),
      }),
    );
    return result.text;
  } finally {
    await run.close();
  }
}

const workflows = {
  'DBOS, their pattern (generateText, model and tool calls as steps)': DBOS.registerWorkflow(
    theirPattern,
    { name: 'benchTheirPattern' },
  ),
  'DBOS, bare steps (two trivial steps per loop step)': DBOS.registerWorkflow(bareSteps, {
    name: 'benchBareSteps',
  }),
  'ours with the DBOS wrapper (DbosRun, dbosModel, dbosTools)': DBOS.registerWorkflow(ourWrapper, {
    name: 'benchOurWrapper',
  }),
};

/** What the section measured, per system. */
export interface DbosRows {
  versions: { dbos: string; settings: string };
  perStep: {
    name: string;
    steps: number;
    totalMs: number;
    msPerStepAt: Record<string, number>;
    walBytesPerStep: number;
  }[];
  concurrency: { runs: number; stepsPerSecond: Record<string, number> }[];
}

async function walMeter(admin: pg.Client): Promise<() => Promise<number>> {
  const start = String((await admin.query('SELECT pg_current_wal_lsn() AS lsn')).rows[0]?.lsn);
  return async () =>
    Number(
      (await admin.query(`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '${start}') AS b`)).rows[0]
        ?.b,
    );
}

let workflowCounter = 0;

async function runWorkflows(
  name: keyof typeof workflows,
  runs: number,
  steps: number,
): Promise<void> {
  const handles = await Promise.all(
    Array.from({ length: runs }, () => {
      workflowCounter += 1;
      const workflow = workflows[name] as (steps: number) => Promise<unknown>;
      return DBOS.startWorkflow(workflow, {
        workflowID: `bench-${process.pid}-${workflowCounter}`,
      })(steps);
    }),
  );
  await Promise.all(handles.map((handle) => handle.getResult()));
}

/**
 * The DBOS rows: one STEPS-step run per system (time and WAL per step), then `concurrency`
 * runs of `stepsPerRun` steps at once (steps per second). `ours` measures our Loop the same
 * ways (bench/scale-out.ts's functions), run here so that every row comes from one run.
 */
export async function dbosSection(
  url: string,
  admin: pg.Client,
  options: {
    steps: number;
    stepsPerRun: number;
    concurrency: readonly number[];
    oursPerStep: () => Promise<{
      totalMs: number;
      msPerStepAt: Record<string, number>;
      walBytesPerStep: number;
    }>;
    oursConcurrent: (runs: number) => Promise<number>;
    log: (line: string) => void;
  },
): Promise<DbosRows> {
  await admin.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${DATABASE}`);
  const parsed = new URL(url);
  parsed.pathname = `/${DATABASE}`;
  const dbosUrl = parsed.toString();
  await PostgresStore.migrate({ connectionString: dbosUrl, schema: STORE_SCHEMA });
  store = await PostgresStore.connect({
    connectionString: dbosUrl,
    schema: STORE_SCHEMA,
    maxConnections: POOL,
  });
  DBOS.setConfig({
    name: 'llm-agent-bench',
    systemDatabaseUrl: dbosUrl,
    systemDatabasePoolSize: POOL,
    logLevel: 'error',
  });
  await DBOS.launch();
  const manifest = new URL('../node_modules/@dbos-inc/dbos-sdk/package.json', import.meta.url);
  const version = String(JSON.parse(await readFile(manifest, 'utf8')).version);
  const rows: DbosRows = {
    versions: {
      dbos: `@dbos-inc/dbos-sdk ${version}`,
      settings: `system database pool ${POOL}, our pool ${POOL}, steps without retries, one workflow per run`,
    },
    perStep: [],
    concurrency: [],
  };
  options.log(`  DBOS: ${rows.versions.dbos}; ${rows.versions.settings}`);
  try {
    const at = [10, 100, options.steps];
    for (const name of Object.keys(workflows) as (keyof typeof workflows)[]) {
      const clock = new StepClock();
      onCall = (step) => clock.mark(step);
      const wal = await walMeter(admin);
      clock.start();
      await runWorkflows(name, 1, options.steps);
      clock.stop();
      onCall = () => undefined;
      const summary = summariseTimeline(clock, at);
      const row = {
        name,
        steps: options.steps,
        totalMs: summary.totalMs,
        msPerStepAt: summary.msPerStepAt,
        walBytesPerStep: (await wal()) / options.steps,
      };
      rows.perStep.push(row);
      options.log(
        `  ${name}: ${(row.totalMs / options.steps).toFixed(2)} ms/step, ${row.walBytesPerStep.toFixed(0)} B WAL/step`,
      );
    }
    const ours = await options.oursPerStep();
    const oursWal = ours.walBytesPerStep;
    rows.perStep.push({
      name: 'ours (Loop on PostgresStore)',
      steps: options.steps,
      totalMs: ours.totalMs,
      msPerStepAt: ours.msPerStepAt,
      walBytesPerStep: oursWal,
    });
    options.log(
      `  ours (Loop on PostgresStore): ${(ours.totalMs / options.steps).toFixed(2)} ms/step, ${oursWal.toFixed(0)} B WAL/step`,
    );
    for (const runs of options.concurrency) {
      const rates: Record<string, number> = {};
      for (const name of Object.keys(workflows) as (keyof typeof workflows)[]) {
        const started = performance.now();
        await runWorkflows(name, runs, options.stepsPerRun);
        rates[name] = (runs * options.stepsPerRun) / ((performance.now() - started) / 1000);
      }
      rates['ours (Loop on PostgresStore)'] = await options.oursConcurrent(runs);
      rows.concurrency.push({ runs, stepsPerSecond: rates });
      const oursRate = rates['ours (Loop on PostgresStore)'] ?? 0;
      const their = rates['DBOS, their pattern (generateText, model and tool calls as steps)'] ?? 1;
      const bare = rates['DBOS, bare steps (two trivial steps per loop step)'] ?? 1;
      options.log(
        `  ${runs} at once, steps/s: ${Object.entries(rates)
          .map(([name, rate]) => `${name.split(' (')[0]} ${rate.toFixed(0)}`)
          .join(
            '; ',
          )}; ours ÷ DBOS's pattern ${(oursRate / their).toFixed(2)}×, ours ÷ DBOS bare ${(oursRate / bare).toFixed(2)}×`,
      );
    }
  } finally {
    await DBOS.shutdown();
    await store.close();
    await admin.query(`DROP DATABASE IF EXISTS ${DATABASE} WITH (FORCE)`).catch(() => undefined);
  }
  return rows;
}
