import { spawn } from 'node:child_process';
import { cpSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Revival } from '../src/revival/index.ts';
import { conversationView } from '../src/transcript/conversation-view.ts';
import { peek } from '../src/transcript/peek.ts';
import {
  AGENTS_MODULE,
  type Attack,
  type AttackContext,
  CLI,
  type ChildOutcome,
  faultNotProven,
  lstatOrNull,
  ledgerCount,
  revivedCount,
  runCli,
  sleep,
  verdict,
} from './support.ts';

/*
 * Two revivers of one tree at once. The tree is real: `llm-agent run` of the crash tests'
 * `deep` plan (main → lead → worker), killed by SIGKILL while the worker's side effect runs and
 * both parents wait in `task_wait`. Each round copies it and starts two `revive --yes` at the
 * same moment. Exactly one process may revive; every join must be answered by its child's
 * own answer; the worker's side effect must never run again.
 */

/** Every `*.jsonl` below a folder. */
function transcripts(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.jsonl') && !name.includes('ledger'))
    .map((name) => join(folder, name))
    .sort((left, right) => left.split('.agents').length - right.split('.agents').length);
}

/** Run the deep plan, kill it while the worker's effect runs; the folder holding `runs/`. */
async function crashedDeepTree(context: AttackContext): Promise<string | null> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const folder = join(context.folder, `template-${attempt}`);
    const ledger = join(context.folder, `template-${attempt}.ledger`);
    const child = spawn(
      process.execPath,
      [
        CLI,
        'run',
        '--agents',
        AGENTS_MODULE,
        '--type',
        'main',
        '--out',
        join(folder, 'runs', 'main.jsonl'),
        'plan:deep',
      ],
      {
        cwd: context.folder,
        env: { ...process.env, ATTACK_LEDGER: ledger, ATTACK_HANG: 'delta', NO_COLOR: '1' },
        stdio: 'ignore',
      },
    );
    // A loaded machine can take 20 s and more to start the CLI.
    const deadline = Date.now() + 60_000;
    while (ledgerCount(ledger, 'delta') === 0 && Date.now() < deadline) await sleep(20);
    await sleep(300);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('close', resolve));
    // Killed before it made its tree (it never reached the effect): try again.
    if (lstatOrNull(folder) === null) continue;
    const paths = transcripts(folder);
    if (paths.length !== 3) continue;
    const found = await Promise.all(paths.map((path) => Revival.inspect({ path, maxRevivals: 3 })));
    const [root, lead, worker] = found;
    if (
      root?.pendingJoins.length === 1 &&
      lead?.pendingJoins.length === 1 &&
      worker?.openDispatches.length === 1
    )
      return folder;
  }
  return null;
}

/** What is wrong with a revived round's tree, or an empty list. */
async function roundProblems(
  folder: string,
  answers: (ChildOutcome & { began: number })[],
  ledger: string,
  whole: boolean,
): Promise<string[]> {
  const problems: string[] = [];
  const revivers = answers.filter((answer) => /\] revived \(/.test(answer.stderr));
  // Two processes may each revive part of a tree one after the other (the child's reviver
  // finishes and releases the claim before the root's reviver claims it). What must never
  // happen is two reviving at once: each reviver's window runs from its first run-revived
  // record to the last record of the runs it revived, read from the transcripts themselves.
  const windows = await Promise.all(revivers.map((answer) => revivalWindow(folder, answer.stderr)));
  const [first, second] = windows;
  const overlapping =
    first !== undefined &&
    second !== undefined &&
    first.from <= second.to &&
    second.from <= first.to;
  if (revivers.length === 0 || overlapping)
    problems.push(
      `${revivers.length} processes revived runs${overlapping ? ' at the same time' : ''}`,
    );
  for (const answer of answers) if (answer.timedOut) problems.push('a reviver hung');
  for (const path of transcripts(folder)) {
    const name = path.slice(folder.length + 1);
    const found = await Revival.inspect({ path, maxRevivals: 3 });
    // Reviving one child of a tree may leave its parents to a later revive; never damaged.
    const ended = whole
      ? found.reason === 'finished'
      : found.reason === 'finished' || found.revivable;
    if (!ended) problems.push(`${name} ${found.reason ?? 'revivable'}`);
    const revivals = revivedCount(path);
    if (whole ? revivals !== 1 : revivals > 1) problems.push(`${name} has ${revivals} run-revived`);
    const read = await peek(path);
    if (!read.ok) continue;
    for (const message of conversationView(read.records)) {
      for (const part of message.content) {
        if (part.type !== 'tool-result' || part.toolName !== 'task_wait') continue;
        const results =
          (part.output as { results?: { status?: string; reason?: string }[] } | null)?.results ??
          [];
        const bad = results.filter((result) => result.status !== 'finished');
        if (part.isError || bad.length > 0)
          problems.push(
            `${name}'s join answered ${bad.map((result) => `${result.status}: ${result.reason ?? ''}`).join(', ') || 'an error'}`,
          );
      }
    }
  }
  if (ledgerCount(ledger, 'delta') > 0)
    problems.push('the worker’s interrupted side effect ran again');
  return problems;
}

/**
 * From the first `run-revived` record to the last record of the runs a reviver says it revived
 * (`[agent-id] revived (` on its stderr), in milliseconds since the epoch.
 */
async function revivalWindow(
  folder: string,
  stderr: string,
): Promise<{ from: number; to: number }> {
  const ids = new Set([...stderr.matchAll(/\[([^\]\s]+)\] revived \(/g)].map((match) => match[1]));
  let from = Number.POSITIVE_INFINITY;
  let to = Number.NEGATIVE_INFINITY;
  for (const path of transcripts(folder)) {
    const read = await peek(path);
    if (!read.ok) continue;
    const meta = read.records.find((record) => record.type === 'session-meta') as
      | { agentId?: string }
      | undefined;
    if (meta?.agentId === undefined || !ids.has(meta.agentId)) continue;
    const revived = read.records.find((record) => record.type === 'run-revived');
    const last = read.records.at(-1);
    if (revived === undefined || last === undefined) continue;
    from = Math.min(from, Date.parse(revived.at));
    to = Math.max(to, Date.parse(last.at));
  }
  return { from, to };
}

function race(
  name: string,
  what: string,
  childPath: boolean,
  rounds: { quick: number; full: number },
): Attack {
  return {
    name,
    family: 'concurrency',
    what,
    // Each round is bounded (every revive is killed past 60 s); 50 rounds take minutes.
    timeoutMs: 1_800_000,
    run: async (context) => {
      const template = await crashedDeepTree(context);
      if (template === null)
        return faultNotProven('no crashed depth-3 tree with pending joins was made');
      const count = context.quick ? rounds.quick : rounds.full;
      const broken: string[] = [];
      for (let round = 0; round < count && !context.signal.aborted; round++) {
        const folder = join(context.folder, `round-${round}`);
        cpSync(template, folder, { recursive: true });
        const [root, , worker] = transcripts(folder);
        const ledger = join(context.folder, `round-${round}.ledger`);
        const targets = [root, childPath ? worker : root] as string[];
        const answers = await Promise.all(
          targets.map((target, index) =>
            sleep(index === 0 ? 0 : Math.floor(context.random() * 40)).then(async () => {
              const began = performance.now();
              const outcome = await runCli(['revive', target, '--yes', '--agents', AGENTS_MODULE], {
                cwd: context.folder,
                timeoutMs: 60_000,
                env: { ATTACK_LEDGER: ledger },
              });
              return { ...outcome, began };
            }),
          ),
        );
        const problems = await roundProblems(folder, answers, ledger, !childPath);
        if (problems.length > 0) broken.push(`round ${round}: ${problems.slice(0, 3).join('; ')}`);
        if ((round + 1) % 5 === 0)
          context.progress(`${round + 1} of ${count} rounds, ${broken.length} broken`);
      }
      return verdict(
        broken.length === 0,
        `${count} rounds of 2 concurrent revive --yes (${childPath ? 'the root and the deepest child' : 'both on the root'}) of a killed depth-3 tree with pending joins: ${broken.length} broken${broken.length > 0 ? ` (${broken[0]})` : ', each with exactly one reviver and every join answered by its child'}`,
      );
    },
  };
}

/** The concurrency attacks. */
export const CONCURRENCY_ATTACKS: Attack[] = [
  race(
    'tree-race-two-revivers',
    'two concurrent `revive --yes` of the root of a depth-3 tree with pending joins: exactly one reviver, no join answered "failed: running"',
    false,
    { quick: 5, full: 50 },
  ),
  race(
    'tree-race-root-and-child',
    'a `revive --yes` of the root and one of its deepest child at once: one claim per tree, the other refused',
    true,
    { quick: 2, full: 20 },
  ),
];
