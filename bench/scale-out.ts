/**
 * `npm run bench:scale-out`: the PostgreSQL store against LangGraph's PostgresSaver on the same
 * server, and the supervisor's and `status --database`'s costs at 100,000 runs. Writes
 * bench/scale-out-results.json and docs/performance-scale-out.svg; docs/performance.md quotes
 * the figures ("Scale-out on PostgreSQL").
 *
 * The server: BENCH_POSTGRES_URL or DATABASE_URL, else one started from the installed binaries
 * in bench/data/postgres (bench/local-postgres.ts). Options: `--quick` (fewer steps and runs).
 *
 * @example
 * npm run bench:scale-out -- --quick
 */
import { spawn } from 'node:child_process';
import { mkdir, open, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { HumanMessage } from '@langchain/core/messages';
import type { MessagesAnnotation } from '@langchain/langgraph';
import pg from 'pg';
import { z } from 'zod';
import { Worker } from '../src/fleet/worker.ts';
import { Loop } from '../src/loop/loop.ts';
import type { ToolDefinition } from '../src/loop/types.ts';
import { PostgresStore } from '../src/store/postgres/postgres-store.ts';
import type { PostgresTranscriptWriter } from '../src/store/postgres/postgres-writer.ts';
import { encodeLine } from '../src/transcript/line-codec.ts';
import { FORMAT_VERSION } from '../src/transcript/records.ts';
import { emptyTailState, foldTailState } from '../src/transcript/tail-state.ts';
import { dbosSection } from './dbos-section.ts';
import { ensureBuilt } from './ensure-built.ts';
import { countingModel, OPENING_TEXT, STEP_TOOL_NAME, stepToolOutput } from './counting-model.ts';
import { startLocalPostgres } from './local-postgres.ts';
import { machineInfo } from './machine-info.ts';
import { runLangGraph, stepGraph, stepReply } from './run-langgraph.ts';
import { stepProfile } from './step-profile.ts';
import { StepClock, summariseTimeline } from './step-timeline.ts';
import { logLogPlot } from './svg-plot.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const { values } = parseArgs({
  options: { quick: { type: 'boolean', default: false }, only: { type: 'string' } },
});
const quick = values.quick === true;
/** `--only many` (or `profile`, `steps`, `concurrency`, `revival`, `dbos`): one section, for a developer; writes nothing. */
const only = values.only;
const section = (name: string) => only === undefined || only === name;
const STEPS = quick ? 200 : 1000;
const CONCURRENCY = [1, 8, 32, 128];
const STEPS_PER_RUN = quick ? 10 : 25;
const MANY_RUNS = quick ? 10_000 : 100_000;
const META = { agentId: 'main', agentType: 'bench', label: 'bench', model: 'mock' };

const log = (line: string) => console.log(line);

const stepTool: ToolDefinition<{ value: number }> = {
  name: STEP_TOOL_NAME,
  description: 'Count one up.',
  inputSchema: z.object({ value: z.number() }),
  idempotency: 'idempotent',
  execute: async ({ value }) => stepToolOutput(value),
};

async function walBytes(admin: pg.Client): Promise<() => Promise<number>> {
  const start = String((await admin.query('SELECT pg_current_wal_lsn() AS lsn')).rows[0]?.lsn);
  return async () =>
    Number(
      (await admin.query(`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '${start}') AS b`)).rows[0]
        ?.b,
    );
}

async function freshSchema(admin: pg.Client, name: string): Promise<string> {
  await admin.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
  return name;
}

/** One 1000-step run through our Loop on the PostgreSQL store: per-step cost and bytes. */
async function oursPerStep(url: string, admin: pg.Client) {
  const schema = await freshSchema(admin, 'bench_ours_steps');
  await PostgresStore.migrate({ connectionString: url, schema });
  const store = await PostgresStore.connect({ connectionString: url, schema });
  const at = [10, 100, STEPS].filter((step, index, all) => all.indexOf(step) === index);
  const clock = new StepClock();
  const wal = await walBytes(admin);
  clock.start();
  const writer = await store.create('steps', META);
  const result = await new Loop({
    backends: [countingModel(STEPS, (step) => clock.mark(step))],
    writer: writer,
    tools: [stepTool as ToolDefinition<never>],
    maxTurns: STEPS + 5,
  }).start(OPENING_TEXT);
  await writer.close();
  clock.stop();
  const summary = summariseTimeline(clock, at);
  const rows = await store.runs();
  const walTotal = await wal();
  await store.close();
  await admin.query(`DROP SCHEMA ${schema} CASCADE`);
  if (result.status !== 'finished') throw new Error(`ours ended ${result.status}`);
  return {
    name: 'ours (PostgresStore, barrier = commit)',
    steps: STEPS,
    totalMs: summary.totalMs,
    msPerStepAt: summary.msPerStepAt,
    curve: summary.curve,
    recordBytesPerStep: (rows[0]?.bytes ?? 0) / STEPS,
    walBytesPerStep: walTotal / STEPS,
  };
}

/** The same run through LangGraph with PostgresSaver, durability sync, on the same server. */
async function langGraphPerStep(url: string, admin: pg.Client) {
  const wal = await walBytes(admin);
  const row = await runLangGraph(
    'postgres',
    'sync',
    STEPS,
    join(ROOT, 'bench/data/scale-out'),
    [10, 100, STEPS],
    url,
  );
  if (!row.ok) throw new Error(`PostgresSaver: ${row.reason}`);
  return {
    name: 'LangGraph PostgresSaver (durability sync)',
    steps: STEPS,
    totalMs: row.totalMs,
    msPerStepAt: row.msPerStepAt,
    curve: row.curve,
    walBytesPerStep: (await wal()) / STEPS,
  };
}

/** N runs of STEPS_PER_RUN steps at once through our Loop on one store: steps per second. */
async function oursConcurrent(url: string, admin: pg.Client, runs: number): Promise<number> {
  const schema = await freshSchema(admin, 'bench_ours_many');
  await PostgresStore.migrate({ connectionString: url, schema });
  const store = await PostgresStore.connect({
    connectionString: url,
    schema,
    maxConnections: 16,
  });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: runs }, async (_, index) => {
      const writer = await store.create(`run-${index}`, META);
      const result = await new Loop({
        backends: [countingModel(STEPS_PER_RUN)],
        writer: writer,
        tools: [stepTool as ToolDefinition<never>],
        maxTurns: STEPS_PER_RUN + 5,
      }).start(OPENING_TEXT);
      await writer.close();
      if (result.status !== 'finished') throw new Error(`run ${index} ended ${result.status}`);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await store.close();
  await admin.query(`DROP SCHEMA ${schema} CASCADE`);
  return (runs * STEPS_PER_RUN) / seconds;
}

/** N LangGraph runs at once on one PostgresSaver with a pool of the same size: steps per second. */
async function langGraphConcurrent(url: string, admin: pg.Client, runs: number): Promise<number> {
  const { PostgresSaver } = await import('@langchain/langgraph-checkpoint-postgres');
  const schema = await freshSchema(admin, 'bench_lg_many');
  await admin.query(`CREATE SCHEMA ${schema}`);
  const pool = new pg.Pool({ connectionString: url, max: 16 });
  const saver = new PostgresSaver(pool, undefined, { schema });
  await saver.setup();
  const graph = stepGraph((state: typeof MessagesAnnotation.State) => {
    let answered = 0;
    for (const message of state.messages) if (message.getType() === 'tool') answered += 1;
    return { messages: [stepReply(answered + 1, STEPS_PER_RUN)] };
  }, saver);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: runs }, (_, index) =>
      graph.invoke(
        { messages: [new HumanMessage(OPENING_TEXT)] },
        {
          configurable: { thread_id: `run-${index}` },
          recursionLimit: STEPS_PER_RUN * 2 + 10,
          durability: 'sync',
        },
      ),
    ),
  );
  const seconds = (performance.now() - started) / 1000;
  await pool.end();
  await admin.query(`DROP SCHEMA ${schema} CASCADE`);
  return (runs * STEPS_PER_RUN) / seconds;
}

/**
 * A worker dies holding a run (its writer abandoned: no heartbeat, no release); another worker,
 * polling every 50 ms, revives it. From the records and the model's clock: lease expiry →
 * claimed and revived → its first model call.
 */
async function revivalLatency(url: string, admin: pg.Client, leaseMs: number) {
  const schema = await freshSchema(admin, 'bench_revival');
  await PostgresStore.migrate({ connectionString: url, schema });
  const dying = await PostgresStore.connect({ connectionString: url, schema, leaseMs });
  const writer = await dying.create('victim', { ...META, agentType: 'bench' });
  await writer.appendDurable({
    type: 'message',
    role: 'user',
    content: [{ type: 'text', text: OPENING_TEXT }],
  });
  (writer as PostgresTranscriptWriter).abandon('the bench killed its worker');
  const died = Date.now();
  const expires = (
    await admin.query(`SELECT lease_expires FROM ${schema}.runs WHERE run_id = 'victim'`)
  ).rows[0]?.lease_expires as Date;
  let firstCall = 0;
  const survivor = await PostgresStore.connect({ connectionString: url, schema, leaseMs });
  const stop = new AbortController();
  const served = new Worker({
    store: survivor,
    agents: {
      bench: {
        description: 'bench',
        system: 'bench',
        model: countingModel(1, () => {
          firstCall ||= Date.now();
        }),
        tools: [stepTool as ToolDefinition<never>],
      },
    },
    resolveModel: () => {
      throw new Error('none');
    },
    policy: 'auto',
    maxRevivals: 3,
    signal: stop.signal,
  }).serve(50);
  while (firstCall === 0) await new Promise((done) => setTimeout(done, 10));
  stop.abort();
  await served;
  const revived = (
    await admin.query(
      `SELECT convert_from(line, 'UTF8')::json->>'at' AS at FROM ${schema}.records WHERE run_id = 'victim' AND type = 'run-revived'`,
    )
  ).rows[0]?.at as string;
  await survivor.close();
  await dying.close();
  await admin.query(`DROP SCHEMA ${schema} CASCADE`);
  return {
    leaseMs,
    deathToExpiryMs: expires.getTime() - died,
    expiryToRevivedMs: Date.parse(revived) - expires.getTime(),
    revivedToFirstCallMs: firstCall - Date.parse(revived),
    deathToFirstCallMs: firstCall - died,
  };
}

/**
 * MANY_RUNS runs in the store (each a session-meta, a task and an answer, every line a real
 * v1 line), a few dozen of them dead: the supervisor's scan (`store.work`) and `status
 * --database --json` end to end (a process, as a person runs it).
 */
async function manyRuns(url: string, admin: pg.Client) {
  const schema = await freshSchema(admin, 'bench_many_runs');
  await PostgresStore.migrate({ connectionString: url, schema });
  const at = new Date(0).toISOString();
  const batch = 5000;
  for (let from = 0; from < MANY_RUNS; from += batch) {
    const names: string[] = [];
    const lines: Buffer[] = [];
    const runsOf: string[] = [];
    const seqs: number[] = [];
    const types: string[] = [];
    const summaries: string[] = [];
    for (let index = from; index < Math.min(MANY_RUNS, from + batch); index += 1) {
      const name = `run-${String(index).padStart(6, '0')}`;
      names.push(name);
      const bodies = [
        { type: 'session-meta', ...META, label: name },
        { type: 'message', role: 'user', content: [{ type: 'text', text: `task ${name}` }] },
        { type: 'message', role: 'assistant', content: [{ type: 'text', text: `done ${name}` }] },
      ] as const;
      // The summary a writer keeps with each append: the fold of the run's lines.
      let state = emptyTailState();
      bodies.forEach((body, seq) => {
        const line = encodeLine({ v: FORMAT_VERSION, seq, at }, body as never);
        lines.push(line.bytes);
        runsOf.push(name);
        seqs.push(seq);
        types.push(body.type);
        state = foldTailState(state, line.record, line.bytes.length);
      });
      summaries.push(JSON.stringify(state));
    }
    await admin.query(
      `INSERT INTO ${schema}.runs (run_id, last_seq, status, bytes, owner, lease_expires, summary)
       SELECT n, 2, 'finished', 300, CASE WHEN n LIKE '%00' THEN 'dead-worker' END,
              CASE WHEN n LIKE '%00' THEN now() - interval '1 minute' END, m::json
       FROM unnest($1::text[], $2::text[]) AS x(n, m)`,
      [names, summaries],
    );
    await admin.query(
      `INSERT INTO ${schema}.records (run_id, seq, epoch, type, line)
       SELECT r, s, 1, t, l FROM unnest($1::text[], $2::bigint[], $3::text[], $4::bytea[]) AS x(r, s, t, l)`,
      [runsOf, seqs, types, lines],
    );
  }
  await admin.query(`ANALYZE ${schema}.runs; ANALYZE ${schema}.records`);
  const store = await PostgresStore.connect({ connectionString: url, schema });
  const scans: number[] = [];
  for (let round = 0; round < 20; round += 1) {
    const started = performance.now();
    const work = await store.work(16);
    scans.push(performance.now() - started);
    if (work.length === 0) throw new Error('the scan found no dead run');
  }
  await store.close();
  const statusTimes: number[] = [];
  for (let round = 0; round < 3; round += 1) {
    const started = performance.now();
    // Into a file, as a person's redirect would: a pipe loses what a process writes as it exits.
    const output = join(ROOT, 'bench/data/status-many.json');
    const file = await open(output, 'w');
    const exited = spawn(
      process.execPath,
      [join(ROOT, 'dist/cli/main.js'), 'status', '--database', url, '--schema', schema, '--json'],
      { stdio: ['ignore', file.fd, 'inherit'] },
    );
    await new Promise((done) => exited.on('exit', done));
    await file.close();
    statusTimes.push(performance.now() - started);
    const stdout = await readFile(output, 'utf8');
    await rm(output);
    if (JSON.parse(stdout).summary.total !== MANY_RUNS) throw new Error('status missed runs');
  }
  await admin.query(`DROP SCHEMA ${schema} CASCADE`);
  const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
  return { runs: MANY_RUNS, supervisorScanMs: median(scans), statusMs: median(statusTimes) };
}

/** Ours and PostgresSaver, one 1000-step run each. */
async function perStepSection(url: string, admin: pg.Client) {
  log(`  per step, ${STEPS} steps: ours …`);
  const ours = await oursPerStep(url, admin);
  log(`    ${(ours.totalMs / 1000).toFixed(2)} s; PostgresSaver …`);
  const theirs = await langGraphPerStep(url, admin);
  log(`    ${(theirs.totalMs / 1000).toFixed(2)} s`);
  return { ours, langGraph: theirs, speedup: theirs.totalMs / ours.totalMs };
}

/** The supervisor's scan and `status --database` over MANY_RUNS runs. */
async function manySection(url: string, admin: pg.Client) {
  // `status` is measured as shipped: the compiled CLI a user runs.
  await ensureBuilt(log);
  log(`  ${MANY_RUNS} runs: loading …`);
  const many = await manyRuns(url, admin);
  log(
    `  ${MANY_RUNS} runs: supervisor scan ${many.supervisorScanMs?.toFixed(1)} ms; status --database --json ${((many.statusMs ?? 0) / 1000).toFixed(2)} s`,
  );
  return many;
}

async function main(): Promise<void> {
  const folder = join(ROOT, 'bench/data');
  await mkdir(join(folder, 'scale-out'), { recursive: true });
  const given = process.env.BENCH_POSTGRES_URL || process.env.DATABASE_URL;
  const server = given
    ? { ok: true as const, url: given, version: '', stop: async () => undefined }
    : await startLocalPostgres(join(folder, 'postgres'));
  if (!server.ok) throw new Error(`no PostgreSQL: ${server.reason}`);
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  try {
    const version = String((await admin.query('SHOW server_version')).rows[0]?.server_version);
    const settings = (
      await admin.query(
        "SELECT name, setting FROM pg_settings WHERE name IN ('fsync','synchronous_commit','wal_sync_method') ORDER BY name",
      )
    ).rows
      .map((row) => `${row.name}=${row.setting}`)
      .join(', ');
    log(`scale-out bench: PostgreSQL ${version} (${settings})${quick ? ', quick' : ''}`);
    const profile = section('profile')
      ? await stepProfile(server.url, admin, 'bench_profile', quick ? 100 : 300)
      : null;
    if (profile !== null) {
      log(
        `  profile of a step (${profile.steps} steps): ${profile.statementsPerStep.toFixed(2)} statements (round trips), ${profile.commitsPerStep.toFixed(2)} commits, ${profile.walBytesPerStep.toFixed(0)} B of WAL; ${profile.notifications} notifications in all; lock waits seen in ${profile.lockWaitSamples} of ${profile.activitySamples} samples; by kind ${JSON.stringify(profile.statementsByKind)}`,
      );
    }
    const perStep = section('steps') ? await perStepSection(server.url, admin) : null;
    const concurrency: { runs: number; ours: number; langGraph: number }[] = [];
    for (const runs of section('concurrency') ? CONCURRENCY : []) {
      const oursRate = await oursConcurrent(server.url, admin, runs);
      const theirRate = await langGraphConcurrent(server.url, admin, runs);
      concurrency.push({ runs, ours: oursRate, langGraph: theirRate });
      log(
        `  ${runs} runs at once: ours ${oursRate.toFixed(0)} steps/s, PostgresSaver ${theirRate.toFixed(0)} steps/s (${(oursRate / theirRate).toFixed(1)}×)`,
      );
    }
    const revival = section('revival')
      ? await revivalLatency(server.url, admin, quick ? 1000 : 5000)
      : null;
    if (revival !== null) {
      log(
        `  revival: lease ${revival.leaseMs} ms; expiry → revived ${revival.expiryToRevivedMs} ms; → first model call ${revival.revivedToFirstCallMs} ms`,
      );
    }
    const many = section('many') ? await manySection(server.url, admin) : null;
    const dbos = section('dbos')
      ? await dbosSection(server.url, admin, {
          steps: STEPS,
          stepsPerRun: STEPS_PER_RUN,
          concurrency: CONCURRENCY,
          oursPerStep: () => oursPerStep(server.url, admin),
          oursConcurrent: (runs) => oursConcurrent(server.url, admin, runs),
          log,
        })
      : null;
    const results = {
      measuredAt: new Date().toISOString(),
      quick,
      machine: { ...machineInfo(folder), postgres: `${version} (${settings})` },
      profile,
      perStep,
      concurrency: { stepsPerRun: STEPS_PER_RUN, pool: 16, rows: concurrency },
      revival,
      many,
      dbos,
    };
    const svg = logLogPlot(
      'Steps per second, runs at once (same PostgreSQL, durable every step)',
      'runs at once',
      'steps per second',
      [
        {
          name: 'ours (PostgresStore)',
          colour: '#1f77b4',
          points: concurrency.map((row) => ({ x: row.runs, y: row.ours })),
        },
        {
          name: 'LangGraph PostgresSaver',
          colour: '#d62728',
          points: concurrency.map((row) => ({ x: row.runs, y: row.langGraph })),
        },
      ],
    );
    if (only !== undefined) {
      log(`  --only ${only}: nothing written`);
    } else if (!quick) {
      await writeFile(
        join(ROOT, 'bench/scale-out-results.json'),
        `${JSON.stringify(results, null, 2)}\n`,
      );
      await writeFile(join(ROOT, 'docs/performance-scale-out.svg'), svg);
      log('  wrote bench/scale-out-results.json and docs/performance-scale-out.svg');
    } else {
      await writeFile(
        join(folder, 'scale-out-quick.json'),
        `${JSON.stringify(results, null, 2)}\n`,
      );
      log(
        '  wrote bench/data/scale-out-quick.json (a quick run leaves the results and docs alone)',
      );
    }
  } finally {
    await admin.end();
    await server.stop();
  }
}

await main();
