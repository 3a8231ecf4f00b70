import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { type TestDatabase, testDatabase } from '../support/postgres.ts';
import { sessionMeta } from '../support/transcripts.ts';

/*
 * A run the fleet cannot read — a worker died holding it, and one of its records rotted — under
 * real `llm-agent worker --policy auto` processes: taken once, found unreadable, parked
 * `unreadable` with its reason for a person, and said so once in one worker's log. (It was
 * taken again at every lease, its epoch climbing, without a word.)
 */

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(REPO, 'src/cli/main.ts');
const AGENTS = join(REPO, 'attack/agents-module.ts');

let database: TestDatabase;
let client: pg.Client;
let folder = '';
before(async () => {
  database = await testDatabase();
  client = new pg.Client({ connectionString: database.url });
  await client.connect();
  folder = await mkdtemp(join(tmpdir(), 'llm-agent-unreadable-'));
});
after(async () => {
  await client?.end();
  await database?.stop();
  await rm(folder, { recursive: true, force: true });
});

interface RunningWorker {
  child: ChildProcess;
  log: () => string;
}

function startWorker(schema: string, policy: 'auto' | 'ask'): RunningWorker {
  const child = spawn(
    process.execPath,
    [
      CLI,
      'worker',
      '--database',
      database.url,
      '--schema',
      schema,
      '--agents',
      AGENTS,
      '--policy',
      policy,
      '--lease',
      '300',
      '--poll',
      '50',
    ],
    { cwd: folder, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
  );
  let log = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    log += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    log += chunk;
  });
  return { child, log: () => log };
}

/** Wait until every worker is serving (a Node start can take seconds on a loaded machine). */
async function serving(workers: RunningWorker[]): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!workers.every((worker) => worker.log().includes('] serving ')) && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 50));
}

async function stop(worker: RunningWorker): Promise<void> {
  if (worker.child.exitCode !== null) return;
  const exited = new Promise((resolve) => worker.child.once('exit', resolve));
  worker.child.kill('SIGTERM');
  await exited;
}

/** A run whose worker died holding it (lease of 300 ms, abandoned) and whose record 1 rotted. */
async function deadDamagedRun(schema: string, run: string): Promise<number> {
  const store = await PostgresStore.connect({
    connectionString: database.url,
    schema,
    leaseMs: 300,
  });
  try {
    await store.submit(run, { ...sessionMeta(run), agentType: 'main' }, 'plan:parallel');
    const writer = await store.take(run, 'queued');
    assert.ok(writer !== null);
    writer.abandon('its worker was killed');
    await writer.close();
    await client.query(
      `UPDATE "${schema}".records SET line = set_byte(line, 30, get_byte(line, 30) # 1) WHERE run_id = $1 AND seq = 1`,
      [run],
    );
    const read = await store.read(run);
    assert.equal(read.ok, false, 'the fault: record 1 no longer reads');
    return writer.epoch;
  } finally {
    await store.close();
  }
}

async function row(schema: string, run: string) {
  const found = await client.query<{
    r: { owner: string | null; epoch: number; status: string; status_detail?: string | null };
  }>(`SELECT to_jsonb(runs) AS r FROM "${schema}".runs WHERE run_id = $1`, [run]);
  return found.rows[0]?.r;
}

test('worker --policy auto: a dead run that cannot be read is parked unreadable with its reason, once, and the log says so', async () => {
  const schema = database.schema;
  await PostgresStore.migrate({ connectionString: database.url, schema });
  const epoch = await deadDamagedRun(schema, 'hurt');
  await new Promise((resolve) => setTimeout(resolve, 400)); // its lease runs out
  const workers = [startWorker(schema, 'auto'), startWorker(schema, 'auto')];
  try {
    await serving(workers);
    // Ten leases: time enough to be taken again and again if it were left held.
    await new Promise((resolve) => setTimeout(resolve, 2000 + 10 * 300));
  } finally {
    await Promise.all(workers.map(stop));
  }
  const logs = workers.map((worker) => worker.log()).join('');
  const after = await row(schema, 'hurt');
  assert.ok(after !== undefined);
  assert.equal(Number(after.epoch), epoch + 1, `taken exactly once; log:\n${logs}`);
  assert.equal(after.owner, null, logs);
  assert.equal(after.status, 'unreadable', logs);
  assert.match(after.status_detail ?? '', /record 1: .*checksum/);
  const said = logs.split('\n').filter((line) => /hurt: cannot be read/.test(line));
  assert.equal(said.length, 1, logs);
  assert.match(
    said[0] ?? '',
    /hurt: cannot be read \(.*record 1.*\); parked unreadable for a person/,
  );

  const status = await new Promise<string>((resolve) => {
    const child = spawn(
      process.execPath,
      [CLI, 'status', '--database', database.url, '--schema', schema, '--json'],
      { cwd: folder, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
    });
    child.on('close', () => resolve(out));
  });
  const shown = (
    JSON.parse(status) as {
      runs: { path: string; state: string; detail?: string; database: { status: string } }[];
    }
  ).runs.find((entry) => entry.path === 'hurt');
  assert.equal(shown?.state, 'unreadable');
  assert.equal(shown?.database.status, 'unreadable');
  assert.match(shown?.detail ?? '', /record 1/);
});

test('worker --policy ask: an approved run that cannot be read is parked unreadable, not approved again and again', async () => {
  const schema = await database.newSchema();
  await PostgresStore.migrate({ connectionString: database.url, schema });
  const epoch = await deadDamagedRun(schema, 'hurt2');
  await new Promise((resolve) => setTimeout(resolve, 400));
  const worker = startWorker(schema, 'ask');
  try {
    await serving([worker]);
    const deadline = Date.now() + 10_000;
    while ((await row(schema, 'hurt2'))?.status !== 'awaiting-approval' && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    await client.query(
      `UPDATE "${schema}".runs SET status = 'approved' WHERE run_id = 'hurt2' AND status = 'awaiting-approval'`,
    );
    await new Promise((resolve) => setTimeout(resolve, 3000 + 10 * 300));
  } finally {
    await stop(worker);
  }
  const after = await row(schema, 'hurt2');
  // Parked for approval (one epoch), taken once approved (one more).
  assert.equal(Number(after?.epoch), epoch + 2, worker.log());
  assert.equal(after?.status, 'unreadable', worker.log());
  assert.equal(after?.owner, null);
  assert.equal(worker.log().match(/hurt2: cannot be read/g)?.length, 1, worker.log());
});
