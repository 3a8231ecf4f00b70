import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { type TestDatabase, testDatabase } from '../support/postgres.ts';
import { runCli, temporaryFolder } from './support/cli-fixtures.ts';

/* `llm-agent db migrate` against a real PostgreSQL (DATABASE_URL, or a throw-away cluster). */

let database: TestDatabase;
before(async () => {
  database = await testDatabase();
});
after(async () => {
  await database?.stop();
});

test('db migrate applies the schema once, then says it is current; a store then connects', async () => {
  const cwd = await temporaryFolder();
  const schema = database.schema;
  const first = await runCli(['db', 'migrate', '--database', database.url, '--schema', schema], {
    cwd,
  });
  assert.equal(first.code, 0, first.stderr);
  assert.equal(first.stdout, `Applied migrations 1, 2, 3, 4, 5 to the schema "${schema}".\n`);
  const again = await runCli(['db', 'migrate', '--schema', schema], {
    cwd,
    env: { LLM_AGENT_DATABASE_URL: database.url },
  });
  assert.equal(again.code, 0, again.stderr);
  assert.equal(again.stdout, `The schema "${schema}" is current.\n`);
  const store = await PostgresStore.connect({ connectionString: database.url, schema });
  assert.deepEqual(await store.list(), []);
  await store.close();
});

test('db: mistakes are one line and exit 2; a server that refuses is exit 1', async () => {
  const cwd = await temporaryFolder();
  const noUrl = await runCli(['db', 'migrate'], { cwd, env: { LLM_AGENT_DATABASE_URL: '' } });
  assert.equal(noUrl.code, 2);
  assert.equal(
    noUrl.stderr,
    'llm-agent: db migrate: give --database URL (or set LLM_AGENT_DATABASE_URL)\n',
  );
  const badSchema = await runCli(
    ['db', 'migrate', '--database', database.url, '--schema', 'Bad;'],
    { cwd },
  );
  assert.equal(badSchema.code, 2);
  assert.match(badSchema.stderr, /--schema "Bad;" is not a schema name/);
  const unknown = await runCli(['db', 'drop'], { cwd });
  assert.equal(unknown.code, 2);
  const refused = await runCli(
    ['db', 'migrate', '--database', 'postgres://nobody@127.0.0.1:1/none'],
    { cwd },
  );
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /^llm-agent: db migrate: .*ECONNREFUSED/);
});
