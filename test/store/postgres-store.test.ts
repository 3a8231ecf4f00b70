import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { FileStore } from '../../src/store/file-store.ts';
import { PostgresStore, SchemaVersionError } from '../../src/store/postgres/postgres-store.ts';
import type { TranscriptStore } from '../../src/store/transcript-store.ts';
import { isKnownRecord } from '../../src/transcript/validate-record.ts';
import { type TestDatabase, testDatabase } from '../support/postgres.ts';
import {
  makeTempFolder,
  removeFolder,
  sessionMeta,
  steppingClock,
} from '../support/transcripts.ts';
import { storeContract } from './store-contract.ts';

/*
 * The store contract on PostgreSQL (DATABASE_URL, or a throw-away cluster), plus what only a
 * database has: versioned migrations checked at connect, and the lease's fencing epoch.
 */

let database: TestDatabase;
const stores: TranscriptStore[] = [];
const schemaOf = new WeakMap<TranscriptStore, string>();

before(async () => {
  database = await testDatabase();
  console.log(`# PostgreSQL: ${database.source}`);
});
after(async () => {
  for (const store of stores) await store.close().catch(() => undefined);
  await database?.stop();
});

async function connect(schema: string, leaseMs = 30_000): Promise<PostgresStore> {
  const store = await PostgresStore.connect({
    connectionString: database.url,
    schema,
    clock: steppingClock(),
    leaseMs,
  });
  stores.push(store);
  schemaOf.set(store, schema);
  return store;
}

async function sql(text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

storeContract({
  name: 'PostgresStore',
  async make() {
    const schema = await database.newSchema();
    await PostgresStore.migrate({ connectionString: database.url, schema });
    return connect(schema);
  },
  async other(store) {
    return connect(schemaOf.get(store) as string);
  },
  async takeOver(store, run) {
    const schema = schemaOf.get(store) as string;
    // The writer's worker stops heartbeating (paused, partitioned) and its lease runs out.
    const expired = await sql(
      `UPDATE "${schema}".runs SET lease_expires = now() - interval '1 second' WHERE run_id = $1 RETURNING epoch`,
      [run],
    );
    assert.equal(expired.rowCount, 1);
    const successor = await (await connect(schema)).open(run);
    const epoch = await sql(`SELECT epoch FROM "${schema}".runs WHERE run_id = $1`, [run]);
    assert.equal(
      Number(epoch.rows[0]?.epoch),
      Number(expired.rows[0]?.epoch) + 1,
      'the takeover bumped the fencing epoch',
    );
    return successor;
  },
  async corrupt(store, run, seq) {
    const schema = schemaOf.get(store) as string;
    const changed = await sql(
      `UPDATE "${schema}".records SET line = overlay(line placing '\\x21'::bytea from 21 for 1) WHERE run_id = $1 AND seq = $2`,
      [run, seq],
    );
    assert.equal(changed.rowCount, 1);
  },
  async cleanup() {},
});

test('PostgresStore: connect refuses a schema that was never migrated, and one newer than it knows', async () => {
  const schema = await database.newSchema();
  await assert.rejects(
    PostgresStore.connect({ connectionString: database.url, schema }),
    (error: unknown) =>
      error instanceof SchemaVersionError &&
      error.found === 0 &&
      /is at version 0, this llm-agent needs 5: run llm-agent db migrate/.test(error.message),
  );
  assert.deepEqual(
    await PostgresStore.migrate({ connectionString: database.url, schema }),
    [1, 2, 3, 4, 5],
  );
  assert.deepEqual(await PostgresStore.migrate({ connectionString: database.url, schema }), []);
  await sql(
    `INSERT INTO "${schema}".schema_migrations (version, name) VALUES (6, 'from the future')`,
  );
  await assert.rejects(
    PostgresStore.connect({ connectionString: database.url, schema }),
    /is at version 6, newer than this llm-agent's 5: use a newer llm-agent/,
  );
  await assert.rejects(
    PostgresStore.migrate({ connectionString: database.url, schema }),
    /newer than this llm-agent's 5/,
  );
});

test('PostgresStore: a worker stopped past its lease and resumed (a zombie) can never append again', async () => {
  const schema = await database.newSchema();
  await PostgresStore.migrate({ connectionString: database.url, schema });
  const leaseMs = 400;
  const child = spawn(
    process.execPath,
    [
      fileURLToPath(new URL('./support/zombie-writer.ts', import.meta.url)),
      database.url,
      schema,
      String(leaseMs),
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: child.stdout as NonNullable<typeof child.stdout> })[
    Symbol.asyncIterator
  ]();
  const next = async () => (await lines.next()).value as string;
  try {
    assert.equal(await next(), 'ready');
    child.kill('SIGSTOP');
    // The fault: the worker really is stopped (state T), and stays so past its lease.
    await new Promise((done) => setTimeout(done, 50));
    assert.match(readFileSync(`/proc/${child.pid}/stat`, 'utf8'), /^\d+ \([^)]*\) T /);
    await new Promise((done) => setTimeout(done, leaseMs + 300));
    const successor = await (await connect(schema)).open('main');
    await successor.appendDurable({
      type: 'message',
      role: 'user',
      content: [{ type: 'text', text: 'after' }],
    });
    child.kill('SIGCONT');
    child.stdin?.write('write\n');
    // The zombie really tried to write.
    assert.match(await next(), /^attempt poisoned-before=(true|false)$/);
    assert.equal(await next(), 'outcome ownership-lost');
    await successor.close();
    const found = await (await connect(schema)).read('main');
    assert.ok(found.ok);
    const texts = found.records
      .filter(isKnownRecord)
      .flatMap((record) =>
        record.type === 'message' && record.content[0]?.type === 'text'
          ? [record.content[0].text]
          : [],
      );
    assert.deepEqual(texts, ['before', 'after']);
    const epochs = await sql(
      `SELECT seq, epoch FROM "${schema}".records WHERE run_id = 'main' ORDER BY seq`,
    );
    const byEpoch = epochs.rows.map((row) => Number(row.epoch));
    assert.deepEqual(
      [...byEpoch].sort((a, b) => a - b),
      byEpoch,
      'epochs never go back along the seqs',
    );
  } finally {
    child.kill('SIGCONT');
    child.kill('SIGKILL');
  }
});

test('the same run written through the file store and through PostgreSQL exports byte-identical lines', async () => {
  const schema = await database.newSchema();
  await PostgresStore.migrate({ connectionString: database.url, schema });
  const folder = await makeTempFolder('llm-agent-store-');
  try {
    const exports: Buffer[] = [];
    // One fixed time: the file store also reads the clock for its lock's nametag.
    const clock = () => new Date('2026-01-01T09:00:00.000Z');
    const inDatabase = await PostgresStore.connect({
      connectionString: database.url,
      schema,
      clock,
    });
    stores.push(inDatabase);
    for (const store of [new FileStore(folder, { clock }), inDatabase]) {
      const writer = await store.create('main', sessionMeta('main'));
      await writer.append({
        type: 'message',
        role: 'user',
        content: [{ type: 'text', text: 'Same bytes?' }],
      });
      await writer.appendDurable({
        type: 'message',
        role: 'assistant',
        content: [{ type: 'text', text: 'Yes, ünïcödé included.' }],
      });
      await writer.close();
      exports.push(await store.exportBytes('main'));
    }
    assert.ok((exports[0] as Buffer).length > 0);
    assert.ok(
      (exports[0] as Buffer).equals(exports[1] as Buffer),
      'file and database hold the same lines',
    );
  } finally {
    await removeFolder(folder);
  }
});

test('two supervisors racing for one dead run, 200 rounds: exactly one takes it each time, the epoch moves by one', async () => {
  const schema = await database.newSchema();
  await PostgresStore.migrate({ connectionString: database.url, schema });
  const [first, second] = [await connect(schema), await connect(schema)];
  const writer = await first.create('main', sessionMeta('main'));
  await writer.appendDurable({
    type: 'message',
    role: 'user',
    content: [{ type: 'text', text: 'Hi' }],
  });
  await writer.close();
  const wins = { first: 0, second: 0, parked: 0 };
  for (let round = 0; round < 200; round += 1) {
    // The run's worker dies: it holds the run, and its lease has run out.
    const died = await sql(
      `UPDATE "${schema}".runs SET owner = 'dead-worker', lease_expires = now() - interval '1 second' WHERE run_id = 'main' RETURNING epoch`,
    );
    const before = Number(died.rows[0]?.epoch);
    // Half the rounds both revive (take); the other half one revives while the other parks.
    const parking = round % 2 === 1;
    const [a, b] = await Promise.all([
      first.take('main', 'dead'),
      parking ? second.park('main', 'awaiting-approval') : second.take('main', 'dead'),
    ]);
    const winners = [a !== null, b !== null && b !== false].filter(Boolean).length;
    assert.equal(winners, 1, `round ${round}: exactly one supervisor acted`);
    if (a !== null) wins.first += 1;
    else if (parking) wins.parked += 1;
    else wins.second += 1;
    const after = await sql(`SELECT epoch FROM "${schema}".runs WHERE run_id = 'main'`);
    assert.equal(Number(after.rows[0]?.epoch), before + 1, `round ${round}: one claim, one epoch`);
    for (const taken of [a, b]) {
      if (taken !== null && typeof taken === 'object') await taken.close();
    }
  }
  console.log(
    `# 200 rounds: first took ${wins.first}, second took ${wins.second}, parked ${wins.parked}`,
  );
  assert.equal(wins.first + wins.second + wins.parked, 200);
});
