import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { reviveStoreRun } from '../../src/revival/revive-store-run.ts';
import { FileStore } from '../../src/store/file-store.ts';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import type { TranscriptStore } from '../../src/store/transcript-store.ts';
import { recordedOutcome } from '../../src/subagents/child-outcome.ts';
import { Composer } from '../../src/subagents/composer.ts';
import type { SessionMetaBody } from '../../src/transcript/records.ts';
import { type TestDatabase, testDatabase } from '../support/postgres.ts';
import { makeTempFolder, removeFolder } from '../support/transcripts.ts';
import {
  crashTreeRegistry,
  type Execution,
  MAIN_TASK,
  WORKER_TASKS,
} from './support/crash-tree.ts';

/*
 * The Composer over a store rather than files: the same tree (main spawns two workers and joins
 * them; each worker does one side effect) as runs `main` and `main.agents/<id>` of a FileStore
 * and of a PostgresStore — and, on PostgreSQL, killed mid-tool in another process and carried
 * on from the store the way the seed's flow does it: revive the children, resume them, revive
 * the parent; its join answered by the children, the effect done once.
 */

const runner = fileURLToPath(new URL('./support/store-tree-runner.ts', import.meta.url));
let database: TestDatabase;
let folder: string;
const stores: TranscriptStore[] = [];
before(async () => {
  database = await testDatabase();
  folder = await makeTempFolder('composer-store-');
});
after(async () => {
  for (const store of stores) await store.close();
  await database.stop();
  await removeFolder(folder);
});

async function postgresStore(leaseMs?: number): Promise<{ store: PostgresStore; schema: string }> {
  const schema = await database.newSchema();
  await PostgresStore.migrate({ connectionString: database.url, schema });
  const options = { connectionString: database.url, schema, ...(leaseMs ? { leaseMs } : {}) };
  const store = await PostgresStore.connect(options);
  stores.push(store);
  return { store, schema };
}

async function executions(log: string): Promise<Execution[]> {
  const text = await readFile(log, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Execution);
}

/** The tree's runs as the store holds them: names, each child's link to its parent, outcomes. */
async function treeOf(store: TranscriptStore) {
  const runs = await store.list();
  const children = [];
  for (const run of runs.filter((name) => name !== 'main')) {
    const found = await store.read(run);
    assert.ok(found.ok, found.ok ? '' : found.detail);
    const meta = found.records[0] as unknown as SessionMetaBody;
    children.push({
      run,
      parent: meta.parent?.transcript,
      outcome: recordedOutcome(found.records),
    });
  }
  return { runs, children };
}

for (const kind of ['FileStore', 'PostgresStore'] as const) {
  test(`${kind}: a Composer over the store runs the tree as main and main.agents/<id>, each child linked to its parent and joined`, async () => {
    const store =
      kind === 'FileStore'
        ? new FileStore(await makeTempFolder('composer-store-files-'))
        : (await postgresStore()).store;
    const log = join(folder, `${kind}-executions.log`);
    const composer = new Composer({
      registry: crashTreeRegistry(log),
      store,
      loopDefaults: { sleep: async () => undefined, backoff: () => 0 },
    });
    await assert.rejects(
      () => composer.start({ path: 'main.jsonl', agentType: 'main', task: MAIN_TASK }),
      /keeps its runs in a store: name the run/,
    );
    const started = await composer.start({ run: 'main', agentType: 'main', task: MAIN_TASK });
    assert.equal(started.path, 'main');
    const result = await started.run;
    await composer.idle();
    assert.equal(result.status, 'finished');
    assert.match(result.text ?? '', /alpha handled.*beta handled/);
    const { runs, children } = await treeOf(store);
    assert.equal(runs.length, 3);
    assert.equal(runs[0], 'main');
    for (const child of children) {
      assert.match(child.run, /^main\.agents\/worker-/);
      assert.equal(child.parent, '../main.jsonl');
      assert.equal(child.outcome?.status, 'finished');
    }
    assert.deepEqual((await executions(log)).map((one) => one.what).sort(), WORKER_TASKS);
    if (store instanceof PostgresStore) {
      const rows = new Map((await store.runs()).map((row) => [row.run, row]));
      for (const child of children) {
        assert.equal(rows.get(child.run)?.parent, 'main', 'the store knows it is main’s child');
        assert.equal(rows.get(child.run)?.depth, 1);
      }
    } else {
      await readFile(join(store.folder, 'main.agents', `${children[0]?.run.split('/')[1]}.jsonl`));
      await store.close();
    }
  });
}

test('PostgresStore: the tree killed mid-tool in another process is carried on from the store — children revived and resumed first, then the parent; the join answered, the effect done once', async () => {
  const leaseMs = 400;
  const { store, schema } = await postgresStore(leaseMs);
  const log = join(folder, 'crash-executions.log');
  const killed = await new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    const child = spawn(process.execPath, [runner, database.url, schema, log, 'kill'], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    child.on('close', (code, signal) => resolve({ code, signal }));
  });
  assert.equal(killed.signal, 'SIGKILL', 'the tree’s process really died');
  const before = await executions(log);
  assert.equal(before.length, 2, 'it died right after its second side effect');
  await sleep(leaseMs * 2);

  const composer = new Composer({
    registry: crashTreeRegistry(log),
    store,
    loopDefaults: { sleep: async () => undefined, backoff: () => 0 },
  });
  const runs = (await store.list()).sort((a, b) => b.split('/').length - a.split('/').length);
  const started = [];
  const interrupted: string[] = [];
  for (const run of runs) {
    const revived = await reviveStoreRun({ store, run, maxRevivals: 3 });
    if (!revived.ok) {
      assert.equal(revived.reason, 'finished', `${run}: ${revived.detail}`);
      continue;
    }
    if (run !== 'main') interrupted.push(...revived.interrupted);
    started.push(
      await composer.resume({ writer: revived.writer, run, messages: revived.messages }),
    );
  }
  assert.ok(
    interrupted.length >= 1,
    'the effect in flight was answered interrupted, not run again',
  );
  const root = started.find((one) => one.path === 'main');
  assert.ok(root, 'main was revived');
  const result = await root.run;
  await composer.idle();
  assert.equal(result.status, 'finished');
  assert.match(result.text ?? '', /alpha handled.*beta handled/);
  const after = await executions(log);
  assert.deepEqual(after.map((one) => one.what).sort(), WORKER_TASKS, 'each effect once');
  const { children } = await treeOf(store);
  assert.equal(children.length, 2, 'no second child for either spawn call');
  for (const child of children) assert.equal(child.outcome?.status, 'finished');
});
