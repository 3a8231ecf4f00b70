import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { statusExitCode, statusJson, summarize } from '../../src/render/format-status.ts';
import { databaseTree, writeDatabaseStatusJson } from '../../src/runs/database-status.ts';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import type { PostgresTranscriptWriter } from '../../src/store/postgres/postgres-writer.ts';
import { decodeLine } from '../../src/transcript/line-codec.ts';
import type { RecordBody } from '../../src/transcript/records.ts';
import { emptyTailState, foldTailState, type TailState } from '../../src/transcript/tail-state.ts';
import { runCli } from '../cli/support/cli-fixtures.ts';
import { type TestDatabase, testDatabase } from '../support/postgres.ts';
import { seededRandom, testSeed } from '../support/seeded-random.ts';
import { sessionMeta } from '../support/transcripts.ts';

/*
 * A run's summary in the `runs` row is kept by the same statement as each append, so it is
 * always the state its committed records fold to — through random appends, barriers,
 * checkpoints, writers abandoned with records still in memory (a crash), connections cut
 * mid-way, takeovers, submits and imports. And `status --database` reads it: the same verdicts
 * as `--verify`, which folds every record.
 */

let database: TestDatabase;
before(async () => {
  database = await testDatabase();
});
after(async () => {
  await database?.stop();
});

async function admin<T>(body: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    return await body(client);
  } finally {
    await client.end();
  }
}

/** The state a run's committed lines fold to, from its first. */
async function fullFold(store: PostgresStore, run: string): Promise<TailState> {
  const bytes = await store.exportBytes(run);
  let state = emptyTailState();
  for (let start = 0; start < bytes.length; ) {
    const end = bytes.indexOf(0x0a, start);
    const decoded = decodeLine(bytes.subarray(start, end));
    assert.ok(decoded.ok);
    state = foldTailState(state, decoded.record, end + 1 - start);
    start = end + 1;
  }
  return state;
}

/** A random record of the shapes the loop writes: turns, calls, dispatches, results, settles. */
function randomBody(random: () => number, step: number): RecordBody {
  const callId = `call-${Math.floor(random() * 4)}`;
  const text = `step ${step} ${'x'.repeat(Math.floor(random() * 120))}`;
  switch (Math.floor(random() * 7)) {
    case 0:
      return { type: 'message', role: 'user', content: [{ type: 'text', text }] };
    case 1:
      return { type: 'message', role: 'assistant', content: [{ type: 'text', text }] };
    case 2:
      return {
        type: 'message',
        role: 'assistant',
        content: [{ type: 'tool-call', callId, toolName: 'probe', input: { step } }],
      };
    case 3:
      return {
        type: 'tool-dispatched',
        callId,
        toolName: 'probe',
        inputDigest: `sha256:${'0'.repeat(64)}`,
        idempotency: random() < 0.5 ? 'idempotent' : 'side-effect',
      };
    case 4:
      return {
        type: 'message',
        role: 'tool',
        content: [{ type: 'tool-result', callId, toolName: 'probe', output: text, isError: false }],
      };
    case 5:
      return { type: 'tool-settled', callId, status: 'completed' };
    default:
      return {
        type: 'run-revived',
        ordinal: 1,
        maxRevivals: 3,
        afterSeq: step,
        interrupted: [],
        completedUnpersisted: [],
        orphaned: [],
      };
  }
}

test('the summary in the runs row is the fold of the committed records, through random appends, crashes, cut connections and takeovers', async () => {
  const seed = testSeed('postgres summary');
  const random = seededRandom(seed);
  const schema = await database.newSchema();
  await PostgresStore.migrate({ connectionString: database.url, schema });
  const options = { connectionString: database.url, schema, checkpointBytes: 600 };
  const store = await PostgresStore.connect({
    ...options,
    leaseMs: 60_000,
    applicationName: 'summary-writer',
  });
  // The checks read through a pool of their own: the cuts terminate every 'summary-writer'
  // connection, idle ones included, and a check handed one of those before the pool noticed
  // would fail on the test's own fault rather than on what it checks.
  const checker = await PostgresStore.connect({ ...options, applicationName: 'summary-checker' });
  const names = ['a', 'b', 'c'];
  const writers = new Map<string, PostgresTranscriptWriter>();
  const faults = { abandoned: 0, cut: 0, lostRecords: 0, closed: 0 };
  try {
    for (const name of names) {
      writers.set(name, (await store.create(name, sessionMeta(name))) as PostgresTranscriptWriter);
    }
    await store.submit('queued', sessionMeta('queued'), 'a task');
    for (let step = 0; step < 240; step += 1) {
      const name = names[Math.floor(random() * names.length)] as string;
      let writer = writers.get(name);
      if (writer === undefined || writer.poisoned) {
        // A crashed writer's run is taken over: its lease made to run out, as a supervisor sees it.
        await admin((client) =>
          client.query(
            `UPDATE "${schema}".runs SET lease_expires = now() - interval '1 second' WHERE run_id = $1 AND owner IS NOT NULL`,
            [name],
          ),
        );
        writer = (await store.open(name)) as PostgresTranscriptWriter;
        writers.set(name, writer);
      }
      const roll = random();
      if (roll < 0.6) {
        await writer.append(randomBody(random, step));
        if (random() < 0.5) await writer.barrier().catch(() => undefined);
      } else if (roll < 0.7) {
        // A crash: what waits in memory is lost, nothing else.
        const stored = (await checker.runs()).find((row) => row.run === name)?.lastSeq ?? 0;
        const pending = writer.lastSeq - stored;
        faults.lostRecords += pending;
        writer.abandon('the test crashed its worker');
        faults.abandoned += 1;
      } else if (roll < 0.78) {
        // A cut connection: whatever the pool holds is terminated; a barrier may be in flight.
        await writer.append(randomBody(random, step));
        const barrier = writer.barrier().catch(() => undefined);
        const cut = await admin((client) =>
          client.query(
            `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'summary-writer' AND datname = current_database()`,
          ),
        );
        faults.cut += cut.rowCount ?? 0;
        await barrier;
      } else if (roll < 0.85) {
        await writer.close();
        writers.delete(name);
        faults.closed += 1;
      } else {
        await writer.barrier().catch(() => undefined);
      }
      if (step % 20 === 19 || step === 239) {
        const summaries = await checker.summaries();
        for (const row of summaries) {
          assert.ok(row.summary !== null, `${row.run}: a summary (seed ${seed})`);
          assert.deepEqual(
            row.summary,
            await fullFold(checker, row.run),
            `${row.run} at step ${step}: the summary is the fold (seed ${seed})`,
          );
        }
      }
    }
    console.log(`faults: ${JSON.stringify(faults)}`);
    assert.ok(faults.abandoned > 0 && faults.cut > 0, 'crashes and cut connections happened');
    for (const writer of writers.values()) await writer.close().catch(() => undefined);
    await store.importBytes('imported', await store.exportBytes('a'));
    const imported = (await checker.summaries()).find((row) => row.run === 'imported');
    assert.deepEqual(imported?.summary, await fullFold(checker, 'imported'));
  } finally {
    await store.close();
    await checker.close();
  }
});

test('status --database reads the summaries, and --verify the records: the same verdicts; a run without a summary is folded; a summary that lies is caught by --verify', async () => {
  const schema = await database.newSchema();
  await PostgresStore.migrate({ connectionString: database.url, schema });
  const store = await PostgresStore.connect({ connectionString: database.url, schema });
  try {
    const finished = await store.create('finished', sessionMeta('finished'));
    await finished.append({
      type: 'message',
      role: 'user',
      content: [{ type: 'text', text: 'go' }],
    });
    await finished.append({
      type: 'message',
      role: 'assistant',
      content: [{ type: 'text', text: 'done' }],
    });
    await finished.close();
    const midTool = (await store.create(
      'mid-tool',
      sessionMeta('mid-tool'),
    )) as PostgresTranscriptWriter;
    await midTool.append({
      type: 'message',
      role: 'user',
      content: [{ type: 'text', text: 'go' }],
    });
    await midTool.append({
      type: 'message',
      role: 'assistant',
      content: [{ type: 'tool-call', callId: 'c1', toolName: 'probe', input: {} }],
    });
    await midTool.appendDurable({
      type: 'tool-dispatched',
      callId: 'c1',
      toolName: 'probe',
      inputDigest: `sha256:${'0'.repeat(64)}`,
      idempotency: 'side-effect',
    });
    midTool.abandon('killed inside the tool');
    await store.submit('queued', sessionMeta('queued'), 'a task');
    await admin(async (client) => {
      await client.query(
        `UPDATE "${schema}".runs SET lease_expires = now() - interval '1 second' WHERE run_id = 'mid-tool'`,
      );
      // A run from before summaries existed: folded from its records.
      await client.query(`UPDATE "${schema}".runs SET summary = NULL WHERE run_id = 'finished'`);
    });
    const statusOf = async (verify: boolean) => {
      const args = ['status', '--database', database.url, '--schema', schema, '--json'];
      const run = await runCli(verify ? [...args, '--verify'] : args, { cwd: process.cwd() });
      const json = JSON.parse(run.stdout) as {
        runs: { path: string; state: string; detail: string | null; resumeTokens: number }[];
      };
      // --verify folds the records without their sizes: its token estimate is not compared.
      return new Map(json.runs.map(({ resumeTokens: _, ...entry }) => [entry.path, entry]));
    };
    const plain = await statusOf(false);
    const verified = await statusOf(true);
    assert.deepEqual(
      [...plain.values()].map((entry) => [entry.path, entry.state]),
      [
        ['finished', 'finished'],
        ['mid-tool', 'revivable'],
        ['queued', 'queued'],
      ],
    );
    assert.deepEqual(plain, verified, 'the summaries say what the records say');

    // The row is changed behind the store's back: plain status believes it, --verify does not.
    const lie = JSON.stringify(await fullFold(store, 'finished'));
    await admin((client) =>
      client.query(`UPDATE "${schema}".runs SET summary = $1::json WHERE run_id = 'mid-tool'`, [
        lie,
      ]),
    );
    assert.equal((await statusOf(false)).get('mid-tool')?.state, 'finished');
    const caught = (await statusOf(true)).get('mid-tool');
    assert.equal(caught?.state, 'unreadable');
    assert.match(
      caught?.detail ?? '',
      /its summary \(the runs row\) says otherwise than its records/,
    );
  } finally {
    await store.close();
  }
});

test('status --database --json made as the rows arrive: the bytes of the tree made of every row, children, a run without a summary and a parked one included', async () => {
  const seed = testSeed('status from the rows');
  const random = seededRandom(seed);
  const schema = await database.newSchema();
  await PostgresStore.migrate({ connectionString: database.url, schema });
  const store = await PostgresStore.connect({ connectionString: database.url, schema });
  try {
    // Names out of order with their tree: a child before its parent, a grandchild first of all.
    const names = ['m-child', 'a-grandchild', 'z-root', 'k-root', 'b-held', 'c-dead', 'd-plain'];
    for (const [index, name] of names.entries()) {
      const writer = await store.create(name, sessionMeta(`${name}\u2028"</script>`));
      for (let step = 0; step < 3 + index * 2; step += 1)
        await writer.append(randomBody(random, step));
      if (name === 'b-held') await writer.barrier();
      else await writer.close();
    }
    await store.submit('queued', sessionMeta('queued'), 'a task');
    await admin(async (client) => {
      const runs = `"${schema}".runs`;
      await client.query(
        `UPDATE ${runs} SET parent_run = 'z-root', depth = 1 WHERE run_id = 'm-child'`,
      );
      await client.query(
        `UPDATE ${runs} SET parent_run = 'm-child', depth = 2 WHERE run_id = 'a-grandchild'`,
      );
      await client.query(
        `UPDATE ${runs} SET parent_run = 'z-root', depth = 1 WHERE run_id = 'd-plain'`,
      );
      await client.query(`UPDATE ${runs} SET summary = NULL WHERE run_id = 'k-root'`);
      await client.query(
        `UPDATE ${runs} SET owner = 'gone', lease_expires = now() - interval '1 minute' WHERE run_id = 'c-dead'`,
      );
      await client.query(
        `UPDATE ${runs} SET status = 'unreadable', status_detail = 'line 3: checksum mismatch' WHERE run_id = 'd-plain'`,
      );
    });
    assert.deepEqual(
      (await store.summaries())
        .filter((row) => row.children > 0)
        .map((row) => [row.run, row.children]),
      [
        ['m-child', 1],
        ['z-root', 2],
      ],
    );
    const roots = await databaseTree(store, { maxRevivals: 2 });
    const expected = `${JSON.stringify(statusJson(roots, 2))}\n`;
    assert.deepEqual(
      roots.map((root) => [root.path, root.children.map((child) => child.path)]),
      [
        ['b-held', []],
        ['c-dead', []],
        ['k-root', []],
        ['queued', []],
        ['z-root', ['d-plain', 'm-child']],
      ],
    );
    const chunks: Buffer[] = [];
    const out = new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        chunks.push(Buffer.from(chunk));
        done();
      },
    });
    const exitCode = await writeDatabaseStatusJson(out, store, 2);
    assert.equal(Buffer.concat(chunks).toString('utf8'), expected, `seed ${seed}`);
    assert.equal(exitCode, statusExitCode(summarize(roots)));
    // The command to a pipe takes that way: the same bytes.
    const run = await runCli(
      ['status', '--database', database.url, '--schema', schema, '--json', '--max-revivals', '2'],
      { cwd: process.cwd() },
    );
    assert.equal(run.stdout, expected);
    assert.equal(run.code, exitCode);
  } finally {
    await store.close();
  }
});
