import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Loop } from '../../src/loop/loop.ts';
import { reviveStoreRun } from '../../src/revival/revive-store-run.ts';
import { INTERRUPTED_MESSAGE, RESUME_NOTICE } from '../../src/revival/texts.ts';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { isKnownRecord } from '../../src/transcript/validate-record.ts';
import { ScriptedModel } from '../../src/testing/index.ts';
import { type TestDatabase, testDatabase } from '../support/postgres.ts';

/*
 * A worker dies mid-tool on the PostgreSQL store; after its lease runs out, four revivers race
 * for the run. Exactly one revives it — once: the call is answered "interrupted, outcome
 * unknown, NOT retried", never run again (a ledger written by the tool itself counts its side
 * effects), the revival is counted, and the run finishes under its own id.
 */

let database: TestDatabase;
before(async () => {
  database = await testDatabase();
});
after(async () => {
  await database?.stop();
});

test('a worker killed mid-tool on PostgreSQL: of four racing revivers exactly one revives the run, the tool is never replayed', async () => {
  const schema = database.schema;
  await PostgresStore.migrate({ connectionString: database.url, schema });
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  const stores: PostgresStore[] = [];
  try {
    await admin.query(`CREATE TABLE "${schema}".ledger (call_id text, target text)`);
    // Long enough that the check right after the kill still finds the lease current under load.
    const leaseMs = 2000;
    const worker = spawn(
      process.execPath,
      [
        fileURLToPath(new URL('../store/support/loop-worker.ts', import.meta.url)),
        database.url,
        schema,
        String(leaseMs),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const lines = createInterface({ input: worker.stdout as NonNullable<typeof worker.stdout> });
    const exited = new Promise<NodeJS.Signals | null>((done) =>
      worker.on('exit', (_code, signal) => done(signal)),
    );
    for await (const line of lines) if (line === 'in-tool') break;
    worker.kill('SIGKILL');
    // The fault: the worker died by SIGKILL while its tool ran, the dispatch durable before it.
    assert.equal(await exited, 'SIGKILL');
    const dispatched = await admin.query(
      `SELECT count(*)::int AS n FROM "${schema}".records WHERE run_id = 'main' AND type = 'tool-dispatched'`,
    );
    assert.equal(dispatched.rows[0]?.n, 1);
    assert.equal((await admin.query(`SELECT * FROM "${schema}".ledger`)).rowCount, 1);

    // Before the lease runs out, the run is still its dead worker's: nobody may revive it.
    const early = await PostgresStore.connect({ connectionString: database.url, schema });
    stores.push(early);
    const tooEarly = await reviveStoreRun({ store: early, run: 'main', maxRevivals: 2 });
    assert.ok(!tooEarly.ok);
    assert.equal(tooEarly.reason, 'running');
    await new Promise((done) => setTimeout(done, leaseMs + 200));

    const revivers = await Promise.all(
      Array.from({ length: 4 }, async () => {
        const store = await PostgresStore.connect({ connectionString: database.url, schema });
        stores.push(store);
        return store;
      }),
    );
    const outcomes = await Promise.all(
      revivers.map((store) =>
        reviveStoreRun({ store, run: 'main', maxRevivals: 2, agentId: 'main' }),
      ),
    );
    const won = outcomes.filter((outcome) => outcome.ok);
    assert.equal(won.length, 1, JSON.stringify(outcomes.map((o) => (o.ok ? 'ok' : o.reason))));
    for (const outcome of outcomes) if (!outcome.ok) assert.equal(outcome.reason, 'running');
    const revived = won[0];
    assert.ok(revived?.ok);
    assert.deepEqual(revived.interrupted, ['call-deploy']);

    const model = new ScriptedModel([{ text: 'I will check prod before deploying again.' }]);
    const result = await new Loop({ backends: [model.model], writer: revived.writer }).run(
      revived.messages,
    );
    await revived.writer.close();
    assert.equal(result.status, 'finished', JSON.stringify(result));
    const prompt = JSON.stringify(model.prompts[0]);
    assert.ok(prompt.includes(JSON.stringify(INTERRUPTED_MESSAGE).slice(1, 60)));
    assert.ok(prompt.includes(RESUME_NOTICE.slice(0, 40)));
    assert.deepEqual(model.violations, []);
    assert.equal(
      (await admin.query(`SELECT * FROM "${schema}".ledger`)).rowCount,
      1,
      'the side effect ran once: never replayed',
    );
    const found = await revivers[0]?.read('main');
    assert.ok(found?.ok);
    const records = found.records.filter(isKnownRecord);
    assert.equal(records.filter((record) => record.type === 'run-revived').length, 1);
    const settle = records.find((record) => record.type === 'tool-settled');
    assert.ok(settle?.type === 'tool-settled');
    assert.deepEqual([settle.status, settle.reason], ['failed', 'interrupted']);
    // A second revival is refused: the run finished.
    const again = await reviveStoreRun({
      store: revivers[1] as PostgresStore,
      run: 'main',
      maxRevivals: 2,
    });
    assert.ok(!again.ok);
    assert.equal(again.reason, 'finished');
  } finally {
    for (const store of stores) await store.close().catch(() => undefined);
    await admin.end();
  }
});
