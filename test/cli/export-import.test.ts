import assert from 'node:assert/strict';
import { copyFile, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type TestDatabase, testDatabase } from '../support/postgres.ts';
import { REPO, runCli, temporaryFolder } from './support/cli-fixtures.ts';

/*
 * A run stopped on a laptop (the frozen fixture stopped.jsonl: a deploy in flight) is imported
 * into PostgreSQL byte for byte, exported back identical, approved and revived by a worker on
 * "the cluster", its deploy answered as interrupted, never run again.
 */

let database: TestDatabase;
let folder = '';
before(async () => {
  database = await testDatabase();
  folder = await temporaryFolder();
  const scripted = join(REPO, 'src/demo/prompt-model.ts');
  await writeFile(
    join(folder, 'agents.ts'),
    `import { createPromptModel } from ${JSON.stringify(scripted)};
const lastResult = (prompt) => prompt.turns.flatMap((turn) => turn.toolResults).at(-1);
export default {
  main: {
    description: 'The fixture run',
    system: 'main',
    model: createPromptModel({
      script: (prompt) => ({ text: lastResult(prompt)?.isError ? 'checked staging first' : 'deployed' }),
    }),
  },
};
`,
  );
});
after(async () => {
  await database?.stop();
  await rm(folder, { recursive: true, force: true });
});

const cli = (args: string[]) =>
  runCli(args, { cwd: folder, env: { LLM_AGENT_DATABASE_URL: database.url } });

test('import a laptop run, export it back byte for byte, and carry it on on the cluster', async () => {
  const schema = database.schema;
  assert.equal((await cli(['db', 'migrate', '--schema', schema])).code, 0);
  const original = join(REPO, 'test/fixtures/v1/stopped.jsonl');
  await copyFile(original, join(folder, 'laptop.jsonl'));

  const imported = await cli(['import', 'laptop.jsonl', '--schema', schema]);
  assert.equal(imported.code, 0, imported.stderr);
  assert.equal(imported.stdout, 'Imported laptop.jsonl as laptop (6 records).\n');
  const exported = await cli(['export', 'laptop', '--schema', schema, '--out', 'back.jsonl']);
  assert.equal(exported.code, 0, exported.stderr);
  assert.ok(
    (await readFile(join(folder, 'back.jsonl'))).equals(await readFile(original)),
    'the export is the laptop file, byte for byte',
  );
  const again = await cli(['export', 'laptop', '--schema', schema, '--out', 'back.jsonl']);
  assert.equal(again.code, 2);
  assert.match(again.stderr, /back\.jsonl exists \(export never writes over a file\)/);

  const status = JSON.parse(
    (await cli(['status', '--database', database.url, '--schema', schema, '--json'])).stdout,
  );
  assert.deepEqual(
    status.runs.map((run: { path: string; state: string; database: { status: string } }) => [
      run.path,
      run.state,
      run.database.status,
    ]),
    [['laptop', 'stopped', 'awaiting-approval']],
  );
  const approved = await cli([
    'revive',
    '--database',
    database.url,
    '--schema',
    schema,
    'laptop',
    '--yes',
  ]);
  assert.equal(approved.code, 0, approved.stderr);
  assert.match(
    approved.stdout,
    /answer deploy call-1 \(side-effect\) as interrupted, outcome unknown — NOT retried/,
  );
  const worker = await cli(['worker', '--agents', 'agents.ts', '--schema', schema, '--once']);
  assert.equal(worker.code, 0, worker.stderr);
  assert.match(worker.stderr, /laptop: revived \(revival 1 of 3\)/);
  assert.match(worker.stderr, /laptop: finished/);
  const out = await cli(['export', 'laptop', '--schema', schema]);
  assert.ok(
    out.stdout.startsWith(await readFile(original, 'utf8')),
    'the laptop bytes stay a prefix',
  );
  assert.match(out.stdout, /"type":"run-revived"/);
  assert.match(out.stdout, /checked staging first/);
});

test('import refuses a torn transcript, damage, and a name already taken', async () => {
  const schema = await database.newSchema();
  assert.equal((await cli(['db', 'migrate', '--schema', schema])).code, 0);
  const torn = await cli([
    'import',
    join(REPO, 'test/fixtures/v1/torn-tail.jsonl'),
    '--schema',
    schema,
  ]);
  assert.equal(torn.code, 4);
  assert.match(torn.stderr, /its last line is torn/);
  const damaged = await cli([
    'import',
    join(REPO, 'test/fixtures/v1/damaged-mid-file.jsonl'),
    '--schema',
    schema,
  ]);
  assert.equal(damaged.code, 4);
  const first = await cli([
    'import',
    join(REPO, 'test/fixtures/v1/failed.jsonl'),
    '--schema',
    schema,
  ]);
  assert.equal(first.code, 0, first.stderr);
  const twice = await cli([
    'import',
    join(REPO, 'test/fixtures/v1/failed.jsonl'),
    '--schema',
    schema,
  ]);
  assert.equal(twice.code, 2);
  assert.match(twice.stderr, /a run named failed exists in the database/);
});
