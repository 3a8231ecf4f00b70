import { type ChildProcess, spawn, fork } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Revival } from '../src/revival/index.ts';
import { peek } from '../src/transcript/peek.ts';
import { seededRandom } from '../test/support/seeded-random.ts';

/*
 * The tree race: 2–4 processes run `llm-agent revive ROOT --yes` on one crashed tree at the
 * same moment, round after round. The tree has three levels with joins pending at two of them
 * (main waits in task_wait on its workers, a worker waits on its helper). Every round, exactly
 * one process must revive the whole tree and run it to the end; every child's answer must
 * reach its parent's task_wait (main's final answer names all four, none failed); no side
 * effect may run twice; the others must refuse naming the winner (exit code 7), or — when they
 * come after the winner finished — find nothing to revive.
 */

/** The figures of the tree race. */
export interface TreeRaceFigures {
  rounds: number;
  /** Processes started, over all rounds. */
  processes: number;
  /** Rounds where one process revived the whole tree and every check held. */
  clean: number;
  failed: number;
  /** How the processes that did not revive were answered. */
  losers: Map<string, number>;
  failures: string[];
}

const RUNNER = fileURLToPath(new URL('../test/subagents/support/tree-runner.ts', import.meta.url));
const WORKER = fileURLToPath(new URL('./tree-race-worker.ts', import.meta.url));
/** The `--agents` module of the crash tree. */
export const TREE_AGENTS = fileURLToPath(
  new URL('../test/cli/support/crash-tree-agents.ts', import.meta.url),
);
const EXPECTED =
  'main done: alpha handled with alpha/helper handled; beta handled with beta/helper handled';
const EFFECTS = ['alpha', 'alpha/helper', 'beta', 'beta/helper'];

function runRunner(folder: string, killAfter: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [RUNNER, folder, String(killAfter), 'deep'], {
      stdio: 'ignore',
    });
    child.on('error', reject);
    child.on('close', () => resolve());
  });
}

async function transcriptsBelow(folder: string): Promise<string[]> {
  const names = await readdir(folder, { recursive: true });
  return names.filter((name) => name.endsWith('.jsonl')).map((name) => join(folder, name));
}

/**
 * A crashed three-level tree in `folder`: the crash tree killed at a write where main waits on
 * its workers, a worker waits on its helper, and a helper is revivable. Kill points are tried
 * until one leaves that (the children run concurrently, so the write order may vary).
 *
 * @example
 * const template = await crashedDeepTree('/tmp/race/template');
 */
export async function crashedDeepTree(folder: string): Promise<string> {
  for (const killAfter of [34, 33, 35, 32, 36, 31, 37, 30, 38]) {
    await rm(folder, { recursive: true, force: true });
    await mkdir(folder, { recursive: true });
    await runRunner(folder, killAfter);
    const found = await Promise.all(
      (await transcriptsBelow(folder)).map(async (path) => ({
        path,
        found: await Revival.inspect({ path, maxRevivals: 3 }),
      })),
    );
    const depth = (path: string) => path.split('.agents/').length;
    const main = found.find((entry) => depth(entry.path) === 1);
    const waitingWorker = found.some(
      (entry) => depth(entry.path) === 2 && entry.found.pendingJoins.length > 0,
    );
    const revivableHelper = found.some((entry) => depth(entry.path) === 3 && entry.found.revivable);
    // A side effect killed between its durable dispatch and its end is answered as interrupted,
    // never run again: the round's ledger could not then hold every effect once. Such a kill
    // point is passed over, so that every round expects the same effects.
    const logged = await readFile(join(folder, 'executions.log'), 'utf8').catch(() => '');
    const inFlight = found.some((entry) =>
      entry.found.openDispatches.some(
        (open) => open.toolName === 'effect' && !logged.includes(`"callId":"${open.callId}"`),
      ),
    );
    if (main?.found.pendingJoins.length === 1 && waitingWorker && revivableHelper && !inFlight) {
      return folder;
    }
  }
  throw new Error('no kill point left the crash tree waiting at two levels');
}

interface Answer {
  code: number;
  stdout: string;
  stderr: string;
  pid: number;
}

function reply<T>(child: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) =>
      reject(new Error(`a tree race worker exited (${code})`));
    child.once('exit', onExit);
    child.once('message', (message) => {
      child.off('exit', onExit);
      resolve(message as T);
    });
  });
}

/**
 * Run `rounds` tree races, each between 2 and `workers` revivers (seeded).
 *
 * @example
 * const figures = await runTreeRace({ rounds: 200, workers: 4, seed: 1 });
 */
export async function runTreeRace(options: {
  rounds: number;
  workers: number;
  seed: number;
}): Promise<TreeRaceFigures> {
  const random = seededRandom(options.seed);
  const folder = await mkdtemp(join(tmpdir(), 'crashtest-tree-race-'));
  const figures: TreeRaceFigures = {
    rounds: 0,
    processes: 0,
    clean: 0,
    failed: 0,
    losers: new Map(),
    failures: [],
  };
  const children = Array.from({ length: options.workers }, () =>
    fork(WORKER, [], {
      execPath: process.execPath,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  try {
    const template = await crashedDeepTree(join(folder, 'template'));
    await Promise.all(children.map((child) => reply(child)));
    for (let round = 0; round < options.rounds; round += 1) {
      const target = join(folder, `r${round}`);
      await cp(template, target, { recursive: true });
      const count = 2 + Math.floor(random() * (options.workers - 1));
      const racing = children.slice(0, count);
      const answers = await Promise.all(
        racing.map((child) => {
          const answer = reply<Answer>(child);
          child.send({
            type: 'revive',
            path: join(target, 'main.jsonl'),
            agents: TREE_AGENTS,
            spin: random() * 3,
          });
          return answer;
        }),
      );
      figures.rounds += 1;
      figures.processes += count;
      const problems = await checkRound(target, answers, figures.losers);
      if (problems.length === 0) figures.clean += 1;
      else {
        figures.failed += 1;
        if (figures.failures.length < 10)
          figures.failures.push(
            `tree race round ${round} (${count} revivers): ${problems.join('; ')}`,
          );
      }
      await rm(target, { recursive: true, force: true });
    }
  } finally {
    for (const child of children) child.kill('SIGKILL');
    await rm(folder, { recursive: true, force: true });
  }
  return figures;
}

/** What went wrong in one round (nothing, for a clean one); counts the losers' answers. */
async function checkRound(
  target: string,
  answers: Answer[],
  losers: Map<string, number>,
): Promise<string[]> {
  const problems: string[] = [];
  const revived = answers.filter((answer) => answer.stdout.includes('Revived runs:'));
  if (revived.length !== 1) problems.push(`${revived.length} processes revived`);
  const winner = revived[0];
  if (winner !== undefined && winner.code !== 0) {
    problems.push(`the reviver exited ${winner.code}: ${winner.stderr.slice(-300)}`);
  }
  for (const answer of answers) {
    if (answer === winner) continue;
    const text = `${answer.stdout}\n${answer.stderr}`;
    const named = /being revived by pid (\d+) since \S+/.exec(text);
    let kind: string;
    if (answer.code === 7 && named !== null) {
      kind = 'refused naming the holder';
      if (winner !== undefined && Number(named[1]) !== winner.pid) {
        problems.push(`a loser named pid ${named[1]}, the reviver was ${winner.pid}`);
      }
    } else if (
      answer.code === 7 &&
      text.includes('being revived by another process (not yet named)')
    ) {
      // The claim was taken and its holder's nametag not yet written when this loser looked:
      // refused all the same, only without a pid to name (a wider window on a loaded machine).
      kind = 'refused before the holder was named';
    } else if (answer.code === 7 && text.includes('changed after the plan was made')) {
      kind = 'refused: revived since its plan';
    } else if (answer.code === 0 && text.includes('Nothing to revive')) {
      kind = 'came after: nothing to revive';
    } else {
      kind = `exit ${answer.code}`;
      problems.push(`a loser exited ${answer.code}: ${text.replace(/\s+/g, ' ').slice(0, 400)}`);
    }
    losers.set(kind, (losers.get(kind) ?? 0) + 1);
  }
  for (const path of await transcriptsBelow(target)) {
    const found = await Revival.inspect({ path, maxRevivals: 3 });
    if (found.reason !== 'finished') problems.push(`${path}: ${found.reason ?? 'revivable'}`);
    const bytes = await readFile(path, 'utf8');
    if (bytes.includes('running-elsewhere') || /failed: running/.test(bytes)) {
      problems.push(`${path}: a join was answered "running"`);
    }
  }
  const main = await peek(join(target, 'main.jsonl'));
  const last = main.ok
    ? main.records
        .filter((record) => record.type === 'message' && record.role === 'assistant')
        .at(-1)
    : undefined;
  const text =
    last?.type === 'message'
      ? (last.content as { type: string; text?: string }[])
          .map((part) => (part.type === 'text' ? (part.text ?? '') : ''))
          .join('')
      : '';
  if (text !== EXPECTED) problems.push(`main answered ${JSON.stringify(text.slice(0, 200))}`);
  const log = await readFile(join(target, 'executions.log'), 'utf8').catch(() => '');
  const done = log
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => (JSON.parse(line) as { what: string }).what)
    .sort();
  if (JSON.stringify(done) !== JSON.stringify(EFFECTS)) {
    problems.push(`side effects ${JSON.stringify(done)}`);
  }
  return problems;
}
