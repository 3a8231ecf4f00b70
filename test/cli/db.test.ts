import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { databaseOptions, maskedNote } from '../../src/render/database-hint.ts';
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

test('a schema not migrated yet: one line naming the db migrate that fixes it, as the user runs the CLI', async () => {
  const cwd = await temporaryFolder();
  const schema = await database.newSchema();
  const target = databaseOptions(database.url, schema);
  const status = await runCli(['status', '--database', database.url, '--schema', schema], {
    cwd,
    env: { npm_command: 'exec' },
  });
  assert.equal(status.code, 1);
  assert.ok(
    status.stderr.endsWith(
      `is at version 0, this llm-agent needs 5: run npx llm-agent-revival db migrate ${target.args}${maskedNote(target.masked)}\n`,
    ),
    status.stderr,
  );
  assert.equal(status.stderr.split('\n').length, 2, 'one line');
  const noRuns = await runCli(['revive', '--database', database.url, '--schema', schema], {
    cwd,
    env: { npm_command: 'exec' },
  });
  assert.equal(noRuns.code, 2);
  assert.equal(
    noRuns.stderr,
    `llm-agent: revive: give the RUNs to approve (npx llm-agent-revival status ${target.args} lists them${maskedNote(target.masked)})\n`,
  );
  // The command as printed (the password put back, if the URL has one) migrates it.
  const migrated = await runCli(['db', 'migrate', '--database', database.url, '--schema', schema], {
    cwd,
  });
  assert.equal(migrated.code, 0, migrated.stderr);
  const current = await runCli(['status', '--database', database.url, '--schema', schema], {
    cwd,
  });
  assert.equal(current.code, 0, current.stderr);
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
