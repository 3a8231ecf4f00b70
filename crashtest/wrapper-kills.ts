import { type ChildProcess, fork } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Revival } from '../src/revival/index.ts';
import { conversationView } from '../src/transcript/conversation-view.ts';
import { pairingViolations } from '../src/transcript/pairing-violations.ts';
import { readRecords } from '../src/transcript/read-records.ts';
import type { TranscriptRecord } from '../src/transcript/records.ts';
import { seededRandom } from '../test/support/seeded-random.ts';
import { FINAL, runAiSdkProgram } from './ai-sdk-program.ts';
import {
  acknowledgedPrefix,
  type BreachFigures,
  noPartBreaches,
  type PartBreaches,
  tallyBreaches,
} from './invariants.ts';

/*
 * The ai-sdk part: the same real kills as the SIGKILL loop, of a process running an AI SDK
 * ToolLoopAgent through the wrappers (crashtest/ai-sdk-program.ts). After each kill the program
 * is started again in this process — opening the run revives it — and run to its end; then the
 * invariants the Loop's transcripts are held to: the acknowledged bytes kept, every tool start
 * preceded by its durable dispatch (lost), no call started twice (doubled), every prompt and the
 * final conversation pairing, the run finished with the model's last answer (failed).
 */

/** The figures of the ai-sdk part. */
export interface AiSdkKillFigures extends BreachFigures {
  kills: number;
  /** Kills whose process exited by SIGKILL (must be all). */
  bySigkill: number;
  /** Kills that landed while a tool had started and not returned: the dispatch left open. */
  midTool: number;
  /** Revivals the reopened program made (a kill after the run finished needs none). */
  revived: number;
  baselineMilliseconds: number;
  failures: string[];
}

const childScript = fileURLToPath(new URL('./ai-sdk-child.ts', import.meta.url));

interface Warm {
  child: ChildProcess;
  ready: Promise<void>;
  exited: Promise<NodeJS.Signals | null>;
}

function warm(): Warm {
  const child = fork(childScript, [], {
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

/** Check one killed folder: revive it, run it to its end, hold it to the invariants. */
async function checkKill(
  folder: string,
  where: string,
  figures: AiSdkKillFigures,
  breaches: PartBreaches,
): Promise<void> {
  const path = join(folder, 'main.jsonl');
  const executions = join(folder, 'executions.log');
  const atKill = await readFile(path).catch(() => Buffer.alloc(0));
  const acknowledged = acknowledgedPrefix(atKill);
  const started = await lines(executions);
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
      figures.revived += 1;
      if (found.openDispatches.length > 0) figures.midTool += 1;
    }
  }
  const problems: string[] = [];
  let text: string;
  try {
    text = await runAiSdkProgram(path, executions, problems);
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
  for (const problem of pairingViolations(view)) {
    breaches.pairing.push(`${where}: the transcript: ${JSON.stringify(problem)}`);
  }
  const end = await Revival.inspect({ path, maxRevivals: 3 });
  if (end.reason !== 'finished') breaches.failed.push(`${where}: reads ${end.reason}`);
}

/**
 * Kill `kills` runs of the wrapped AI SDK program at random moments, revive and check each.
 *
 * @example
 * const figures = await runAiSdkKills({ kills: 100, lanes: 2, seed: 1 });
 */
export async function runAiSdkKills(options: {
  kills: number;
  lanes: number;
  seed: number;
}): Promise<AiSdkKillFigures> {
  const random = seededRandom(options.seed);
  const root = await mkdtemp(join(tmpdir(), 'crashtest-ai-sdk-'));
  const figures: AiSdkKillFigures = {
    kills: 0,
    bySigkill: 0,
    midTool: 0,
    revived: 0,
    baselineMilliseconds: 0,
    lost: 0,
    doubled: 0,
    pairing: 0,
    throws: 0,
    failed: 0,
    failures: [],
  };
  const breaches = noPartBreaches();
  const lanes = Array.from({ length: options.lanes }, () => ({ next: warm() }));
  try {
    const baselineFolder = join(root, 'baseline');
    await mkdir(baselineFolder);
    const lane0 = lanes[0] as { next: Warm };
    const baselineSlot = lane0.next;
    lane0.next = warm();
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
          lane.next = warm();
          const folder = join(root, `kill-${index}`);
          await mkdir(folder);
          const delay = delays[index] ?? 0;
          const outcome = await runOnce(slot, folder, delay);
          figures.kills += 1;
          const where = `ai-sdk kill ${index} after ${delay} ms`;
          if (outcome.signal === 'SIGKILL') figures.bySigkill += 1;
          else
            breaches.failed.push(`${where}: the process ended by ${outcome.signal}, not SIGKILL`);
          await checkKill(folder, where, figures, breaches);
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
