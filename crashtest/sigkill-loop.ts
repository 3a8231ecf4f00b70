import { type ChildProcess, fork } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { recordedOutcome } from '../src/subagents/child-outcome.ts';
import { nodeFileSystem } from '../src/transcript/file-system.ts';
import { peek } from '../src/transcript/peek.ts';
import { seededRandom } from '../test/support/seeded-random.ts';
import { type Execution, newWorld } from './agents.ts';
import { checkImage, type ImageFiles } from './crash-images.ts';
import {
  acknowledgedPrefix,
  type BreachFigures,
  noPartBreaches,
  tallyBreaches,
} from './invariants.ts';
import { SCENARIOS } from './scenarios.ts';

/*
 * Real kills (RocksDB's blackbox crash test): a process runs the agent tree on the real file
 * system and is sent SIGKILL at a random moment (seeded, logged); the tree is then revived on
 * the real file system, run to completion and checked like every crash image. Processes are
 * started ahead of time (one warming while another runs), so a kill costs a run, not a start.
 */

/** The figures of the SIGKILL loop. */
export interface KillFigures extends BreachFigures {
  kills: number;
  /** Kills whose process exited by SIGKILL (must be all). */
  bySigkill: number;
  /** Kills that landed before the tree had finished. */
  midRun: number;
  baselineMilliseconds: number;
  failures: string[];
  delays: number[];
}

const childScript = fileURLToPath(new URL('./sigkill-child.ts', import.meta.url));

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

function realFiles(folder: string): ImageFiles {
  const list = async (): Promise<string[]> =>
    (await readdir(folder, { recursive: true })).map((name) => join(folder, name)).sort();
  return {
    transcripts: async () => (await list()).filter((path) => path.endsWith('.jsonl')),
    contents: async () => {
      const contents = new Map<string, Buffer>();
      for (const path of await list()) {
        try {
          contents.set(path, await readFile(path));
        } catch {
          // A folder.
        }
      }
      return contents;
    },
  };
}

async function runOnce(
  slot: Warm,
  folder: string,
  delay: number | null,
): Promise<{ signal: NodeJS.Signals | null; done: boolean; milliseconds: number }> {
  await slot.ready;
  const began = performance.now();
  let done = false;
  const finished = new Promise<void>((resolve) => {
    slot.child.once('message', () => {
      done = true;
      resolve();
    });
    // A process that died by itself is not a kill: the caller sees its signal is not SIGKILL.
    slot.exited.then(() => resolve());
  });
  if (slot.child.connected) slot.child.send({ type: 'go', folder });
  if (delay === null) await finished;
  else await Promise.race([finished, new Promise((resolve) => setTimeout(resolve, delay))]);
  const milliseconds = performance.now() - began;
  slot.child.kill('SIGKILL');
  return { signal: await slot.exited, done, milliseconds };
}

/**
 * Kill `kills` tree runs at random moments, revive and check each.
 *
 * @example
 * const figures = await runSigkillLoop({ kills: 200, lanes: 2, seed: 1 });
 */
export async function runSigkillLoop(options: {
  kills: number;
  lanes: number;
  seed: number;
}): Promise<KillFigures> {
  const random = seededRandom(options.seed);
  const scenario = SCENARIOS.find((entry) => entry.name === 'tree');
  if (scenario === undefined) throw new Error('no tree scenario');
  const root = await mkdtemp(join(tmpdir(), 'crashtest-kill-'));
  const figures: KillFigures = {
    kills: 0,
    bySigkill: 0,
    midRun: 0,
    baselineMilliseconds: 0,
    lost: 0,
    doubled: 0,
    pairing: 0,
    throws: 0,
    failed: 0,
    failures: [],
    delays: [],
  };
  const breaches = noPartBreaches();
  const lanes = Array.from({ length: options.lanes }, () => ({ next: warm() }));
  try {
    // A run left alone, to learn how long a tree takes: kills fall within that span.
    const baselineFolder = join(root, 'baseline');
    await mkdir(baselineFolder);
    const lane0 = lanes[0] as { next: Warm };
    const baselineSlot = lane0.next;
    lane0.next = warm();
    const baseline = await runOnce(baselineSlot, baselineFolder, null);
    figures.baselineMilliseconds = Math.round(baseline.milliseconds);
    const delays = Array.from(
      { length: options.kills },
      () => Math.round(random() * baseline.milliseconds * 1.1 * 10) / 10,
    );
    figures.delays = delays;
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
          const where = `kill ${index} after ${delay} ms`;
          if (outcome.signal === 'SIGKILL') figures.bySigkill += 1;
          else
            breaches.failed.push(`${where}: the process ended by ${outcome.signal}, not SIGKILL`);
          const files = realFiles(folder);
          const acknowledged = new Map<string, Buffer>();
          let finished = 0;
          const paths = await files.transcripts();
          for (const [path, bytes] of await files.contents()) {
            if (!path.endsWith('.jsonl')) continue;
            acknowledged.set(path, acknowledgedPrefix(bytes));
            const read = await peek(path);
            if (read.ok && recordedOutcome(read.records)?.status === 'finished') finished += 1;
          }
          if (paths.length === 0 || finished < paths.length) figures.midRun += 1;
          const log = await readFile(join(folder, 'executions.log'), 'utf8').catch(() => '');
          const world = newWorld();
          world.executions = log
            .split('\n')
            .filter((line) => line !== '')
            .map((line) => JSON.parse(line) as Execution);
          await checkImage(
            {
              start: { fileSystem: nodeFileSystem, world },
              scenario,
              acknowledged,
              where,
              allowUnreadable: false,
              files,
            },
            breaches,
          );
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
