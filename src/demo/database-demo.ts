import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PostgresStore } from '../store/postgres/postgres-store.ts';
import { isKnownRecord } from '../transcript/validate-record.ts';
import { approveRuns } from '../runs/approve-runs.ts';
import { type CommandIo, hintCommand, writeLine } from '../runs/command-io.ts';
import { databaseOptions, maskedNote } from '../render/database-hint.ts';
import { connectStore } from '../runs/database-store.ts';
import { databaseRunState } from '../runs/database-status.ts';
import { EXIT } from '../render/exit-codes.ts';
import { UserError } from '../runs/user-error.ts';

/** How long a demo worker's hold on a run lasts unrenewed. */
const LEASE_MS = 2000;

/** One database demo under way: where it runs, its workers, and the claims so far. */
interface DatabaseDemo {
  io: CommandIo;
  url: string;
  /** The fresh schema the demo's workers serve. */
  schema: string;
  store: PostgresStore;
  /** Print a claim with ✓ or ✗, and keep it for the verdict. */
  check(claim: string, held: boolean): void;
  heading(text: string): void;
  /** The runs whose deploy started, one line each, as the demo's tool writes them. */
  ledger(): Promise<string[]>;
  /** Start a worker process on the schema, its log shown under `name`. */
  startWorker(name: string): ChildProcess;
  /** Every worker started, for the cleanup. */
  workers: ChildProcess[];
  /** What each worker has written to stderr so far. */
  logs: Map<ChildProcess, string>;
}

/**
 * `llm-agent demo --database URL`: the scale-out story on PostgreSQL, offline. Two worker
 * processes serve a fresh schema; the one that takes `release-1` is SIGKILLed inside its
 * deploy; the other notices the expired lease and fences the run, which waits for approval; the
 * demo approves it (printing what a person is asked) and the surviving worker revives it to its
 * end, the deploy answered as interrupted, never run again. Then a third worker is paused
 * (SIGSTOP) inside `release-2`'s deploy past its lease, the run is fenced, and the worker,
 * resumed, is refused its write. Every claim is checked; exit 0 only if all held.
 *
 * @example
 * return await databaseDemo(io, 'postgres://127.0.0.1/test');
 */
export async function databaseDemo(io: CommandIo, url: string): Promise<number> {
  const folder = await mkdtemp(join(tmpdir(), 'llm-agent-db-demo-'));
  const schema = `llm_agent_demo_${Date.now().toString(36)}`;
  writeLine(
    io.stdout,
    io.out.bold('llm-agent demo --database — workers that die, and runs that come back once'),
  );
  writeLine(
    io.stdout,
    `Database: ${url.replace(/\/\/[^@/]*@/, '//')}, schema ${schema}; folder ${folder}`,
  );
  await migrate(url, schema);
  const store = await connectStore('demo', url, schema);
  const checks: boolean[] = [];
  const demo = demoOn(io, url, schema, folder, store, checks);
  try {
    const taken = await workersTakeRelease(demo);
    if (taken === null) return EXIT.failure;
    await killInDeploy(demo, taken.victim);
    await approveAndRevive(demo, taken.survivor);
    await fencePausedWorker(demo);
  } finally {
    for (const child of demo.workers) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGCONT');
        child.kill('SIGKILL');
      }
    }
    await store.close();
  }
  return verdict(io, url, schema, checks);
}

/** A fresh schema for the demo, or a user error saying why the database cannot be used. */
async function migrate(url: string, schema: string): Promise<void> {
  const { PostgresStore } = await import('../store/postgres/postgres-store.ts');
  try {
    await PostgresStore.migrate({ connectionString: url, schema });
  } catch (error) {
    throw new UserError(
      `demo: cannot use the database: ${error instanceof Error ? error.message : String(error)}`,
      EXIT.failure,
    );
  }
}

/** The demo on `store`, its claims kept in `checks`, no worker started yet. */
function demoOn(
  io: CommandIo,
  url: string,
  schema: string,
  folder: string,
  store: PostgresStore,
  checks: boolean[],
): DatabaseDemo {
  const out = io.out;
  const extension = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  const mainPath = fileURLToPath(new URL(`../cli/main.${extension}`, import.meta.url));
  const agentsPath = fileURLToPath(new URL(`./database-demo-agents.${extension}`, import.meta.url));
  const ledgerPath = join(folder, 'ledger.txt');
  const workers: ChildProcess[] = [];
  const logs = new Map<ChildProcess, string>();
  const startWorker = (name: string): ChildProcess => {
    const child = spawn(
      process.execPath,
      [
        mainPath,
        'worker',
        '--database',
        url,
        '--schema',
        schema,
        '--agents',
        agentsPath,
        '--lease',
        String(LEASE_MS),
        '--poll',
        '200',
      ],
      { cwd: folder, env: io.env, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    logs.set(child, '');
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      logs.set(child, (logs.get(child) ?? '') + chunk);
      for (const line of chunk.split('\n')) {
        if (line !== '')
          writeLine(io.stdout, out.dim(`  │ ${name}: ${line.replace(/^\[worker [^\]]*\] /, '')}`));
      }
    });
    workers.push(child);
    return child;
  };
  return {
    io,
    url,
    schema,
    store,
    check: (claim, held) => {
      checks.push(held);
      writeLine(io.stdout, `  ${held ? out.green('✓') : out.red('✗')} ${claim}`);
    },
    heading: (text) => {
      writeLine(io.stdout);
      writeLine(io.stdout, out.bold(text));
    },
    ledger: async () =>
      (await readFile(ledgerPath, 'utf8').catch(() => ''))
        .split('\n')
        .filter((line) => line !== ''),
    startWorker,
    workers,
    logs,
  };
}

/**
 * Step 1: release-1 submitted to two workers. The one that took it (its deploy under way) and
 * the other, or null when no worker took it (a failed check says so).
 */
async function workersTakeRelease(
  demo: DatabaseDemo,
): Promise<{ victim: ChildProcess; survivor: ChildProcess } | null> {
  const { store } = demo;
  demo.heading(
    'Step 1 — submit release-1, start two workers (policy ask: nothing is revived without a person)',
  );
  await store.submit(
    'release-1',
    { agentId: 'release-1', agentType: 'deployer', label: 'release-1', model: 'demo' },
    'release-1',
  );
  const workerA = demo.startWorker('worker A');
  const workerB = demo.startWorker('worker B');
  await until(async () => (await demo.ledger()).includes('release-1'), 20_000);
  const holder = (await store.runs()).find((row) => row.run === 'release-1')?.owner ?? '';
  const victim = demo.workers.find((child) => holder.includes(`:${child.pid}:`));
  demo.check(
    'a worker took release-1 and its deploy started (the ledger says so)',
    victim !== undefined,
  );
  if (victim === undefined) return null;
  return { victim, survivor: victim === workerA ? workerB : workerA };
}

/** Step 2: the worker SIGKILLed mid-deploy; the other fences the run and leaves it to a person. */
async function killInDeploy(demo: DatabaseDemo, victim: ChildProcess): Promise<void> {
  demo.heading('Step 2 — SIGKILL the worker inside the deploy');
  victim.kill('SIGKILL');
  demo.check('the worker died by SIGKILL mid-tool', (await exited(victim)) === 'SIGKILL');
  const parked = await until(
    async () => stateOf(demo.store, 'release-1').then((state) => state === 'awaiting-approval'),
    LEASE_MS * 6,
  );
  demo.check(
    'the other worker found the expired lease, fenced the run and left it awaiting approval',
    parked,
  );
  demo.check(
    'no tokens were spent on it meanwhile: the ledger still holds one deploy',
    (await demo.ledger()).length === 1,
  );
}

/** Step 3: approved, release-1 is revived by the survivor: the deploy answered, never rerun. */
async function approveAndRevive(demo: DatabaseDemo, survivor: ChildProcess): Promise<void> {
  const { store } = demo;
  demo.heading('Step 3 — a person approves (the demo answers yes to what a person is asked)');
  await approveRuns(demo.io, store, ['release-1'], { yes: true, maxRevivals: 3 });
  const finished = await until(
    async () => stateOf(store, 'release-1').then((state) => state === 'finished'),
    20_000,
  );
  demo.check('the surviving worker revived release-1 and it finished', finished);
  const records = await store.read('release-1');
  const known = records.ok ? records.records.filter(isKnownRecord) : [];
  demo.check(
    'the deploy was answered "interrupted — outcome unknown — NOT retried", never run again',
    (await demo.ledger()).filter((line) => line === 'release-1').length === 1 &&
      known.some(
        (record) =>
          record.type === 'tool-settled' &&
          record.status === 'failed' &&
          record.reason === 'interrupted',
      ),
  );
  demo.check(
    'the revival was counted once',
    known.filter((record) => record.type === 'run-revived').length === 1,
  );
  survivor.kill('SIGTERM');
  demo.check(
    'the surviving worker stopped on SIGTERM (exit 130)',
    (await exited(survivor)) === 130,
  );
}

/** Step 4: a worker paused past its lease is fenced out, and refused its write when resumed. */
async function fencePausedWorker(demo: DatabaseDemo): Promise<void> {
  const { store } = demo;
  demo.heading(
    'Step 4 — a third worker is paused (SIGSTOP) inside release-2 past its lease, then resumed',
  );
  await store.submit(
    'release-2',
    { agentId: 'release-2', agentType: 'deployer', label: 'release-2', model: 'demo' },
    'release-2',
  );
  const zombie = demo.startWorker('worker C');
  await until(async () => (await demo.ledger()).includes('release-2'), 20_000);
  zombie.kill('SIGSTOP');
  const epochBefore = (await store.runs()).find((row) => row.run === 'release-2')?.epoch ?? 0;
  await until(
    async () => (await store.runs()).some((row) => row.run === 'release-2' && row.leaseExpired),
    LEASE_MS * 6,
  );
  const fenced = await store.park('release-2', 'awaiting-approval');
  demo.check('its lease ran out and the run was fenced (a new epoch)', fenced);
  zombie.kill('SIGCONT');
  const refused = await until(
    async () => /took this run over/.test(demo.logs.get(zombie) ?? ''),
    20_000,
  );
  demo.check('resumed, the paused worker tried to write and was refused', refused);
  const after = await store.read('release-2');
  const landed = after.ok
    ? after.records.filter(isKnownRecord).filter((record) => record.type === 'tool-settled').length
    : -1;
  demo.check(
    'nothing it wrote after the fence landed: release-2 holds no result of its deploy',
    landed === 0 && (await stateOf(store, 'release-2')) === 'awaiting-approval',
  );
  const epochNow = (await store.runs()).find((row) => row.run === 'release-2')?.epoch ?? 0;
  demo.check('the epoch moved once, past the paused worker', epochNow === epochBefore + 1);
  zombie.kill('SIGTERM');
  await exited(zombie);
}

/** How many checks held, where to look around, and the exit code that says whether all held. */
function verdict(io: CommandIo, url: string, schema: string, checks: boolean[]): number {
  const held = checks.filter(Boolean).length;
  writeLine(io.stdout);
  writeLine(
    io.stdout,
    held === checks.length
      ? io.out.green(`All ${checks.length} checks held.`)
      : io.out.red(`${checks.length - held} of ${checks.length} checks failed.`),
  );
  const target = databaseOptions(url, schema);
  writeLine(
    io.stdout,
    `Look around: ${hintCommand(io, `status ${target.args}`)}${maskedNote(target.masked)}`,
  );
  writeLine(
    io.stdout,
    io.out.dim(`(the demo's schema stays; remove it with: DROP SCHEMA ${schema} CASCADE)`),
  );
  return held === checks.length ? EXIT.ok : EXIT.failure;
}

/** The signal a worker died of, or its exit code. */
function exited(child: ChildProcess): Promise<NodeJS.Signals | number | null> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve(child.signalCode ?? child.exitCode)
    : new Promise((done) => child.once('exit', (code, signal) => done(signal ?? code)));
}

async function stateOf(store: PostgresStore, run: string): Promise<string | undefined> {
  const row = (await store.runs()).find((candidate) => candidate.run === run);
  return row === undefined ? undefined : databaseRunState(row);
}

/** Poll `condition` every 100 ms until it holds (true) or `timeoutMs` passes (false). */
async function until(condition: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((done) => setTimeout(done, 100));
  }
}
