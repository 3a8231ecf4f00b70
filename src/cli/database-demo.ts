import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PostgresStore } from '../store/postgres/postgres-store.ts';
import { isKnownRecord } from '../transcript/validate-record.ts';
import { approveRuns } from '../runs/approve-runs.ts';
import type { CommandIo } from '../runs/command-io.ts';
import { writeLine } from './command.ts';
import { connectStore } from '../runs/database-store.ts';
import { databaseRunState } from '../runs/database-status.ts';
import { EXIT } from '../render/exit-codes.ts';
import { UserError } from '../runs/user-error.ts';

/** How long a demo worker's hold on a run lasts unrenewed. */
const LEASE_MS = 2000;

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
  const out = io.out;
  const folder = await mkdtemp(join(tmpdir(), 'llm-agent-db-demo-'));
  const schema = `llm_agent_demo_${Date.now().toString(36)}`;
  const checks: boolean[] = [];
  const check = (claim: string, held: boolean): void => {
    checks.push(held);
    writeLine(io.stdout, `  ${held ? out.green('✓') : out.red('✗')} ${claim}`);
  };
  const heading = (text: string): void => {
    writeLine(io.stdout);
    writeLine(io.stdout, out.bold(text));
  };
  const extension = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  const mainPath = fileURLToPath(new URL(`./main.${extension}`, import.meta.url));
  const agentsPath = fileURLToPath(
    new URL(`../demo/database-demo-agents.${extension}`, import.meta.url),
  );
  const ledgerPath = join(folder, 'ledger.txt');
  const ledger = async (): Promise<string[]> =>
    (await readFile(ledgerPath, 'utf8').catch(() => '')).split('\n').filter((line) => line !== '');
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
  const exited = (child: ChildProcess): Promise<NodeJS.Signals | number | null> =>
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve(child.signalCode ?? child.exitCode)
      : new Promise((done) => child.once('exit', (code, signal) => done(signal ?? code)));

  writeLine(
    io.stdout,
    out.bold('llm-agent demo --database — workers that die, and runs that come back once'),
  );
  writeLine(
    io.stdout,
    `Database: ${url.replace(/\/\/[^@/]*@/, '//')}, schema ${schema}; folder ${folder}`,
  );

  const { PostgresStore } = await import('../store/postgres/postgres-store.ts');
  try {
    await PostgresStore.migrate({ connectionString: url, schema });
  } catch (error) {
    throw new UserError(
      `demo: cannot use the database: ${error instanceof Error ? error.message : String(error)}`,
      EXIT.failure,
    );
  }
  const store = await connectStore('demo', url, schema);
  try {
    heading(
      'Step 1 — submit release-1, start two workers (policy ask: nothing is revived without a person)',
    );
    await store.submit(
      'release-1',
      { agentId: 'release-1', agentType: 'deployer', label: 'release-1', model: 'demo' },
      'release-1',
    );
    const workerA = startWorker('worker A');
    const workerB = startWorker('worker B');
    await until(async () => (await ledger()).includes('release-1'), 20_000);
    const holder = (await store.runs()).find((row) => row.run === 'release-1')?.owner ?? '';
    const victim = workers.find((child) => holder.includes(`:${child.pid}:`));
    check(
      'a worker took release-1 and its deploy started (the ledger says so)',
      victim !== undefined,
    );
    if (victim === undefined) return EXIT.failure;
    const survivor = victim === workerA ? workerB : workerA;

    heading('Step 2 — SIGKILL the worker inside the deploy');
    victim.kill('SIGKILL');
    check('the worker died by SIGKILL mid-tool', (await exited(victim)) === 'SIGKILL');
    const parked = await until(
      async () => stateOf(store, 'release-1').then((state) => state === 'awaiting-approval'),
      LEASE_MS * 6,
    );
    check(
      'the other worker found the expired lease, fenced the run and left it awaiting approval',
      parked,
    );
    check(
      'no tokens were spent on it meanwhile: the ledger still holds one deploy',
      (await ledger()).length === 1,
    );

    heading('Step 3 — a person approves (the demo answers yes to what a person is asked)');
    await approveRuns(io, store, ['release-1'], { yes: true, maxRevivals: 3 });
    const finished = await until(
      async () => stateOf(store, 'release-1').then((state) => state === 'finished'),
      20_000,
    );
    check('the surviving worker revived release-1 and it finished', finished);
    const records = await store.read('release-1');
    const known = records.ok ? records.records.filter(isKnownRecord) : [];
    check(
      'the deploy was answered "interrupted — outcome unknown — NOT retried", never run again',
      (await ledger()).filter((line) => line === 'release-1').length === 1 &&
        known.some(
          (record) =>
            record.type === 'tool-settled' &&
            record.status === 'failed' &&
            record.reason === 'interrupted',
        ),
    );
    check(
      'the revival was counted once',
      known.filter((record) => record.type === 'run-revived').length === 1,
    );
    survivor.kill('SIGTERM');
    check('the surviving worker stopped on SIGTERM (exit 130)', (await exited(survivor)) === 130);

    heading(
      'Step 4 — a third worker is paused (SIGSTOP) inside release-2 past its lease, then resumed',
    );
    await store.submit(
      'release-2',
      { agentId: 'release-2', agentType: 'deployer', label: 'release-2', model: 'demo' },
      'release-2',
    );
    const zombie = startWorker('worker C');
    await until(async () => (await ledger()).includes('release-2'), 20_000);
    zombie.kill('SIGSTOP');
    const epochBefore = (await store.runs()).find((row) => row.run === 'release-2')?.epoch ?? 0;
    await until(
      async () => (await store.runs()).some((row) => row.run === 'release-2' && row.leaseExpired),
      LEASE_MS * 6,
    );
    const fenced = await store.park('release-2', 'awaiting-approval');
    check('its lease ran out and the run was fenced (a new epoch)', fenced);
    zombie.kill('SIGCONT');
    const refused = await until(
      async () => /took this run over/.test(logs.get(zombie) ?? ''),
      20_000,
    );
    check('resumed, the paused worker tried to write and was refused', refused);
    const after = await store.read('release-2');
    const landed = after.ok
      ? after.records.filter(isKnownRecord).filter((record) => record.type === 'tool-settled')
          .length
      : -1;
    check(
      'nothing it wrote after the fence landed: release-2 holds no result of its deploy',
      landed === 0 && (await stateOf(store, 'release-2')) === 'awaiting-approval',
    );
    const epochNow = (await store.runs()).find((row) => row.run === 'release-2')?.epoch ?? 0;
    check('the epoch moved once, past the paused worker', epochNow === epochBefore + 1);
    zombie.kill('SIGTERM');
    await exited(zombie);
  } finally {
    for (const child of workers) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGCONT');
        child.kill('SIGKILL');
      }
    }
    await store.close();
  }
  const held = checks.filter(Boolean).length;
  writeLine(io.stdout);
  writeLine(
    io.stdout,
    held === checks.length
      ? out.green(`All ${checks.length} checks held.`)
      : out.red(`${checks.length - held} of ${checks.length} checks failed.`),
  );
  writeLine(io.stdout, `Look around: llm-agent status --database URL --schema ${schema}`);
  writeLine(
    io.stdout,
    out.dim(`(the demo's schema stays; remove it with: DROP SCHEMA ${schema} CASCADE)`),
  );
  return held === checks.length ? EXIT.ok : EXIT.failure;
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
