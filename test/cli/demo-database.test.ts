import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { type TestDatabase, testDatabase } from '../support/postgres.ts';
import { REPO, runCli } from './support/cli-fixtures.ts';

/* `llm-agent demo --database URL` from the repository, as the README says to try it. */

let database: TestDatabase;
before(async () => {
  database = await testDatabase();
});
after(async () => {
  await database?.stop();
});

test('demo --database: two workers, one SIGKILLed mid-tool, an approval, a revival once, a paused worker fenced out; every check holds', async () => {
  const result = await runCli(['demo', '--database', database.url], { cwd: REPO });
  assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
  assert.match(result.stdout, /All 12 checks held\./);
  assert.doesNotMatch(result.stdout, /✗/);
  const schema = /schema (llm_agent_demo_[a-z0-9]+)/.exec(result.stdout)?.[1];
  assert.ok(schema !== undefined);
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const runs = await client.query(`SELECT run_id, status FROM "${schema}".runs ORDER BY run_id`);
    assert.deepEqual(
      runs.rows.map((row) => [row.run_id, row.status]),
      [
        ['release-1', 'finished'],
        ['release-2', 'awaiting-approval'],
      ],
    );
  } finally {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  }
});
