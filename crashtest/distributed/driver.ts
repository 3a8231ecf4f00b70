import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { testDatabase } from '../../test/support/postgres.ts';
import { seededRandom } from '../../test/support/seeded-random.ts';
import { checkDistributed, type DistributedBreaches } from './invariants.ts';

/*
 * The distributed crashtest: worker processes serve one PostgreSQL store (policy auto, a cap)
 * while a chaos driver SIGKILLs them (a replacement starts at once), SIGSTOPs them past their
 * lease and lets them go on later (zombies), and terminates their connections
 * (pg_terminate_backend) — at random, from a seed. More runs are submitted until every quota
 * of chaos is met; then the chaos stops, the runs end, and the store and the ledger are
 * checked (invariants.ts).
 */

/** How big a run of the crashtest is. */
export interface DistributedOptions {
  seed: number;
  /** Root runs at least (a third of them parents of two children each). */
  runs: number;
  workers: number;
  kills: number;
  stops: number;
  terminations: number;
  leaseMs: number;
  maxRevivals: number;
  /** Runs each worker carries at once. */
  concurrency: number;
  /**
   * The `effect` tool has a reconcile that looks its idempotency key up in the ledger: revived
   * calls in flight are settled by the ledger's truth, checked after the chaos.
   */
  reconcile?: boolean;
  log: (line: string) => void;
}

/** The counts a run of the crashtest reports. */
export interface DistributedFigures {
  runs: number;
  workers: number;
  kills: number;
  stops: number;
  zombies: number;
  terminations: number;
  fenced: number;
  selfExits: number;
  finished: number;
  capped: number;
  revivals: number;
  joins: number;
  executions: number;
  /** Calls a reconcile settled (completed or did not happen), each checked against the ledger. */
  reconciled: number;
  /** Of those, did-not-happen answers a zombie's execution outdid later (see invariants.ts). */
  late: number;
}

/** What a run of the crashtest did and found. */
export interface DistributedResult {
  figures: DistributedFigures;
  breaches: DistributedBreaches;
  /** Why it fell short of a quota, if it did. */
  shortfalls: string[];
}

const WORKER = fileURLToPath(new URL('./worker.ts', import.meta.url));

interface WorkerProcess {
  child: ChildProcess;
  stopped: boolean;
  /** It has taken a run: a pause of it can make a zombie. */
  busy: boolean;
  /** Its store's owner name, once it said it. */
  owner: string;
  /** A zombie let go on: left alone (never killed) until it has met the fence and retires. */
  retiring: boolean;
  exited: Promise<void>;
}

export async function runDistributed(options: DistributedOptions): Promise<DistributedResult> {
  const { log } = options;
  const random = seededRandom(options.seed);
  const database = await testDatabase();
  const schema = await database.newSchema();
  log(`  PostgreSQL: ${database.source}, schema ${schema}`);
  await PostgresStore.migrate({ connectionString: database.url, schema });
  // A pool, not one client: the zombie watchers' timers query while the chaos loop does.
  const admin = new pg.Pool({
    connectionString: database.url,
    application_name: 'crashtest driver',
    max: 3,
  });
  await admin.query(
    `CREATE TABLE "${schema}".ledger (run text NOT NULL, call_id text NOT NULL, key text, at timestamptz NOT NULL DEFAULT clock_timestamp(), xid xid8 NOT NULL DEFAULT pg_current_xact_id())`,
  );
  await admin.query(
    `CREATE TABLE "${schema}".reconcile_log (key text NOT NULL, found boolean NOT NULL, snapshot pg_snapshot NOT NULL)`,
  );
  const store = await PostgresStore.connect({ connectionString: database.url, schema });
  const figures = {
    runs: 0,
    workers: 0,
    kills: 0,
    stops: 0,
    terminations: 0,
    fenced: 0,
    zombies: 0,
    selfExits: 0,
  };
  let stopping = false;
  let lastResume = 0;
  const workers = new Set<WorkerProcess>();
  const resumes = new Set<NodeJS.Timeout>();
  let submitted = 0;

  const startWorker = (): WorkerProcess => {
    const child = spawn(
      process.execPath,
      [
        WORKER,
        database.url,
        schema,
        String(options.leaseMs),
        String(options.concurrency),
        String(options.maxRevivals),
        options.reconcile === true ? 'reconcile' : 'no-reconcile',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const worker: WorkerProcess = {
      child,
      stopped: false,
      busy: false,
      owner: '',
      retiring: false,
      exited: new Promise((done) => child.once('exit', () => done())),
    };
    figures.workers += 1;
    createInterface({ input: child.stdout as NonNullable<typeof child.stdout> }).on(
      'line',
      (line) => {
        if (line.startsWith('fenced ')) figures.fenced += 1;
        if (line.startsWith('ready ')) worker.owner = line.slice('ready '.length);
        if (line === 'took') worker.busy = true;
      },
    );
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-2000);
    });
    child.once('exit', (code, signal) => {
      workers.delete(worker);
      if (signal === null && !stopping) {
        // A worker that cannot reach the database at its start exits (a connection the chaos
        // cut): its deployment would start it again, and so does the driver.
        const last = stderr.trim().split('\n').slice(-3).join(' ').slice(0, 300);
        log(`  a worker exited by itself (code ${code}): ${last}`);
        figures.selfExits += 1;
        startWorker();
      }
    });
    workers.add(worker);
    return worker;
  };

  const submit = async (count: number): Promise<void> => {
    for (let index = 0; index < count; index += 1) {
      const run = `r${submitted}`;
      const type = submitted % 3 === 0 ? 'parent' : 'solo';
      submitted += 1;
      await store.submit(
        run,
        { agentId: 'main', agentType: type, label: run, model: 'scripted' },
        `task ${run}`,
      );
    }
  };

  const unfinished = async (): Promise<number> => {
    const result = await admin.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "${schema}".runs WHERE owner IS NOT NULL OR status NOT IN ('finished', 'capped')`,
    );
    return result.rows[0]?.n ?? 0;
  };

  const pick = (busy = false): WorkerProcess | undefined => {
    const live = [...workers].filter(
      (worker) => !worker.stopped && !worker.retiring && (!busy || worker.busy),
    );
    return live[Math.floor(random() * live.length)];
  };

  // With reconciles, half the kills aim at a worker inside `effect`: its ledger row is a moment
  // old and the tool still pauses (100–400 ms), so the call is in flight with its effect done —
  // the case a reconcile must settle. Left to chance alone, a quick run sometimes had none.
  const midEffect = async (): Promise<WorkerProcess | undefined> => {
    const found = await admin.query<{ owner: string }>(
      `SELECT r.owner FROM "${schema}".ledger l JOIN "${schema}".runs r ON r.run_id = l.run
       WHERE l.at > clock_timestamp() - interval '60 milliseconds' AND r.owner IS NOT NULL
       ORDER BY l.at DESC LIMIT 1`,
    );
    const owner = found.rows[0]?.owner;
    return [...workers].find(
      (worker) => worker.owner === owner && !worker.stopped && !worker.retiring,
    );
  };

  const shortfalls: string[] = [];
  try {
    await submit(options.runs);
    for (let index = 0; index < options.workers; index += 1) startWorker();
    log(`  ${options.workers} workers, ${options.runs} runs submitted; chaos starts`);
    const started = Date.now();
    let lastProgress = started;
    // A pause proves the fence only once another worker took a run over from it: go on
    // pausing workers until at least one has become a zombie and a zombie's write has been
    // refused (a resumed zombie gets a few seconds to try).
    const needZombie = () =>
      options.stops > 0 &&
      resumes.size === 0 &&
      (figures.zombies === 0 || (figures.fenced === 0 && Date.now() - lastResume > 3000));
    const quotasMet = () =>
      figures.kills >= options.kills &&
      figures.stops >= options.stops &&
      figures.terminations >= options.terminations &&
      (options.stops === 0 || (figures.zombies > 0 && figures.fenced > 0));
    const chaosDeadline = started + 15 * 60_000;
    while (!quotasMet()) {
      if (Date.now() > chaosDeadline) {
        shortfalls.push('the chaos did not reach its quotas in 15 minutes');
        break;
      }
      await sleep(40 + random() * 80);
      if (Date.now() - lastProgress > 5000) {
        lastProgress = Date.now();
        log(
          `  … ${Math.round((Date.now() - started) / 1000)} s: kills ${figures.kills}, stops ${figures.stops}, terminations ${figures.terminations}, fenced ${figures.fenced}, runs ${submitted}, unfinished ${await unfinished()}`,
        );
      }
      // Keep work flowing until the chaos is done: a crashtest on an idle store proves nothing.
      if ((await unfinished()) < (options.workers * options.concurrency) / 2)
        await submit(Math.max(3, Math.ceil(options.runs / 10)));
      const left = {
        kill: options.kills - figures.kills,
        stop: Math.max(options.stops - figures.stops, needZombie() ? 1 : 0),
        terminate: options.terminations - figures.terminations,
      };
      const total = Math.max(0, left.kill) + Math.max(0, left.stop) + Math.max(0, left.terminate);
      let draw = random() * total;
      const action = (['kill', 'stop', 'terminate'] as const).find((name) => {
        draw -= Math.max(0, left[name]);
        return draw < 0;
      });
      if (action === 'kill') {
        const aimed = options.reconcile === true && random() < 0.5 ? await midEffect() : undefined;
        const victim = aimed ?? pick();
        if (victim === undefined) continue;
        victim.child.kill('SIGKILL');
        await victim.exited;
        figures.kills += 1;
        startWorker();
      } else if (action === 'stop') {
        const victim = pick(true);
        if (victim === undefined || victim.owner === '') continue;
        victim.child.kill('SIGSTOP');
        victim.stopped = true;
        // What it holds as it stops: it becomes a zombie once another worker takes one over.
        const held = await admin.query<{ run_id: string; epoch: string }>(
          `SELECT run_id, epoch FROM "${schema}".runs WHERE owner = $1`,
          [victim.owner],
        );
        if (held.rows.length === 0) {
          victim.child.kill('SIGCONT');
          victim.stopped = false;
          continue;
        }
        figures.stops += 1;
        startWorker(); // the others carry on without it
        const stoppedAt = Date.now();
        const timer = setInterval(async () => {
          const now = await admin
            .query<{ n: number }>(
              `SELECT count(*)::int AS n FROM "${schema}".runs r JOIN unnest($1::text[], $2::bigint[]) AS h(run_id, epoch) USING (run_id) WHERE r.epoch > h.epoch`,
              [held.rows.map((row) => row.run_id), held.rows.map((row) => row.epoch)],
            )
            .catch(() => null);
          const takenOver = (now?.rows[0]?.n ?? 0) > 0;
          if (!takenOver && Date.now() - stoppedAt < options.leaseMs * 20) return;
          clearInterval(timer);
          resumes.delete(timer);
          if (takenOver) figures.zombies += 1;
          lastResume = Date.now();
          victim.retiring = true;
          victim.child.kill('SIGCONT');
          victim.stopped = false;
          // More workers than asked for would only grow: retire the zombie once it has been fenced.
          setTimeout(() => victim.child.kill('SIGTERM'), options.leaseMs * 10).unref();
        }, 100);
        resumes.add(timer);
      } else if (action === 'terminate') {
        const ended = await admin.query<{ done: boolean }>(
          `SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity
           WHERE application_name LIKE $1 AND datname = current_database()
           ORDER BY random() LIMIT 1`,
          [`llm-agent crashtest ${schema.replaceAll('_', '\\_')}%`],
        );
        if (ended.rows[0]?.done === true) figures.terminations += 1;
      }
    }
    log(`  chaos done after ${Math.round((Date.now() - started) / 1000)} s; letting the runs end`);
    for (const timer of resumes) {
      clearInterval(timer);
      resumes.delete(timer);
    }
    for (const worker of workers) {
      if (worker.stopped) {
        worker.child.kill('SIGCONT');
        worker.stopped = false;
      }
    }
    while (workers.size < options.workers) startWorker();
    const deadline = Date.now() + 180_000;
    for (let left = await unfinished(); left > 0; left = await unfinished()) {
      if (Date.now() > deadline) {
        shortfalls.push(`${left} runs never ended`);
        break;
      }
      if (Date.now() - lastProgress > 5000) {
        lastProgress = Date.now();
        log(`  … ${left} runs still going`);
      }
      await sleep(200);
    }
  } finally {
    stopping = true;
    for (const timer of resumes) clearInterval(timer);
    for (const worker of workers) {
      worker.child.kill('SIGCONT');
      worker.child.kill('SIGKILL');
    }
    await Promise.all([...workers].map((worker) => worker.exited));
  }
  figures.runs = submitted;
  const { breaches, counts } = await checkDistributed(store, admin, schema, options.maxRevivals);
  await store.close();
  await admin.end();
  await database.stop();
  if (figures.kills < options.kills) shortfalls.push(`kills ${figures.kills} < ${options.kills}`);
  if (figures.fenced === 0)
    shortfalls.push('no zombie write was refused: the fence was never exercised');
  if (options.reconcile === true && counts.reconciled === 0)
    shortfalls.push('no call was reconciled: the reconciles were never put to the test');
  return {
    figures: {
      ...figures,
      runs: counts.runs,
      finished: counts.finished,
      capped: counts.capped,
      revivals: counts.revivals,
      joins: counts.joins,
      executions: counts.executions,
      reconciled: counts.reconciled,
      late: counts.late,
    },
    breaches,
    shortfalls,
  };
}

function sleep(milliseconds: number): Promise<void> {
  return new Promise((done) => setTimeout(done, milliseconds));
}
