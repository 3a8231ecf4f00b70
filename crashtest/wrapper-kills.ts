import { type ChildProcess, fork } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { main } from '../src/cli/main.ts';
import { createStyle } from '../src/render/terminal-style.ts';
import { Revival } from '../src/revival/index.ts';
import { conversationView } from '../src/transcript/conversation-view.ts';
import { pairingViolations } from '../src/transcript/pairing-violations.ts';
import { readRecords } from '../src/transcript/read-records.ts';
import type { TranscriptRecord } from '../src/transcript/records.ts';
import { seededRandom } from '../test/support/seeded-random.ts';
import { FINAL, TASK } from './ai-sdk-program.ts';
import {
  acknowledgedPrefix,
  type BreachFigures,
  noPartBreaches,
  type PartBreaches,
  tallyBreaches,
} from './invariants.ts';
import { problemsByTranscript } from './wrapper-agents.ts';
import { WRAPPER_PROGRAMS, type WrapperProgram } from './wrapper-programs.ts';

/*
 * The wrapper parts (ai-sdk, openai-agents): the same real kills as the SIGKILL loop, of a
 * process running an AI SDK ToolLoopAgent, or an OpenAI Agents JS run, through the wrappers
 * (crashtest/wrapper-programs.ts). After each kill the run is revived in this process and run
 * to its end — every other kill by `llm-agent revive` with an agents module naming the same
 * agent (crashtest/wrapper-agents.ts), the others (and a run the command has nothing to revive
 * in: killed before its task was recorded, or after it finished) by the program started again,
 * whose opening the run revives it; then the invariants the Loop's transcripts are held to:
 * the acknowledged bytes kept, every tool start
 * preceded by its durable dispatch (lost), no call started twice (doubled), every prompt and the
 * final conversation pairing, the run finished with the model's last answer (failed).
 */

/** The figures of a wrapper part. */
export interface WrapperKillFigures extends BreachFigures {
  kills: number;
  /** Kills whose process exited by SIGKILL (must be all). */
  bySigkill: number;
  /** Kills that landed while a tool had started and not returned: the dispatch left open. */
  midTool: number;
  /** Runs the kill left revivable (a kill after the run finished leaves none). */
  revived: number;
  /** Of those, the runs revived by `llm-agent revive` (the others by the program started again). */
  revivedByCli: number;
  baselineMilliseconds: number;
  failures: string[];
}

const childScript = fileURLToPath(new URL('./wrapper-child.ts', import.meta.url));

interface Warm {
  child: ChildProcess;
  ready: Promise<void>;
  exited: Promise<NodeJS.Signals | null>;
}

function warm(program: WrapperProgram): Warm {
  const child = fork(childScript, [program], {
    execPath: process.execPath,
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const ready = new Promise<void>((resolve) => {
    child.once('message', () => resolve());
    child.once('exit', () => resolve());
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once('exit', (_code, signal) => resolve(signal)),
  );
  return { child, ready, exited };
}

/**
 * Start the program in a warm process and kill it `delay` ms after its run opened (its
 * transcript created or revived), or once it is done when `delay` is null.
 */
async function runOnce(slot: Warm, folder: string, delay: number | null) {
  await slot.ready;
  let opened!: () => void;
  const running = new Promise<void>((resolve) => {
    opened = resolve;
  });
  let began = 0;
  const finished = new Promise<void>((resolve) => {
    slot.child.on('message', (message: { running?: boolean; done?: boolean }) => {
      if (message.running === true) {
        began = performance.now();
        opened();
      }
      if (message.done === true) resolve();
    });
    slot.exited.then(() => {
      opened();
      resolve();
    });
  });
  if (slot.child.connected) slot.child.send({ type: 'go', folder });
  await running;
  if (delay === null) await finished;
  else await Promise.race([finished, new Promise((resolve) => setTimeout(resolve, delay))]);
  const milliseconds = performance.now() - began;
  slot.child.kill('SIGKILL');
  return { signal: await slot.exited, milliseconds };
}

async function records(path: string): Promise<TranscriptRecord[]> {
  const all: TranscriptRecord[] = [];
  for await (const record of readRecords(path)) all.push(record as TranscriptRecord);
  return all;
}

async function lines(file: string): Promise<string[]> {
  return (await readFile(file, 'utf8').catch(() => '')).split('\n').filter((line) => line !== '');
}

const agentsModule = fileURLToPath(new URL('./wrapper-agents.ts', import.meta.url));

/** One `llm-agent revive` at a time in this process: the lanes share it. */
let cliTurn: Promise<unknown> = Promise.resolve();

/**
 * `llm-agent revive PATH --yes --agents wrapper-agents.ts`, in this process: the CLI's reviver
 * carries the run on with the program's agent. Returns the exit code and what it printed.
 */
function reviveByCli(
  program: WrapperProgram,
  path: string,
): Promise<{ code: number; output: string }> {
  const turn = cliTurn.then(async () => {
    let output = '';
    const sink = () => {
      const stream = new PassThrough();
      stream.on('data', (chunk: Buffer) => {
        output += chunk.toString('utf8');
      });
      return stream;
    };
    const code = await main(['revive', path, '--yes', '--agents', agentsModule], {
      stdout: sink(),
      stderr: sink(),
      stdin: new PassThrough(),
      env: { ...process.env, NO_COLOR: '1', WRAPPER_PROGRAM: program },
      cwd: dirname(path),
      out: createStyle(false),
      err: createStyle(false),
    });
    return { code, output };
  });
  cliTurn = turn.catch(() => undefined);
  return turn;
}

/** The text of the transcript's last assistant turn: what a run revived by the CLI ended with. */
function lastText(all: TranscriptRecord[]): string {
  const last = conversationView(all).findLast((message) => message.role === 'assistant');
  return (last?.content ?? [])
    .flatMap((part) => (part.type === 'text' ? [part.text] : []))
    .join('');
}

/**
 * Check one killed folder: revive it (by `llm-agent revive` when `byCli` and the run is
 * revivable, else by the program started again), run it to its end, hold it to the invariants.
 */
async function checkKill(
  program: WrapperProgram,
  folder: string,
  where: string,
  byCli: boolean,
  figures: WrapperKillFigures,
  breaches: PartBreaches,
): Promise<void> {
  const path = join(folder, 'main.jsonl');
  const executions = join(folder, 'executions.log');
  const atKill = await readFile(path).catch(() => Buffer.alloc(0));
  const acknowledged = acknowledgedPrefix(atKill);
  const started = await lines(executions);
  let revivable = false;
  if (atKill.length > 0) {
    const dispatched = new Set(
      (await records(path)).flatMap((record) =>
        record.type === 'tool-dispatched' ? [record.callId] : [],
      ),
    );
    for (const callId of started) {
      if (!dispatched.has(callId))
        breaches.lost.push(`${where}: ${callId} started with no dispatch`);
    }
    const found = await Revival.inspect({ path, maxRevivals: 3 });
    if (found.revivable) {
      revivable = true;
      figures.revived += 1;
      if (found.openDispatches.length > 0) figures.midTool += 1;
    }
  }
  let problems: string[] = [];
  let text: string;
  try {
    if (byCli && revivable) {
      const revived = await reviveByCli(program, path);
      if (revived.code !== 0) {
        breaches.failed.push(
          `${where}: llm-agent revive exited ${revived.code}: ${revived.output}`,
        );
      }
      const seen = problemsByTranscript.get(path);
      problemsByTranscript.delete(path);
      // The agents module is this process's instance: its agent's prompts are checked here.
      if (seen === undefined) breaches.failed.push(`${where}: the agents module's agent never ran`);
      problems = seen ?? [];
      figures.revivedByCli += 1;
      text = lastText(await records(path));
    } else {
      text = await WRAPPER_PROGRAMS[program](path, executions, problems);
    }
  } catch (error) {
    breaches.throws.push(`${where}: ${error instanceof Error ? error.message : String(error)}`);
    return;
  }
  if (text !== FINAL) breaches.failed.push(`${where}: ended with ${JSON.stringify(text)}`);
  const after = await readFile(path);
  if (!after.subarray(0, acknowledged.length).equals(acknowledged)) {
    breaches.lost.push(`${where}: acknowledged bytes changed`);
  }
  const counts = new Map<string, number>();
  for (const callId of await lines(executions)) counts.set(callId, (counts.get(callId) ?? 0) + 1);
  for (const [callId, count] of counts) {
    if (count > 1) breaches.doubled.push(`${where}: ${callId} started ${count} times`);
  }
  for (const problem of problems) breaches.pairing.push(`${where}: a prompt: ${problem}`);
  const view = conversationView(await records(path));
  const tasks = view.filter(
    (message) =>
      message.role === 'user' &&
      message.content.some((part) => part.type === 'text' && part.text === TASK),
  ).length;
  // A run killed before its task was durable is started afresh: never without it, never twice.
  if (tasks === 0) breaches.lost.push(`${where}: the transcript does not hold the run's task`);
  if (tasks > 1) breaches.doubled.push(`${where}: the run's task recorded ${tasks} times`);
  for (const problem of pairingViolations(view)) {
    breaches.pairing.push(`${where}: the transcript: ${JSON.stringify(problem)}`);
  }
  const end = await Revival.inspect({ path, maxRevivals: 3 });
  if (end.reason !== 'finished') breaches.failed.push(`${where}: reads ${end.reason}`);
}

/**
 * Kill `kills` runs of a wrapped program at random moments, revive and check each.
 *
 * @example
 * const figures = await runWrapperKills({ program: 'openai-agents', kills: 100, lanes: 2, seed: 1 });
 */
export async function runWrapperKills(options: {
  program: WrapperProgram;
  kills: number;
  lanes: number;
  seed: number;
}): Promise<WrapperKillFigures> {
  const random = seededRandom(options.seed);
  const root = await mkdtemp(join(tmpdir(), `crashtest-${options.program}-`));
  const figures: WrapperKillFigures = {
    kills: 0,
    bySigkill: 0,
    midTool: 0,
    revived: 0,
    revivedByCli: 0,
    baselineMilliseconds: 0,
    lost: 0,
    doubled: 0,
    pairing: 0,
    throws: 0,
    failed: 0,
    failures: [],
  };
  const breaches = noPartBreaches();
  const lanes = Array.from({ length: options.lanes }, () => ({ next: warm(options.program) }));
  try {
    const baselineFolder = join(root, 'baseline');
    await mkdir(baselineFolder);
    const lane0 = lanes[0] as { next: Warm };
    const baselineSlot = lane0.next;
    lane0.next = warm(options.program);
    figures.baselineMilliseconds = Math.round(
      (await runOnce(baselineSlot, baselineFolder, null)).milliseconds,
    );
    const delays = Array.from(
      { length: options.kills },
      () => Math.round(random() * figures.baselineMilliseconds * 1.1 * 10) / 10,
    );
    let next = 0;
    await Promise.all(
      lanes.map(async (lane) => {
        for (let index = next++; index < options.kills; index = next++) {
          const slot = lane.next;
          lane.next = warm(options.program);
          const folder = join(root, `kill-${index}`);
          await mkdir(folder);
          const delay = delays[index] ?? 0;
          const outcome = await runOnce(slot, folder, delay);
          figures.kills += 1;
          const where = `${options.program} kill ${index} after ${delay} ms`;
          if (outcome.signal === 'SIGKILL') figures.bySigkill += 1;
          else
            breaches.failed.push(`${where}: the process ended by ${outcome.signal}, not SIGKILL`);
          await checkKill(options.program, folder, where, index % 2 === 1, figures, breaches);
          await rm(folder, { recursive: true, force: true });
        }
      }),
    );
  } finally {
    for (const lane of lanes) lane.next.child.kill('SIGKILL');
    await rm(root, { recursive: true, force: true });
  }
  figures.failures = tallyBreaches(figures, breaches).slice(0, 20);
  return figures;
}
