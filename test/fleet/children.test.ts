import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { createInterface } from 'node:readline';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Worker } from '../../src/fleet/worker.ts';
import { BACKGROUND_FRAME } from '../../src/subagents/background-frame.ts';
import { INTERRUPTED_MESSAGE } from '../../src/revival/texts.ts';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { isKnownRecord } from '../../src/transcript/validate-record.ts';
import { runCli } from '../cli/support/cli-fixtures.ts';
import { type TestDatabase, testDatabase } from '../support/postgres.ts';
import { familyAgents } from './support/family-agents.ts';

/*
 * Children across workers on the PostgreSQL store: a child is a run of its own that any worker
 * takes; its parent's join waits for it in the database. A child whose worker died is revived
 * on another worker and answers the join of a parent on a third; a parent that died in its join
 * is revived with the join still pending, and the child's end answers it.
 */

let database: TestDatabase;
before(async () => {
  database = await testDatabase();
});
after(async () => {
  await database?.stop();
});

const LEASE_MS = 400;
const CHILD_QUICK = 'main.agents/quick-';
const meta = { agentId: 'main', agentType: 'lead', label: 'lead', model: 'scripted' };

async function setUp(): Promise<{ schema: string; admin: pg.Client }> {
  const schema = await database.newSchema();
  await PostgresStore.migrate({ connectionString: database.url, schema });
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  await admin.query(`CREATE TABLE "${schema}".ledger (what text)`);
  return { schema, admin };
}

/** A worker in this process, serving until `stop` aborts; its log lines go to `log`. */
async function serving(
  schema: string,
  options: {
    concurrency: number;
    log: string[];
    stop: AbortSignal;
    fetch?: () => Promise<string>;
    /** How long a join waits between looks without a notification (default 5 s). */
    joinPollMs?: number;
  },
): Promise<{ store: PostgresStore; served: Promise<void> }> {
  const store = await PostgresStore.connect({
    connectionString: database.url,
    schema,
    leaseMs: LEASE_MS,
  });
  const worker = new Worker({
    store,
    agents: familyAgents(options.fetch ?? (async () => 'a page')),
    resolveModel: () => {
      throw new Error('no model specs here');
    },
    policy: 'auto',
    maxRevivals: 2,
    concurrency: options.concurrency,
    joinPollMs: options.joinPollMs ?? 5_000,
    signal: options.stop,
    log: (line) => options.log.push(line),
  });
  return { store, served: worker.serve(50) };
}

/** Poll until `check` holds (every 50 ms, at most `ms`). */
async function until(what: string, check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`);
    await new Promise((done) => setTimeout(done, 50));
  }
}

function workerProcess(schema: string): { child: ChildProcess; lines: AsyncIterator<string> } {
  const child = spawn(
    process.execPath,
    [
      fileURLToPath(new URL('./support/family-worker.ts', import.meta.url)),
      database.url,
      schema,
      String(LEASE_MS),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const lines = createInterface({
    input: child.stdout as NonNullable<typeof child.stdout>,
  })[Symbol.asyncIterator]();
  return { child, lines };
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = new Promise<NodeJS.Signals | null>((done) =>
    child.on('exit', (_code, signal) => done(signal)),
  );
  child.kill('SIGKILL');
  assert.equal(await exited, 'SIGKILL', 'the worker process really died');
}

async function rowOf(store: PostgresStore, run: string) {
  return (await store.runs()).find((row) => row.run === run);
}

/** The outputs of `main`'s task_wait results, as recorded. */
async function joinResults(store: PostgresStore): Promise<unknown[]> {
  const read = await store.read('main');
  assert.ok(read.ok);
  return read.records
    .filter(isKnownRecord)
    .flatMap((record) =>
      record.type === 'message' && record.role === 'tool'
        ? record.content.filter(
            (part) => part.type === 'tool-result' && part.toolName === 'task_wait',
          )
        : [],
    )
    .map((part) => (part.type === 'tool-result' ? part.output : null));
}

test('a parent on worker A joins a child that worker B runs: the join wakes on the child’s end', async () => {
  const { schema, admin } = await setUp();
  const stop = new AbortController();
  const logA: string[] = [];
  const logB: string[] = [];
  const stores: PostgresStore[] = [];
  try {
    const submitter = await PostgresStore.connect({ connectionString: database.url, schema });
    stores.push(submitter);
    await submitter.submit('main', meta, 'say hello');
    // A carries one run at a time: once it holds main, the child can only go to B. A's join
    // looks again only after an hour: it can only end by a notification of the child's end.
    const a = await serving(schema, {
      concurrency: 1,
      log: logA,
      stop: stop.signal,
      joinPollMs: 3_600_000,
    });
    stores.push(a.store);
    await until('A took main', async () => logA.includes('main: taken'));
    const b = await serving(schema, { concurrency: 1, log: logB, stop: stop.signal });
    stores.push(b.store);
    await until(
      'main finished',
      async () => (await rowOf(submitter, 'main'))?.status === 'finished',
    );
    const child = (await submitter.runs()).find((row) => row.run.startsWith(CHILD_QUICK));
    assert.ok(child !== undefined, 'the spawn made a child run');
    assert.deepEqual([child.parent, child.depth, child.status], ['main', 1, 'finished']);
    assert.ok(logB.includes(`${child.run}: taken`), `B ran the child: ${logB.join(' | ')}`);
    assert.ok(!logA.includes(`${child.run}: taken`), 'A never did');
    const [joined] = await joinResults(submitter);
    assert.deepEqual(joined, {
      results: [
        {
          agentId: child.run.slice('main.agents/'.length),
          status: 'finished',
          answer: 'quick answer to say hello',
        },
      ],
    });
  } finally {
    stop.abort();
    for (const store of stores) await store.close();
    await admin.end();
  }
});

test('a child whose worker was killed mid-tool is revived on worker B and answers the join of its parent on worker A; the tool is not replayed', async () => {
  const { schema, admin } = await setUp();
  const stop = new AbortController();
  const logA: string[] = [];
  const logB: string[] = [];
  const stores: PostgresStore[] = [];
  let doomed: ChildProcess | undefined;
  try {
    const submitter = await PostgresStore.connect({ connectionString: database.url, schema });
    stores.push(submitter);
    await submitter.submit('main', meta, 'fetch the page');
    const a = await serving(schema, { concurrency: 1, log: logA, stop: stop.signal });
    stores.push(a.store);
    await until('A took main', async () => logA.includes('main: taken'));
    const worker = workerProcess(schema);
    doomed = worker.child;
    let took = '';
    for (let line = await worker.lines.next(); !line.done; line = await worker.lines.next()) {
      if (line.value.startsWith('took ')) took = line.value.slice('took '.length);
      if (line.value === 'in-tool') break;
    }
    assert.match(took, /^main\.agents\/fetcher-/, 'the process took the child');
    await kill(worker.child);
    assert.equal(
      (await admin.query(`SELECT * FROM "${schema}".ledger`)).rowCount,
      1,
      'the fetch ran once, in the killed worker',
    );
    const fetched: string[] = [];
    const b = await serving(schema, {
      concurrency: 1,
      log: logB,
      stop: stop.signal,
      fetch: async () => {
        fetched.push('again');
        return 'a page';
      },
    });
    stores.push(b.store);
    await until(
      'main finished',
      async () => (await rowOf(submitter, 'main'))?.status === 'finished',
    );
    assert.ok(
      logB.some((line) => line.startsWith(`${took}: revived`)),
      `B revived the child: ${logB.join(' | ')}`,
    );
    assert.deepEqual(fetched, [], 'the interrupted fetch was answered, never run again');
    const child = await rowOf(submitter, took);
    assert.deepEqual([child?.status, child?.revivalsUsed], ['finished', 1]);
    assert.equal((await rowOf(submitter, 'main'))?.revivalsUsed, 0, 'the parent never died');
    const [joined] = (await joinResults(submitter)) as [{ results: { answer: string }[] }];
    assert.equal(joined.results.length, 1);
    assert.equal(
      joined.results[0]?.answer,
      `fetch interrupted: ${INTERRUPTED_MESSAGE.slice(0, 40)}`,
      'the parent heard the revived child’s honest answer',
    );
  } finally {
    stop.abort();
    doomed?.kill('SIGKILL');
    for (const store of stores) await store.close();
    await admin.end();
  }
});

test('a parent whose worker died in its join is revived with the join pending; the child’s end answers it, not "interrupted"', async () => {
  const { schema, admin } = await setUp();
  const stop = new AbortController();
  const log: string[] = [];
  const stores: PostgresStore[] = [];
  let doomed: ChildProcess | undefined;
  try {
    const submitter = await PostgresStore.connect({ connectionString: database.url, schema });
    stores.push(submitter);
    await submitter.submit('main', meta, 'say hello');
    const worker = workerProcess(schema);
    doomed = worker.child;
    const first = await worker.lines.next();
    assert.equal(first.value, 'took main');
    // Its one slot holds main, so the child waits queued while main sits in task_wait.
    await until('main is in its join', async () => {
      const read = await submitter.read('main');
      return (
        read.ok &&
        read.records.some(
          (record) =>
            record.type === 'tool-dispatched' &&
            'toolName' in record &&
            record.toolName === 'task_wait',
        )
      );
    });
    await kill(worker.child);
    const childBefore = (await submitter.runs()).find((row) => row.run.startsWith(CHILD_QUICK));
    assert.equal(childBefore?.status, 'queued', 'the child had not run');
    // status --database shows the tree as status shows a folder's: the dead parent waiting on
    // its queued child.
    await until(
      'main’s lease ran out',
      async () => (await rowOf(submitter, 'main'))?.leaseExpired === true,
    );
    const status = await runCli(
      ['status', '--database', database.url, '--schema', schema, '--json'],
      { cwd: tmpdir() },
    );
    assert.equal(status.code, 3, status.stderr);
    const [root, ...others] = JSON.parse(status.stdout).runs;
    assert.deepEqual(others, [], 'one tree');
    assert.deepEqual(
      [root.path, root.state, root.reason, root.database.leaseExpired],
      ['main', 'revivable', 'its worker died: waiting on 1 child', true],
    );
    assert.deepEqual(
      root.children.map((child: { path: string; state: string }) => [child.path, child.state]),
      [[childBefore?.run, 'queued']],
    );
    const b = await serving(schema, { concurrency: 2, log, stop: stop.signal });
    stores.push(b.store);
    await until(
      'main finished',
      async () => (await rowOf(submitter, 'main'))?.status === 'finished',
    );
    assert.ok(
      log.some((line) => line.startsWith('main: revived')),
      log.join(' | '),
    );
    assert.equal((await rowOf(submitter, 'main'))?.revivalsUsed, 1);
    const joins = (await joinResults(submitter)) as { results: { answer: string }[] }[];
    assert.equal(joins.length, 1, 'one answer for the one join');
    assert.equal(joins[0]?.results[0]?.answer, 'quick answer to say hello');
    assert.ok(!JSON.stringify(joins).includes(INTERRUPTED_MESSAGE.slice(0, 30)));
  } finally {
    stop.abort();
    doomed?.kill('SIGKILL');
    for (const store of stores) await store.close();
    await admin.end();
  }
});

test('a child that ends while its parent does not wait is delivered to the parent at its next step', async () => {
  const { schema, admin } = await setUp();
  const stop = new AbortController();
  const log: string[] = [];
  const stores: PostgresStore[] = [];
  try {
    const submitter = await PostgresStore.connect({ connectionString: database.url, schema });
    stores.push(submitter);
    await submitter.submit('main', { ...meta, agentType: 'patient' }, 'start one');
    const worker = await serving(schema, { concurrency: 2, log, stop: stop.signal });
    stores.push(worker.store);
    await until(
      'main finished',
      async () => (await rowOf(submitter, 'main'))?.status === 'finished',
    );
    const read = await submitter.read('main');
    assert.ok(read.ok);
    const answer = read.records
      .filter(isKnownRecord)
      .flatMap((record) =>
        record.type === 'message' && record.role === 'assistant'
          ? record.content.flatMap((part) => (part.type === 'text' ? [part.text] : []))
          : [],
      )
      .at(-1);
    assert.ok(
      (answer ?? '').startsWith(`patient heard: ${BACKGROUND_FRAME} The child agent quick-`),
      answer,
    );
    assert.match(answer ?? '', /has finished\. Its final answer:\n\nquick answer to ping$/);
    assert.ok(
      !JSON.stringify(await joinResults(submitter)).includes('quick'),
      'no join reported it',
    );
  } finally {
    stop.abort();
    for (const store of stores) await store.close();
    await admin.end();
  }
});
