import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { quote } from '../../src/render/format-status.ts';
import { type TestDatabase, testDatabase } from '../support/postgres.ts';
import { REPO, runCli, temporaryFolder } from './support/cli-fixtures.ts';

/*
 * The command line over the PostgreSQL store, end to end, every step a real process: submit a
 * run, a worker takes it; a worker SIGKILLed mid-tool is found dead, fenced and parked awaiting
 * approval by another worker; `status --database` says so; a person approves with `revive
 * --database`; a worker revives it once — the tool's side effect (a ledger file it appends to)
 * happened once, never again.
 */

let database: TestDatabase;
let folder = '';
before(async () => {
  database = await testDatabase();
  folder = await temporaryFolder();
  const scripted = join(REPO, 'src/demo/prompt-model.ts');
  const deps = join(REPO, 'test/cli/support/fixture-deps.ts');
  await writeFile(
    join(folder, 'agents.ts'),
    `import { appendFileSync } from 'node:fs';
import { createPromptModel } from ${JSON.stringify(scripted)};
import { z } from ${JSON.stringify(deps)};

const lastResult = (prompt) => prompt.turns.flatMap((turn) => turn.toolResults).at(-1);

export default ({ cwd }) => ({
  writer: {
    description: 'Writes',
    system: 'writer',
    model: createPromptModel({ script: () => ({ text: 'written' }) }),
  },
  deployer: {
    description: 'Deploys once',
    system: 'deployer',
    model: createPromptModel({
      script: (prompt) => {
        const last = lastResult(prompt);
        if (last === undefined) return { toolCalls: [{ toolName: 'deploy', input: { to: 'prod' } }] };
        return { text: last.isError ? 'checked prod before doing anything again' : 'deployed' };
      },
    }),
    tools: [
      {
        name: 'deploy',
        description: 'Deploys',
        inputSchema: z.object({ to: z.string() }),
        idempotency: 'side-effect',
        execute: ({ to }) => {
          appendFileSync(cwd + '/ledger.txt', to + '\\n');
          // Never returns: the test kills the worker here.
          return new Promise(() => setInterval(() => undefined, 1000));
        },
      },
    ],
  },
});
`,
  );
});
after(async () => {
  await database?.stop();
  await rm(folder, { recursive: true, force: true });
});

const cli = (args: string[]) =>
  runCli(args, { cwd: folder, env: { LLM_AGENT_DATABASE_URL: database.url } });

test('submit, work, die mid-tool, park, approve, revive once: the CLI over PostgreSQL', async () => {
  const schema = database.schema;
  const onDatabase = (command: string, ...rest: string[]) =>
    cli([command, '--database', database.url, '--schema', schema, ...rest]);
  const migrated = await cli(['db', 'migrate', '--schema', schema]);
  assert.equal(migrated.code, 0, migrated.stderr);

  const submitted = await cli([
    'run',
    '--database',
    database.url,
    '--agents',
    'agents.ts',
    '--type',
    'writer',
    '--id',
    'job-1',
    '--schema',
    schema,
    'Write it',
  ]);
  assert.equal(submitted.code, 0, submitted.stderr);
  assert.equal(submitted.stdout, 'job-1\n');
  assert.match(submitted.stderr, /Submitted job-1 \(queued\)/);
  // The hint names this database and schema, so it runs when pasted (no URL placeholder).
  assert.ok(
    submitted.stderr.includes(
      `a worker takes it — llm-agent worker --database ${quote(database.url)} --schema ${schema} --agents agents.ts\n`,
    ),
    submitted.stderr,
  );
  const queued = JSON.parse(
    (await cli(['status', '--database', database.url, '--schema', schema, '--json'])).stdout,
  );
  assert.deepEqual(
    queued.runs.map((run: { path: string; state: string }) => [run.path, run.state]),
    [['job-1', 'queued']],
  );

  const once = await cli(['worker', '--agents', 'agents.ts', '--schema', schema, '--once']);
  assert.equal(once.code, 0, once.stderr);
  assert.match(once.stderr, /job-1: taken/);
  assert.match(once.stderr, /job-1: finished/);

  const deploy = await cli([
    'run',
    '--database',
    database.url,
    '--agents',
    'agents.ts',
    '--type',
    'deployer',
    '--id',
    'dep',
    '--schema',
    schema,
    'Deploy',
  ]);
  assert.equal(deploy.code, 0, deploy.stderr);
  // A serving worker with a short lease takes it and dies (SIGKILL) inside the deploy.
  const worker = spawn(
    join(REPO, 'node_modules/.bin/node'),
    [
      join(REPO, 'src/cli/main.ts'),
      'worker',
      '--agents',
      'agents.ts',
      '--schema',
      schema,
      '--lease',
      // Long enough that the status below, a process of its own, starts before it runs out
      // on a loaded machine.
      '10000',
      '--poll',
      '100',
    ],
    {
      cwd: folder,
      env: { ...process.env, LLM_AGENT_DATABASE_URL: database.url },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const exited = new Promise<NodeJS.Signals | null>((done) =>
    worker.on('exit', (_code, signal) => done(signal)),
  );
  const ledger = join(folder, 'ledger.txt');
  const deadline = Date.now() + 20_000;
  while ((await readFile(ledger, 'utf8').catch(() => '')) === '' && Date.now() < deadline) {
    await new Promise((done) => setTimeout(done, 50));
  }
  worker.kill('SIGKILL');
  assert.equal(await exited, 'SIGKILL', 'the worker died inside the tool');
  assert.equal(await readFile(ledger, 'utf8'), 'prod\n', 'the deploy ran once before the crash');

  const running = JSON.parse(
    (await cli(['status', '--database', database.url, '--schema', schema, '--json'])).stdout,
  );
  const held = running.runs.find((run: { path: string }) => run.path === 'dep');
  assert.equal(held.state, 'running');
  assert.match(held.database.owner, /:/, 'the worker holding it is named');
  // The lease runs out by the server's clock: the run reads revivable (its worker died), exit 3.
  let dead = await cli(['status', '--database', database.url, '--schema', schema, '--json']);
  const expires = Date.now() + 30_000;
  while (
    JSON.parse(dead.stdout).runs.find((run: { path: string }) => run.path === 'dep').database
      .leaseExpired !== true
  ) {
    assert.ok(Date.now() < expires, 'the lease never ran out');
    await new Promise((done) => setTimeout(done, 200));
    dead = await cli(['status', '--database', database.url, '--schema', schema, '--json']);
  }
  assert.equal(dead.code, 3);
  const died = JSON.parse(dead.stdout).runs.find((run: { path: string }) => run.path === 'dep');
  assert.deepEqual(
    [
      died.state,
      died.reason,
      died.openDispatches.map((call: { toolName: string }) => call.toolName),
    ],
    ['revivable', 'its worker died: 1 call in flight', ['deploy']],
  );

  const supervise = await cli(['worker', '--agents', 'agents.ts', '--schema', schema, '--once']);
  assert.equal(supervise.code, 0, supervise.stderr);
  assert.match(supervise.stderr, /dep: its worker died; fenced, awaiting approval/);
  const waiting = await cli(['status', '--database', database.url, '--schema', schema, '--wide']);
  assert.equal(waiting.code, 3);
  assert.match(waiting.stdout, /dep \(dep\)\s.*revivable\s+awaiting approval: 1 call in flight/);
  // The hint names this database and schema: it runs when pasted.
  assert.ok(
    waiting.stdout.includes(
      `\n  llm-agent revive --database ${quote(database.url)} --schema ${schema} dep\n`,
    ),
    waiting.stdout,
  );

  const refusedOffTerminal = await onDatabase('revive', 'dep');
  assert.equal(refusedOffTerminal.code, 2);
  assert.match(
    refusedOffTerminal.stdout,
    /answer deploy \S+ \(side-effect\) as interrupted, outcome unknown — NOT retried, unless its tool has a reconcile, which the reviving worker asks first \(nothing is run again\)\n/,
  );
  // One token estimate wherever it is said: the tree, the full check, the plan to approve.
  const tree = /Reviving would send about (\d+) tokens/.exec(waiting.stdout)?.[1];
  const planned = /run it: about (\d+) tokens/.exec(refusedOffTerminal.stdout)?.[1];
  const verified = JSON.parse((await onDatabase('status', '--json', '--verify')).stdout).runs.find(
    (run: { path: string }) => run.path === 'dep',
  ).resumeTokens;
  assert.ok(tree !== undefined && Number(tree) > 0, waiting.stdout);
  assert.deepEqual([planned, String(verified)], [tree, tree]);
  const approved = await onDatabase('revive', 'dep', '--yes');
  assert.equal(approved.code, 0, approved.stderr);
  assert.match(approved.stdout, /Approved dep: the next worker of this store to look revives it\./);

  const revive = await cli(['worker', '--agents', 'agents.ts', '--schema', schema, '--once']);
  assert.equal(revive.code, 0, revive.stderr);
  assert.match(revive.stderr, /dep: revived \(revival 1 of 3\)/);
  assert.match(revive.stderr, /dep: finished/);
  assert.equal(await readFile(ledger, 'utf8'), 'prod\n', 'never replayed');
  const shown = await cli(['show', 'dep', '--database', database.url, '--schema', schema]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(
    shown.stdout,
    /← error deploy \S+ "The previous session ended while this tool call was in flight/,
  );
  assert.match(shown.stdout, /checked prod before doing anything again/);
  const done = JSON.parse(
    (await cli(['status', '--database', database.url, '--schema', schema, '--json'])).stdout,
  );
  assert.deepEqual(
    done.runs.map((run: { path: string; state: string; revivalsUsed: number }) => [
      run.path,
      run.state,
      run.revivalsUsed,
    ]),
    [
      ['dep', 'finished', 1],
      ['job-1', 'finished', 0],
    ],
  );
});

test('a serving worker stops on SIGTERM with exit 130; a database that cannot be used is exit 1', async () => {
  const schema = await database.newSchema();
  assert.equal((await cli(['db', 'migrate', '--schema', schema])).code, 0);
  const worker = spawn(
    join(REPO, 'node_modules/.bin/node'),
    [
      join(REPO, 'src/cli/main.ts'),
      'worker',
      '--agents',
      'agents.ts',
      '--schema',
      schema,
      '--poll',
      '100',
    ],
    {
      cwd: folder,
      env: { ...process.env, LLM_AGENT_DATABASE_URL: database.url },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  const serving = new Promise<void>((done) =>
    worker.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      if (stderr.includes('serving')) done();
    }),
  );
  const ended = new Promise<number | null>((done) => worker.on('close', (code) => done(code)));
  await serving;
  worker.kill('SIGTERM');
  assert.equal(await ended, 130, stderr);
  // With LLM_AGENT_DATABASE_URL set, a PATH still means files: only --database means the store.
  const files = await cli(['status', folder]);
  assert.equal(files.code, 0, files.stderr);
  assert.match(files.stdout, /No transcripts found\./);
  const unmigrated = await cli([
    'status',
    '--database',
    database.url,
    '--schema',
    'never_migrated_here',
  ]);
  assert.equal(unmigrated.code, 1);
  assert.match(
    unmigrated.stderr,
    /^llm-agent: status: cannot use the database: .*run llm-agent db migrate/,
  );
});
