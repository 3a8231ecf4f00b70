import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createPromptModel } from '../../src/demo/prompt-model.ts';
import { RECONCILE_LEASE_SHARE } from '../../src/fleet/reconcile-in-lease.ts';
import { Worker } from '../../src/fleet/worker.ts';
import type { ToolDefinition } from '../../src/loop/types.ts';
import {
  DID_NOT_HAPPEN_MESSAGE,
  INTERRUPTED_MESSAGE,
  RECOVERED_NOTE,
} from '../../src/revival/texts.ts';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import type { ForeignRecord, TranscriptRecord } from '../../src/transcript/records.ts';
import { isKnownRecord } from '../../src/transcript/validate-record.ts';
import { chargedText, chargeTool } from '../revival/support/ledger.ts';
import { type TestDatabase, testDatabase } from '../support/postgres.ts';

/*
 * The fleet's workers ask reconciles too: a worker SIGKILLed mid-charge (call-a charged the
 * ledger table, call-b never reached it) is revived by another worker, which asks the charge
 * tool's reconcile with the run held — the truth, nothing run again. A reconcile that hangs is
 * abandoned within the lease (half of it), not at its own much longer timeout: the worker still
 * holds the run when it writes, and both calls are answered as interrupted.
 */

const ledgerWorker = fileURLToPath(new URL('../revival/support/ledger-worker.ts', import.meta.url));

let database: TestDatabase;
before(async () => {
  database = await testDatabase();
});
after(async () => {
  await database?.stop();
});

/** A schema with a run `main` whose worker was SIGKILLed with both charges in their tool. */
async function killedMidCharge(admin: pg.Client): Promise<string> {
  const schema = await database.newSchema();
  await PostgresStore.migrate({ connectionString: database.url, schema });
  await admin.query(`CREATE TABLE "${schema}".ledger (key text primary key, cents int)`);
  const child = spawn(process.execPath, [ledgerWorker, 'pg', database.url, schema, '400'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<NodeJS.Signals | null>((done) =>
    child.on('exit', (_code, signal) => done(signal)),
  );
  const seen = new Set<string>();
  for await (const line of createInterface({ input: child.stdout })) {
    seen.add(line);
    if (seen.has('in-tool call-a') && seen.has('in-tool call-b')) break;
  }
  child.kill('SIGKILL');
  assert.equal(await exited, 'SIGKILL', 'the worker really died mid-tool');
  // Its lease (400 ms) runs out: the run is a dead worker's.
  await new Promise((done) => setTimeout(done, 700));
  return schema;
}

function cashier(tool: ToolDefinition<unknown>) {
  return {
    cashier: {
      description: 'Charges orders',
      system: 'cashier',
      model: createPromptModel({ script: () => ({ text: 'All orders handled.' }) }),
      tools: [tool],
    },
  };
}

function resultsOf(records: (TranscriptRecord | ForeignRecord)[]) {
  const results = new Map<string, { output: unknown; isError: boolean }>();
  const keys = new Map<string, string>();
  for (const record of records.filter(isKnownRecord)) {
    if (record.type === 'tool-dispatched' && record.idempotencyKey !== undefined) {
      keys.set(record.callId, record.idempotencyKey);
    }
    if (record.type !== 'message' || record.role !== 'tool') continue;
    for (const part of record.content) {
      if (part.type === 'tool-result') {
        results.set(part.callId, { output: part.output, isError: part.isError });
      }
    }
  }
  return { results, keys };
}

test('a worker revives a dead run after asking its reconcile: the ledger truth, nothing run again', async () => {
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  const schema = await killedMidCharge(admin);
  const store = await PostgresStore.connect({
    connectionString: database.url,
    schema,
    leaseMs: 2_000,
  });
  try {
    let executions = 0;
    const tool = chargeTool({
      execute: async () => {
        executions += 1;
      },
      lookup: async (key) =>
        (
          await admin.query<{ cents: number }>(
            `SELECT cents FROM "${schema}".ledger WHERE key = $1`,
            [key],
          )
        ).rows[0],
    }) as ToolDefinition<unknown>;
    const lines: string[] = [];
    const report = await new Worker({
      store,
      agents: cashier(tool),
      resolveModel: () => assert.fail('no model specs here'),
      policy: 'auto',
      maxRevivals: 2,
      log: (line) => lines.push(line),
    }).tick();
    assert.deepEqual(
      report.ran.map((entry) => [entry.run, entry.how, entry.result.status]),
      [['main', 'revived', 'finished']],
    );
    const read = await store.read('main');
    assert.ok(read.ok);
    const { results, keys } = resultsOf(read.records);
    assert.deepEqual(results.get('call-a'), {
      // A text output is recovered as the note, a blank line and the text.
      output: `${RECOVERED_NOTE}\n\n${chargedText(1200, keys.get('call-a') ?? '')}`,
      isError: false,
    });
    assert.deepEqual(results.get('call-b'), { output: DID_NOT_HAPPEN_MESSAGE, isError: true });
    assert.equal(executions, 0, 'the worker ran no charge again');
    assert.equal((await admin.query(`SELECT * FROM "${schema}".ledger`)).rowCount, 1);
    assert.ok(lines.includes('main: reconcile of charge call-a: completed'), lines.join('\n'));
    assert.ok(lines.includes('main: reconcile of charge call-b: did-not-happen'), lines.join('\n'));
  } finally {
    await store.close();
    await admin.end();
  }
});

test('a reconcile that hangs is abandoned within the lease, not at its own timeout: answered as interrupted, the run still held', async () => {
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  const schema = await killedMidCharge(admin);
  const leaseMs = 1_000;
  const store = await PostgresStore.connect({ connectionString: database.url, schema, leaseMs });
  try {
    const abandoned: number[] = [];
    const asked: number[] = [];
    const hanging = {
      ...chargeTool({
        execute: async () => assert.fail('never run again'),
        lookup: async () => undefined,
      }),
      reconcile: (_input: unknown, context: { signal: AbortSignal }) => {
        asked.push(performance.now());
        context.signal.addEventListener('abort', () => abandoned.push(performance.now()));
        return new Promise<never>(() => undefined);
      },
    } as ToolDefinition<unknown>;
    const lines: string[] = [];
    const began = performance.now();
    const report = await new Worker({
      store,
      agents: cashier(hanging),
      resolveModel: () => assert.fail('no model specs here'),
      policy: 'auto',
      maxRevivals: 2,
      // Far longer than the lease: only the lease can cut the hanging reconcile short.
      reconcileTimeoutMs: 60_000,
      log: (line) => lines.push(line),
    }).tick();
    const took = performance.now() - began;
    assert.deepEqual(
      report.ran.map((entry) => [entry.run, entry.how, entry.result.status]),
      [['main', 'revived', 'finished']],
      lines.join('\n'),
    );
    assert.equal(asked.length, 2, 'both calls were asked about');
    assert.equal(abandoned.length, 2, 'both reconciles were abandoned (their signals aborted)');
    const waited = lines.flatMap((line) => /gave no answer within (\d+) ms/.exec(line)?.[1] ?? []);
    assert.equal(waited.length, 2, lines.join('\n'));
    for (const ms of waited) assert.ok(Number(ms) <= leaseMs * RECONCILE_LEASE_SHARE, ms);
    assert.ok(
      took < 30_000,
      `the tick took ${Math.round(took)} ms: the timeout, not the lease, ended it`,
    );
    const read = await store.read('main');
    assert.ok(read.ok);
    const { results } = resultsOf(read.records);
    for (const callId of ['call-a', 'call-b']) {
      assert.deepEqual(results.get(callId), { output: INTERRUPTED_MESSAGE, isError: true });
    }
    const row = (await store.runs())[0];
    assert.deepEqual(
      [row?.status, row?.revivalsUsed],
      ['finished', 1],
      'revived once, by the worker that held it',
    );
  } finally {
    await store.close();
    await admin.end();
  }
});
