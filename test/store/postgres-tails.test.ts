import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { migrate } from '../../src/store/postgres/migrations.ts';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { decodeLine } from '../../src/transcript/line-codec.ts';
import { emptyTailState, foldTailState, type TailState } from '../../src/transcript/tail-state.ts';
import { runCli } from '../cli/support/cli-fixtures.ts';
import { type TestDatabase, testDatabase } from '../support/postgres.ts';
import { sessionMeta, steppingClock } from '../support/transcripts.ts';

/*
 * What `status --database` reads: each run folded from its last checkpoint on, to the state a
 * full read folds; damage after the checkpoint is found and named, damage before it is the
 * full read's to find. And a schema at version 2 with runs in it upgrades to 3 with their sizes.
 */

let database: TestDatabase;
before(async () => {
  database = await testDatabase();
});
after(async () => {
  await database?.stop();
});

async function admin<T>(body: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    return await body(client);
  } finally {
    await client.end();
  }
}

async function fullFold(store: PostgresStore, run: string): Promise<TailState> {
  const bytes = await store.exportBytes(run);
  let state = emptyTailState();
  for (let start = 0; start < bytes.length; ) {
    const end = bytes.indexOf(0x0a, start);
    const decoded = decodeLine(bytes.subarray(start, end));
    assert.ok(decoded.ok);
    state = foldTailState(state, decoded.record, end + 1 - start);
    start = end + 1;
  }
  return state;
}

test('tails: each run folds from its last checkpoint to the state a full read folds; damage after it is named, before it is the full read’s', async () => {
  const schema = await database.newSchema();
  await PostgresStore.migrate({ connectionString: database.url, schema });
  const store = await PostgresStore.connect({
    connectionString: database.url,
    schema,
    clock: steppingClock(),
    checkpointBytes: 300,
  });
  try {
    const closed = await store.create('closed', sessionMeta('closed'));
    const held = await store.create('held', sessionMeta('held'));
    for (let turn = 0; turn < 12; turn += 1) {
      for (const writer of [closed, held]) {
        await writer.appendDurable({
          type: 'message',
          role: turn % 2 === 0 ? 'user' : 'assistant',
          content: [{ type: 'text', text: `turn ${turn} ${'x'.repeat(80)}` }],
        });
      }
    }
    await closed.close();
    const checkpoints = await admin((client) =>
      client.query(
        `SELECT run_id, count(*)::int AS n, max(seq)::int AS last FROM "${schema}".records WHERE type = 'checkpoint' GROUP BY run_id ORDER BY run_id`,
      ),
    );
    assert.deepEqual(
      checkpoints.rows.map((row) => row.run_id),
      ['closed', 'held'],
    );
    assert.ok(
      checkpoints.rows.every((row) => row.n > 2 && row.last > 10),
      `both runs have checkpoints to start from: ${JSON.stringify(checkpoints.rows)}`,
    );
    const tails = await store.tails();
    for (const run of ['closed', 'held']) {
      const tail = tails.get(run);
      assert.ok(tail?.ok, JSON.stringify(tail));
      assert.deepEqual(tail.state, await fullFold(store, run), `${run}: the same state`);
    }
    const rows = await store.runs();
    assert.deepEqual(
      rows.map((row) => row.bytes),
      [(await store.exportBytes('closed')).length, (await store.exportBytes('held')).length],
      'bytes is the size of the lines',
    );

    // One byte changed in held's last line (its last checkpoint, or after it): named, run and record.
    const after = (rows[1]?.lastSeq ?? 0) as number;
    assert.ok(after >= (checkpoints.rows[1].last as number));
    const changed = await admin((client) =>
      client.query(
        `UPDATE "${schema}".records SET line = overlay(line placing 'y'::bytea from 60 for 1) WHERE run_id = 'held' AND seq = $1 AND get_byte(line, 59) <> 121`,
        [after],
      ),
    );
    assert.equal(changed.rowCount, 1, 'the byte really changed');
    const damagedAfter = (await store.tails()).get('held');
    assert.ok(damagedAfter !== undefined && !damagedAfter.ok);
    assert.match(damagedAfter.detail, new RegExp(`#held: record ${after}: `));

    // One byte changed before closed's last checkpoint: not what status reads; read finds it.
    const changedBefore = await admin((client) =>
      client.query(
        `UPDATE "${schema}".records SET line = overlay(line placing 'y'::bytea from 60 for 1) WHERE run_id = 'closed' AND seq = 3 AND get_byte(line, 59) <> 121`,
      ),
    );
    assert.equal(changedBefore.rowCount, 1, 'the byte really changed');
    assert.equal((await store.tails()).get('closed')?.ok, true);
    const read = await store.read('closed');
    assert.ok(!read.ok);
    assert.match(read.detail, /#closed: record 3: /);
    // `status --database` reads what tails reads; `--verify` reads every record, as read does.
    const statusOf = async (verify: boolean) => {
      const args = ['status', '--database', database.url, '--schema', schema, '--json'];
      const run = await runCli(verify ? [...args, '--verify'] : args, { cwd: process.cwd() });
      const json = JSON.parse(run.stdout) as {
        runs: { path: string; state: string; detail: string | null }[];
      };
      return { code: run.code, closed: json.runs.find((entry) => entry.path === 'closed') };
    };
    const plain = await statusOf(false);
    assert.notEqual(plain.closed?.state, 'unreadable', 'status reads from the last checkpoint');
    const verified = await statusOf(true);
    assert.equal(verified.closed?.state, 'unreadable');
    assert.match(verified.closed?.detail ?? '', /#closed: record 3: /);
    assert.equal(verified.code, 4);
    await held.close().catch(() => undefined);
  } finally {
    await store.close();
  }
});

test('a schema at version 2 holding runs upgrades to 3: sizes filled in, every run a root, status reads it', async () => {
  const schema = await database.newSchema();
  const fixture = await readFile(new URL('../fixtures/v1/stopped.jsonl', import.meta.url));
  await admin(async (client) => {
    assert.deepEqual(await migrate(client as unknown as pg.PoolClient, schema, 2), [1, 2]);
    const lines: Buffer[] = [];
    for (let start = 0; start < fixture.length; ) {
      const end = fixture.indexOf(0x0a, start);
      lines.push(fixture.subarray(start, end + 1));
      start = end + 1;
    }
    await client.query(
      `INSERT INTO "${schema}".runs (run_id, last_seq, status) VALUES ('laptop', $1, 'awaiting-approval')`,
      [lines.length - 1],
    );
    for (const [seq, line] of lines.entries()) {
      const decoded = decodeLine(line.subarray(0, line.length - 1));
      assert.ok(decoded.ok);
      await client.query(
        `INSERT INTO "${schema}".records (run_id, seq, epoch, type, line) VALUES ('laptop', $1, 1, $2, $3)`,
        [seq, decoded.record.type, line],
      );
    }
  });
  await assert.rejects(
    PostgresStore.connect({ connectionString: database.url, schema }),
    /is at version 2, this llm-agent needs 5/,
  );
  assert.deepEqual(
    await PostgresStore.migrate({ connectionString: database.url, schema }),
    [3, 4, 5],
  );
  const store = await PostgresStore.connect({ connectionString: database.url, schema });
  try {
    const [row] = await store.runs();
    assert.deepEqual(
      [row?.run, row?.bytes, row?.parent, row?.depth, row?.status],
      ['laptop', fixture.length, null, 0, 'awaiting-approval'],
    );
    // Written before summaries existed: none; status folds its records instead.
    assert.equal((await store.summaries())[0]?.summary, null);
    const tail = (await store.tails()).get('laptop');
    assert.ok(tail?.ok);
    assert.equal(tail.state.halt?.state, 'stopped');
    assert.ok((await store.exportBytes('laptop')).equals(fixture), 'byte for byte');
  } finally {
    await store.close();
  }
});
