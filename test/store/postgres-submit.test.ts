import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import type { PostgresTranscriptWriter } from '../../src/store/postgres/postgres-writer.ts';
import { TranscriptError } from '../../src/transcript/transcript-error.ts';
import { type TestDatabase, testDatabase } from '../support/postgres.ts';
import { sessionMeta } from '../support/transcripts.ts';

/*
 * A submit is one statement — the run, its session-meta and its task, or nothing — and a
 * child's is fenced by its parent's epoch: a parent's worker that was taken over cannot start a
 * child.
 */

let database: TestDatabase;
before(async () => {
  database = await testDatabase();
});
after(async () => {
  await database?.stop();
});

test('submit: whole or nothing; a child only while its parent’s epoch is the submitter’s', async () => {
  const schema = await database.newSchema();
  await PostgresStore.migrate({ connectionString: database.url, schema });
  const store = await PostgresStore.connect({ connectionString: database.url, schema });
  const other = await PostgresStore.connect({
    connectionString: database.url,
    schema,
    leaseMs: 100,
  });
  try {
    const parent = await store.create('p', sessionMeta('p'));
    const epoch = (parent as PostgresTranscriptWriter).epoch;
    await store.submit('p.agents/a', sessionMeta('a'), 'task a', { run: 'p', epoch });
    const read = await store.read('p.agents/a');
    assert.ok(read.ok);
    assert.deepEqual(
      read.records.map((record) => record.type),
      ['session-meta', 'message'],
    );
    const row = (await store.runs()).find((candidate) => candidate.run === 'p.agents/a');
    assert.deepEqual([row?.status, row?.owner, row?.parent, row?.depth], ['queued', null, 'p', 1]);
    await assert.rejects(
      store.submit('p.agents/a', sessionMeta('a'), 'again', { run: 'p', epoch }),
      (error: unknown) => TranscriptError.isInstance(error) && error.code === 'exists',
    );
    // The parent's worker pauses past its lease; another takes the run over (a new epoch).
    (parent as PostgresTranscriptWriter).abandon('paused');
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    await admin.query(
      `UPDATE "${schema}".runs SET lease_expires = now() - interval '1 second' WHERE run_id = 'p'`,
    );
    await admin.end();
    const taker = await other.take('p', 'dead');
    assert.ok(taker !== null, 'the run was taken over');
    assert.ok(taker.epoch > epoch);
    await assert.rejects(
      store.submit('p.agents/b', sessionMeta('b'), 'task b', { run: 'p', epoch }),
      (error: unknown) =>
        TranscriptError.isInstance(error) &&
        error.code === 'ownership-lost' &&
        /its parent p was taken over/.test(error.message),
    );
    assert.equal((await store.read('p.agents/b')).ok, false, 'no child was made');
    await store.submit('p.agents/b', sessionMeta('b'), 'task b', { run: 'p', epoch: taker.epoch });
    await taker.close();
    await parent.close();
  } finally {
    await store.close();
    await other.close();
  }
});
