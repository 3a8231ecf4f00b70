import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { INTERRUPTED_MESSAGE, RECOVERED_NOTE } from '../../src/revival/texts.ts';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { runCli } from '../cli/support/cli-fixtures.ts';
import { makeTempFolder, removeFolder } from '../support/transcripts.ts';
import { type TestDatabase, testDatabase } from '../support/postgres.ts';

/*
 * DBOS Transact side by side with our wrapper, with real DBOS worker processes on PostgreSQL:
 * a worker is SIGKILLed inside a side-effect tool, and the workflow is recovered by another
 * process with the same executor id (DBOS recovers an executor's own workflows at launch).
 * DBOS's documented pattern (each tool call a step) runs the tool again; with DbosRun and
 * dbosTools the tool ran once and the model read the interrupted text (or the reconcile's
 * verdict). A second process started while the first still runs: DBOS's pattern runs the tool
 * twice at once; ours waits on our lease and runs it once.
 */

const WORKER = fileURLToPath(new URL('./support/dbos-worker.ts', import.meta.url));
const SCHEMA = 'dbos_test_runs';

let server: TestDatabase;
let admin: pg.Client;
let url: string;
let database: string;

before(async () => {
  server = await testDatabase();
  admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  // DBOS keeps its system tables in a database: one of this test's own.
  database = `llm_dbos_crash_${process.pid}`;
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${database}`);
  const parsed = new URL(server.url);
  parsed.pathname = `/${database}`;
  url = parsed.toString();
  await PostgresStore.migrate({ connectionString: url, schema: SCHEMA });
});

after(async () => {
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
  await admin.end();
  await server.stop();
});

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function startWorker(env: Record<string, string>): {
  child: ChildProcess;
  exited: Promise<Exit>;
  output: () => string;
} {
  const child = spawn(process.execPath, [WORKER], {
    env: { ...process.env, DBOS_URL: url, STORE_SCHEMA: SCHEMA, EXECUTOR: 'executor-1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const exited = new Promise<Exit>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, exited, output: () => stdout + stderr };
}

const lines = (path: string) =>
  existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [];
const starts = (dir: string) =>
  lines(join(dir, 'effects.log')).filter((l) => l.startsWith('start'));

/** The tool results each model call was sent, in order. */
function promptsOf(dir: string): { pid: number; results: unknown[] }[] {
  return lines(join(dir, 'prompts.jsonl')).map((line) => JSON.parse(line));
}

async function until(check: () => boolean, what: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 50));
  }
}

/** First process killed inside the tool, then a second one (same executor id) recovers. */
async function killAndRecover(mode: 'plain' | 'wrapped', workflow: string, extra = {}) {
  const dir = await makeTempFolder('llm-agent-dbos-');
  const env = { MODE: mode, WORKFLOW: workflow, DIR: dir, ...extra };
  const died = await startWorker({ ...env, PHASE: 'start', KILL: '1' }).exited;
  assert.equal(died.signal, 'SIGKILL', `the worker really died inside its tool: ${died.stderr}`);
  assert.equal(starts(dir).length, 1, 'the tool had started once before the kill');
  const recovered = await startWorker({ ...env, PHASE: 'recover' }).exited;
  assert.equal(recovered.code, 0, recovered.stderr);
  assert.equal(JSON.parse(recovered.stdout.trim()).output, 'Done.');
  return { dir, recovered };
}

test("DBOS's pattern (each tool call a step): a worker SIGKILLed inside the tool, recovered by another process, runs the tool twice", async () => {
  const { dir } = await killAndRecover('plain', 'plain-kill');
  try {
    const effects = starts(dir);
    assert.equal(effects.length, 2, effects.join('\n'));
    assert.notEqual(effects[0], effects[1], 'once in each process');
  } finally {
    await removeFolder(dir);
  }
});

test('with DbosRun and dbosTools: SIGKILLed inside the tool and recovered, the tool ran once, the model read the interrupted text, status and show see the run', async () => {
  const { dir, recovered } = await killAndRecover('wrapped', 'wrapped-kill');
  try {
    assert.equal(starts(dir).length, 1, 'the tool was not run again');
    assert.match(recovered.stderr, /"revived":true/);
    const last = JSON.stringify(promptsOf(dir).at(-1)?.results);
    assert.ok(last.includes(INTERRUPTED_MESSAGE), `the model read the interrupted text: ${last}`);
    const status = await runCli(['status', '--database', url, '--schema', SCHEMA, '--json'], {
      cwd: dir,
    });
    const run = JSON.parse(status.stdout).runs.find(
      (candidate: { path: string }) => candidate.path === 'wrapped-kill',
    );
    assert.ok(run, status.stdout);
    assert.match(JSON.stringify(run), /finished/);
    const show = await runCli(['show', 'wrapped-kill', '--database', url, '--schema', SCHEMA], {
      cwd: dir,
    });
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, /NOT been retried/);
    assert.match(show.stdout, /Done\./);
  } finally {
    await removeFolder(dir);
  }
});

test("with a reconcile: the recovered call is answered with the reconcile's verdict, not run again", async () => {
  const { dir } = await killAndRecover('wrapped', 'wrapped-reconcile', { RECONCILE: '1' });
  try {
    assert.equal(starts(dir).length, 1, 'the tool was not run again');
    const last = JSON.stringify(promptsOf(dir).at(-1)?.results);
    assert.ok(last.includes(RECOVERED_NOTE), last);
    assert.ok(last.includes('found by reconcile'), last);
    assert.ok(!last.includes(INTERRUPTED_MESSAGE), last);
  } finally {
    await removeFolder(dir);
  }
});

/** A second process with the same executor id started while the first is inside the tool. */
async function secondWhileFirstRuns(mode: 'plain' | 'wrapped', workflow: string) {
  const dir = await makeTempFolder('llm-agent-dbos-');
  const hold = join(dir, 'release');
  const env = { MODE: mode, WORKFLOW: workflow, DIR: dir, HOLD: hold };
  const first = startWorker({ ...env, PHASE: 'start' });
  await until(() => starts(dir).length === 1, 'the first process to start the tool');
  const second = startWorker({ ...env, PHASE: 'recover' });
  // DBOS re-enqueues the workflow; either process may dequeue it and execute it a second time.
  const executions = () => (first.output() + second.output()).split('"executing"').length - 1;
  await until(() => executions() >= 2, 'a second execution of the workflow');
  // Then longer than a lease (1.5 s): the second execution has had every chance to act.
  const waitedUntil = Date.now() + 4000;
  await until(() => starts(dir).length === 2 || Date.now() > waitedUntil, 'the window');
  const startsWhileHeld = starts(dir).length;
  writeFileSync(hold, '');
  const [one, two] = await Promise.all([first.exited, second.exited]);
  return { dir, startsWhileHeld, one, two };
}

test("DBOS's pattern: a second process started while the first runs the tool runs it again at the same time", async () => {
  const { dir, startsWhileHeld, one } = await secondWhileFirstRuns('plain', 'plain-concurrent');
  try {
    assert.equal(one.code, 0, one.stderr);
    assert.equal(startsWhileHeld, 2, 'both processes were inside the tool at once');
  } finally {
    await removeFolder(dir);
  }
});

test('with DbosRun: a second process started while the first runs waits on our lease, then replays; the tool ran once', async () => {
  const { dir, startsWhileHeld, one, two } = await secondWhileFirstRuns(
    'wrapped',
    'wrapped-concurrent',
  );
  try {
    assert.equal(startsWhileHeld, 1, 'the second process did not start the tool');
    assert.equal(one.code, 0, one.stderr);
    assert.equal(starts(dir).length, 1, lines(join(dir, 'effects.log')).join('\n'));
    assert.equal(two.code, 0, two.stderr);
    // The second execution opened the run once the first let it go, and the conversation has
    // one answer to the call and one final turn.
    assert.equal(
      (one.stderr + two.stderr).split('"opened"').length - 1,
      2,
      one.stderr + two.stderr,
    );
    const store = await PostgresStore.connect({ connectionString: url, schema: SCHEMA });
    const read = await store.read('wrapped-concurrent');
    await store.close();
    assert.ok(read.ok);
    const messages = read.records.filter((record) => record.type === 'message');
    const texts = messages.map((record) => JSON.stringify(record));
    assert.equal(texts.filter((text) => text.includes('"Done."')).length, 1, texts.join('\n'));
    assert.equal(texts.filter((text) => text.includes('sent to ann')).length, 1, texts.join('\n'));
  } finally {
    await removeFolder(dir);
  }
});
