import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { PostgresStore } from '../src/store/postgres/postgres-store.ts';
import { sessionMeta } from '../test/support/transcripts.ts';
import {
  AGENTS_MODULE,
  type Attack,
  type AttackContext,
  attackSchema,
  CLI,
  ending,
  faultNotProven,
  interruptedRun,
  ledgerCount,
  runBounded,
  sleep,
  sqlQuery,
  verdict,
  writeTranscript,
} from './support.ts';

/*
 * The fleet over PostgreSQL, attacked through real `llm-agent worker` processes and the
 * library: a run that rotted under a dead worker, a writer that wakes up after its lease was
 * taken over, four people approving at once, two supervisors racing for one dead run. Each
 * run must be carried on exactly once, a fenced writer must never write, a side effect must
 * never be replayed, and a run nobody can read must be parked for a person, once.
 */

interface Database {
  url: string;
  schema: string;
}

interface RunningWorker {
  child: ChildProcess;
  log: () => string;
}

function startWorker(
  context: AttackContext,
  database: Database,
  policy: 'auto' | 'ask',
  env: Record<string, string> = {},
): RunningWorker {
  const child = spawn(
    process.execPath,
    [
      CLI,
      'worker',
      '--database',
      database.url,
      '--schema',
      database.schema,
      '--agents',
      AGENTS_MODULE,
      '--policy',
      policy,
      '--lease',
      '300',
      '--poll',
      '50',
    ],
    {
      cwd: context.folder,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1', ...env },
    },
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

/** Run workers until every one serves, then `ms` more, then stop them (SIGTERM, then SIGKILL). */
async function withWorkers(workers: RunningWorker[], ms: number): Promise<string> {
  try {
    const deadline = Date.now() + 60_000;
    while (!workers.every((worker) => worker.log().includes('] serving ')) && Date.now() < deadline)
      await sleep(50);
    await sleep(ms);
  } finally {
    await Promise.all(
      workers.map(async (worker) => {
        if (worker.child.exitCode !== null) return;
        const exited = new Promise((resolve) => worker.child.once('exit', resolve));
        worker.child.kill('SIGTERM');
        const timer = setTimeout(() => worker.child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }),
    );
  }
  return workers.map((worker) => worker.log()).join('');
}

async function runRow(database: Database, run: string) {
  const [row] = await sqlQuery<{
    r: { owner: string | null; epoch: number; status: string; status_detail?: string | null };
  }>(database.url, `SELECT to_jsonb(runs) AS r FROM "${database.schema}".runs WHERE run_id = $1`, [
    run,
  ]);
  return row?.r;
}

/** A run submitted, taken by a worker that then died (lease 300 ms, abandoned). */
async function deadRun(database: Database, run: string): Promise<number> {
  const store = await PostgresStore.connect({
    connectionString: database.url,
    schema: database.schema,
    leaseMs: 300,
  });
  try {
    await store.submit(run, { ...sessionMeta(run), agentType: 'main' }, 'plan:parallel');
    const writer = await store.take(run, 'queued');
    if (writer === null) throw new Error('the run could not be taken');
    writer.abandon('its worker was killed');
    await writer.close();
    await sleep(400);
    return writer.epoch;
  } finally {
    await store.close();
  }
}

async function rot(database: Database, run: string): Promise<boolean> {
  await sqlQuery(
    database.url,
    `UPDATE "${database.schema}".records SET line = set_byte(line, 30, get_byte(line, 30) # 1) WHERE run_id = $1 AND seq = 1`,
    [run],
  );
  const store = await PostgresStore.connect({
    connectionString: database.url,
    schema: database.schema,
  });
  try {
    return !(await store.read(run)).ok;
  } finally {
    await store.close();
  }
}

function damagedRun(policy: 'auto' | 'ask'): Attack {
  return {
    name: `fleet-damaged-run-${policy}`,
    family: 'fleet',
    full: policy === 'ask',
    what: `a dead run with a rotted record under ${policy === 'auto' ? 'two' : 'one'} real worker --policy ${policy}${policy === 'ask' ? ', approved by a person' : ''}: parked unreadable with why, taken once, said once in the log (it was taken again at every lease)`,
    timeoutMs: 120_000,
    async run(context) {
      const database = await attackSchema();
      const epoch = await deadRun(database, 'hurt');
      if (!(await rot(database, 'hurt'))) return faultNotProven('the record still reads');
      const workers = (policy === 'auto' ? [0, 1] : [0]).map(() =>
        startWorker(context, database, policy),
      );
      let approvedAt = '';
      if (policy === 'ask') {
        const deadline = Date.now() + 60_000;
        while ((await runRow(database, 'hurt'))?.status !== 'awaiting-approval') {
          if (Date.now() > deadline) break;
          await sleep(50);
        }
        approvedAt = (await runRow(database, 'hurt'))?.status ?? '?';
        await sqlQuery(
          database.url,
          `UPDATE "${database.schema}".runs SET status = 'approved' WHERE run_id = 'hurt' AND status = 'awaiting-approval'`,
        );
      }
      // Ten leases: time enough to be taken again and again if it were left held.
      const log = await withWorkers(workers, 2000 + 10 * 300);
      const row = await runRow(database, 'hurt');
      const takes = Number(row?.epoch ?? 0) - epoch - (policy === 'ask' ? 1 : 0);
      const said = log.split('\n').filter((line) => /hurt: cannot be read/.test(line));
      const held =
        takes === 1 &&
        row?.status === 'unreadable' &&
        row.owner === null &&
        /record 1/.test(row.status_detail ?? '') &&
        said.length === 1;
      return verdict(
        held,
        `${policy === 'ask' ? `parked ${approvedAt}, approved; ` : ''}taken ${takes} time(s) over ten leases; status ${row?.status}, owner ${row?.owner ?? 'none'}; the log said it ${said.length} time(s)${said[0] === undefined ? '' : `: ${said[0].replace(/^\[worker [^\]]*\] /, '').slice(0, 100)}`}`,
      );
    },
  };
}

const staleEpoch: Attack = {
  name: 'fleet-stale-epoch-writer',
  family: 'fleet',
  what: 'a writer whose lease ran out while it was paused, its run taken over by another worker: its next appends are refused (ownership-lost), nothing lands at its old epoch',
  async run() {
    const database = await attackSchema();
    const options = { connectionString: database.url, schema: database.schema, leaseMs: 60_000 };
    const a = await PostgresStore.connect(options);
    const b = await PostgresStore.connect(options);
    try {
      await a.submit('run', { ...sessionMeta('run'), agentType: 'main' }, 'plan:parallel');
      const zombie = await a.take('run', 'queued');
      if (zombie === null) return faultNotProven('the run could not be taken');
      // Paused past its lease: the lease runs out by the server's clock.
      await sqlQuery(
        database.url,
        `UPDATE "${database.schema}".runs SET lease_expires = now() - interval '1 second' WHERE run_id = 'run'`,
      );
      const taker = await b.take('run', 'dead');
      if (taker === null) return faultNotProven('the dead run could not be taken over');
      let refused = '';
      try {
        await zombie.append({
          type: 'message',
          role: 'assistant',
          content: [{ type: 'text', text: 'zombie' }],
        });
        await zombie.barrier();
        refused = 'accepted';
      } catch (error) {
        refused = (error as { code?: string }).code ?? String(error);
      }
      await zombie.close().catch(() => undefined);
      await taker.close();
      const [landed] = await sqlQuery<{ n: string }>(
        database.url,
        `SELECT count(*) AS n FROM "${database.schema}".records WHERE run_id = 'run' AND epoch = $1 AND seq >= 2`,
        [zombie.epoch],
      );
      return verdict(
        refused === 'ownership-lost' && Number(landed?.n) === 0,
        `taken over at epoch ${taker.epoch} (the zombie held ${zombie.epoch}); the zombie's append: ${refused}; records at its epoch since: ${landed?.n}`,
      );
    } finally {
      await a.close();
      await b.close();
    }
  },
};

const concurrentApprovals: Attack = {
  name: 'fleet-concurrent-approvals',
  family: 'fleet',
  full: true,
  what: 'four people approve the same interrupted run at once, then a worker carries it on: revived exactly once, its side effect never replayed',
  timeoutMs: 180_000,
  async run(context) {
    const database = await attackSchema();
    const ledger = join(context.folder, 'ledger.jsonl');
    await writeTranscript(join(context.folder, 'laptop.jsonl'), interruptedRun());
    const env = { LLM_AGENT_DATABASE_URL: database.url, ATTACK_LEDGER: ledger };
    const imported = await runBounded(
      [CLI, 'import', 'laptop.jsonl', '--schema', database.schema],
      { cwd: context.folder, timeoutMs: 60_000, env },
    );
    if (imported.code !== 0) return faultNotProven(`import: ${ending(imported)}`);
    if ((await runRow(database, 'laptop'))?.status !== 'awaiting-approval')
      return faultNotProven('the run does not wait for approval');
    const approvals = await Promise.all(
      [0, 1, 2, 3].map(() =>
        runBounded(
          [
            CLI,
            'revive',
            '--database',
            database.url,
            '--schema',
            database.schema,
            'laptop',
            '--yes',
          ],
          { cwd: context.folder, timeoutMs: 60_000, env },
        ),
      ),
    );
    const worker = await runBounded(
      [
        CLI,
        'worker',
        '--agents',
        AGENTS_MODULE,
        '--schema',
        database.schema,
        '--policy',
        'auto',
        '--once',
      ],
      { cwd: context.folder, timeoutMs: 90_000, env },
    );
    const [revived] = await sqlQuery<{ n: string }>(
      database.url,
      `SELECT count(*) AS n FROM "${database.schema}".records WHERE run_id = 'laptop' AND type = 'run-revived'`,
    );
    const replays = ledgerCount(ledger, 'p1');
    const approved = approvals.filter((outcome) => /Approved laptop/.test(outcome.stdout)).length;
    return verdict(
      Number(revived?.n) === 1 && replays === 0 && worker.code === 0,
      `${approved} of 4 approvals said approved (exits ${approvals.map((outcome) => outcome.code).join(',')}); worker: ${ending(worker)}; run-revived records: ${revived?.n}; the interrupted effect run again ${replays} time(s)`,
    );
  },
};

const racingSupervisors: Attack = {
  name: 'fleet-racing-supervisors',
  family: 'fleet',
  full: true,
  what: 'two real worker --policy ask processes find the same dead run: fenced and parked exactly once',
  timeoutMs: 120_000,
  async run(context) {
    const database = await attackSchema();
    const epoch = await deadRun(database, 'dead');
    const before = await runRow(database, 'dead');
    if (before?.owner === null || before === undefined)
      return faultNotProven('the run is not held');
    const log = await withWorkers(
      [startWorker(context, database, 'ask'), startWorker(context, database, 'ask')],
      2000,
    );
    const row = await runRow(database, 'dead');
    const parked = log.split('\n').filter((line) => /dead: its worker died; fenced/.test(line));
    return verdict(
      Number(row?.epoch) === epoch + 1 &&
        row?.status === 'awaiting-approval' &&
        parked.length === 1,
      `epoch ${epoch}→${row?.epoch}, status ${row?.status}; parked ${parked.length} time(s) in the logs`,
    );
  },
};

/** The attacks on the fleet of workers over PostgreSQL. */
export const FLEET_ATTACKS: Attack[] = [
  damagedRun('auto'),
  damagedRun('ask'),
  staleEpoch,
  concurrentApprovals,
  racingSupervisors,
];
