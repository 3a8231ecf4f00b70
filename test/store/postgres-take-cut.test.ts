import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { TranscriptError } from '../../src/transcript/transcript-error.ts';
import { type TestDatabase, testDatabase } from '../support/postgres.ts';
import { sessionMeta } from '../support/transcripts.ts';

/*
 * A take whose read of the run is cut off (its connection terminated, as the distributed
 * crashtest's chaos does) failed for a reason of the database's, not the run's: it is an `io`
 * error, and the run goes back to the queue as it was — never parked `unreadable` for a person.
 * (It was: the distributed crashtest found a healthy run "left unreadable after 0 revivals".)
 * The cut is made deterministic: the records table is locked, so the read waits, and the
 * waiting connection is terminated.
 */

let database: TestDatabase;
let admin: pg.Client;
before(async () => {
  database = await testDatabase();
  admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
});
after(async () => {
  await admin?.end();
  await database?.stop();
});

test('take: a read cut off by the database is an io error, and the run goes back to the queue — not parked unreadable', async () => {
  const schema = await database.newSchema();
  await PostgresStore.migrate({ connectionString: database.url, schema });
  const applicationName = `take-cut ${schema}`;
  const store = await PostgresStore.connect({
    connectionString: database.url,
    schema,
    applicationName,
  });
  const locker = new pg.Client({ connectionString: database.url });
  await locker.connect();
  try {
    await store.submit('r1', sessionMeta('r1'), 'task r1');
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE "${schema}".records IN ACCESS EXCLUSIVE MODE`);
    const taking = store.take('r1', 'queued').then(
      (writer) => ({ ok: true as const, writer }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    // The take's claim commits (it touches only the runs row); its read waits for the lock.
    let terminated = false;
    const deadline = Date.now() + 30_000;
    while (!terminated && Date.now() < deadline) {
      const cut = await admin.query<{ done: boolean }>(
        `SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity
          WHERE application_name = $1 AND wait_event_type = 'Lock' AND query LIKE '%records%'`,
        [applicationName],
      );
      terminated = cut.rows.some((row) => row.done);
      if (!terminated) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.ok(terminated, 'the fault: the take’s read was waiting and its connection was cut');
    await locker.query('ROLLBACK');
    const taken = await taking;
    assert.equal(taken.ok, false, 'the take failed');
    const error = taken.ok ? undefined : taken.error;
    assert.ok(TranscriptError.isInstance(error), `a TranscriptError, got ${String(error)}`);
    assert.equal(error.code, 'io', error.message);
    assert.match(error.message, /terminat/);
    const row = (await store.runs()).find((candidate) => candidate.run === 'r1');
    assert.deepEqual(
      { owner: row?.owner, status: row?.status, detail: row?.detail },
      { owner: null, status: 'queued', detail: null },
      'back in the queue, unowned, not parked unreadable',
    );
    // Any worker takes it again and reads it whole.
    const again = await store.take('r1', 'queued');
    assert.ok(again !== null);
    assert.equal(again.state.meta?.agentId, sessionMeta('r1').agentId);
    await again.close();
  } finally {
    await locker.end().catch(() => undefined);
    await store.close();
  }
});
