import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { z } from 'zod';
import { createPromptModel, type ScriptPrompt } from '../../src/demo/prompt-model.ts';
import { Worker, type WorkerOptions } from '../../src/fleet/worker.ts';
import { INTERRUPTED_MESSAGE } from '../../src/revival/texts.ts';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import type { AgentRegistry } from '../../src/subagents/agent-definition.ts';
import { isKnownRecord } from '../../src/transcript/validate-record.ts';
import { type TestDatabase, testDatabase } from '../support/postgres.ts';

/*
 * Workers over the PostgreSQL store: queued runs are each taken by exactly one of several
 * workers; a run whose worker died is fenced and waits for a person under `ask`, is revived
 * once approved, and its interrupted tool is answered, never replayed; under `auto` a run at
 * its cap is parked.
 */

let database: TestDatabase;
before(async () => {
  database = await testDatabase();
});
after(async () => {
  await database?.stop();
});

const lastResult = (prompt: ScriptPrompt) =>
  prompt.turns.flatMap((turn) => turn.toolResults).at(-1);

/** Agents the workers run: `writer` answers at once; `deployer` answers after its deploy's result. */
function agents(ledger: string[]): AgentRegistry {
  return {
    writer: {
      description: 'Writes',
      system: 'writer',
      model: createPromptModel({
        script: (prompt) => ({
          text: `done: ${prompt.turns.find((turn) => turn.role === 'user')?.text}`,
        }),
      }),
    },
    deployer: {
      description: 'Deploys',
      system: 'deployer',
      model: createPromptModel({
        script: (prompt) => {
          const last = lastResult(prompt);
          if (last === undefined)
            return { toolCalls: [{ toolName: 'deploy', input: { to: 'prod' } }] };
          return {
            text: last.isError ? `checked: ${String(last.output).slice(0, 40)}` : 'deployed',
          };
        },
      }),
      tools: [
        {
          name: 'deploy',
          description: 'Deploys',
          inputSchema: z.object({ to: z.string() }),
          idempotency: 'side-effect',
          execute: async ({ to }) => {
            ledger.push(to);
            return 'ok';
          },
        },
      ],
    },
  };
}

async function connect(schema: string): Promise<PostgresStore> {
  return PostgresStore.connect({ connectionString: database.url, schema, leaseMs: 400 });
}

function worker(
  store: PostgresStore,
  options: Partial<WorkerOptions> & { ledger?: string[] } = {},
) {
  return new Worker({
    store,
    agents: agents(options.ledger ?? []),
    resolveModel: () => {
      throw new Error('no model specs here');
    },
    policy: options.policy ?? 'auto',
    maxRevivals: options.maxRevivals ?? 2,
  });
}

test('queued runs: of three workers ticking at once, each run is taken and finished exactly once', async () => {
  const schema = await database.newSchema();
  await PostgresStore.migrate({ connectionString: database.url, schema });
  const stores = await Promise.all([
    connect(schema),
    connect(schema),
    connect(schema),
    connect(schema),
  ]);
  try {
    const [submitter, ...workerStores] = stores as [PostgresStore, ...PostgresStore[]];
    const runs = Array.from({ length: 9 }, (_, index) => `job-${index}`);
    for (const run of runs) {
      await submitter.submit(
        run,
        { agentId: run, agentType: 'writer', label: run, model: 'scripted' },
        `task ${run}`,
      );
    }
    assert.deepEqual(
      (await submitter.runs()).map((row) => row.status),
      runs.map(() => 'queued'),
    );
    const reports = await Promise.all(workerStores.map((store) => worker(store).tick()));
    const ran = reports.flatMap((report) => report.ran);
    assert.deepEqual(ran.map((entry) => entry.run).sort(), runs, 'every run once, none twice');
    assert.ok(ran.every((entry) => entry.result.status === 'finished'));
    const rows = await submitter.runs();
    assert.ok(
      rows.every((row) => row.status === 'finished' && row.owner === null),
      JSON.stringify(rows),
    );
    const found = await submitter.read('job-3');
    assert.ok(found.ok);
    const answers = found.records
      .filter(isKnownRecord)
      .filter((record) => record.type === 'message' && record.role === 'assistant');
    assert.equal(answers.length, 1, 'answered once');
  } finally {
    for (const store of stores) await store.close();
  }
});

test('a worker killed mid-tool under the ask policy: fenced and parked, revived only once approved, the tool never replayed', async () => {
  const schema = await database.newSchema();
  await PostgresStore.migrate({ connectionString: database.url, schema });
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  const stores: PostgresStore[] = [];
  try {
    await admin.query(`CREATE TABLE "${schema}".ledger (call_id text, target text)`);
    await killedMidTool(schema);
    await new Promise((done) => setTimeout(done, 600));
    const ledger: string[] = [];
    const supervisors = await Promise.all([connect(schema), connect(schema)]);
    stores.push(...supervisors);
    const epochBefore = Number(
      (await admin.query(`SELECT epoch FROM "${schema}".runs`)).rows[0]?.epoch,
    );
    const ticks = await Promise.all(
      supervisors.map((store) => worker(store, { policy: 'ask', ledger }).tick()),
    );
    assert.deepEqual(
      ticks.flatMap((report) => report.parked),
      [{ run: 'main', status: 'awaiting-approval' }],
      'parked exactly once',
    );
    assert.deepEqual(
      ticks.flatMap((report) => report.ran),
      [],
      'no tokens spent without a person',
    );
    const row = (await supervisors[0]?.runs())?.[0];
    assert.equal(row?.status, 'awaiting-approval');
    assert.equal(row?.owner, null);
    assert.equal(row?.epoch, epochBefore + 1, 'the dead worker is fenced');
    // Nothing happens on the next tick: it waits for a person.
    assert.deepEqual(
      (await worker(supervisors[0] as PostgresStore, { policy: 'ask', ledger }).tick()).ran,
      [],
    );
    assert.equal(await supervisors[0]?.mark('main', 'awaiting-approval', 'approved'), true);
    const approved = await worker(supervisors[1] as PostgresStore, {
      policy: 'ask',
      ledger,
    }).tick();
    assert.equal(approved.ran.length, 1);
    assert.equal(approved.ran[0]?.how, 'revived');
    assert.equal(
      approved.ran[0]?.result.status,
      'finished',
      JSON.stringify(approved.ran[0]?.result),
    );
    assert.match(approved.ran[0]?.result.text ?? '', /^checked: The previous session ended/);
    assert.ok(INTERRUPTED_MESSAGE.startsWith('The previous session ended'));
    assert.deepEqual(ledger, [], 'the deploy was never run again by a worker');
    assert.equal(
      (await admin.query(`SELECT * FROM "${schema}".ledger`)).rowCount,
      1,
      'it ran once, before the crash',
    );
    const after = (await supervisors[0]?.runs())?.[0];
    assert.deepEqual([after?.status, after?.revivalsUsed], ['finished', 1]);
  } finally {
    for (const store of stores) await store.close();
    await admin.end();
  }
});

test('auto policy with the cap reached: a dead run is parked capped, not revived', async () => {
  const schema = await database.newSchema();
  await PostgresStore.migrate({ connectionString: database.url, schema });
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  const store = await connect(schema);
  try {
    await admin.query(`CREATE TABLE "${schema}".ledger (call_id text, target text)`);
    await killedMidTool(schema);
    await new Promise((done) => setTimeout(done, 600));
    const ledger: string[] = [];
    const report = await worker(store, { policy: 'auto', maxRevivals: 0, ledger }).tick();
    assert.deepEqual(report.parked, [{ run: 'main', status: 'capped' }]);
    assert.deepEqual(report.ran, []);
    const row = (await store.runs())[0];
    assert.deepEqual([row?.status, row?.owner, row?.revivalsUsed], ['capped', null, 0]);
    // A capped run is no worker's work any more.
    assert.deepEqual(await store.work(10), []);
    assert.deepEqual(ledger, []);
  } finally {
    await store.close();
    await admin.end();
  }
});

/** Start `main` in a worker process and SIGKILL it while its side-effecting tool runs. */
async function killedMidTool(schema: string): Promise<void> {
  const child = spawn(
    process.execPath,
    [
      fileURLToPath(new URL('../store/support/loop-worker.ts', import.meta.url)),
      database.url,
      schema,
      '400',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise<NodeJS.Signals | null>((done) =>
    child.on('exit', (_code, signal) => done(signal)),
  );
  for await (const line of createInterface({
    input: child.stdout as NonNullable<typeof child.stdout>,
  })) {
    if (line === 'in-tool') break;
  }
  child.kill('SIGKILL');
  assert.equal(await exited, 'SIGKILL', 'the worker really died mid-tool');
}
