import { type ChildProcess, fork } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { peek } from '../src/transcript/peek.ts';
import { seededRandom } from '../test/support/seeded-random.ts';
import { crashedStart, freshRecording, ROOT } from './scenarios.ts';

/*
 * Several processes revive one interrupted transcript at the same moment, round after round:
 * exactly one must win (`ok`), the others must be told `running`, and the transcript must end
 * with exactly one `run-revived`. The revivers are long-lived processes driven over IPC.
 */

/** The figures of the race test. */
export interface RaceFigures {
  rounds: number;
  workers: number;
  /** Rounds with exactly one winner and one run-revived. */
  clean: number;
  failed: number;
  losers: Map<string, number>;
  failures: string[];
}

const worker = fileURLToPath(new URL('./race-worker.ts', import.meta.url));

function reply<T>(child: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`a race worker exited (${code})`));
    child.once('exit', onExit);
    child.once('message', (message) => {
      child.off('exit', onExit);
      resolve(message as T);
    });
  });
}

/** The interrupted transcript every round revives: a parallel run cut by a power failure. */
async function interruptedTranscript(): Promise<Buffer> {
  const recording = await freshRecording('parallel', 'fsync');
  const index = recording.snapshots.findIndex(
    (entry) => /^sync \/runs\/main/.test(entry.snapshot.label) && entry.executions > 0,
  );
  const start = crashedStart(recording, index, () => ({ kind: 'dropped' }));
  return start.fileSystem.fileBytes(ROOT) as Buffer;
}

/**
 * Run `rounds` races between `workers` revivers.
 *
 * @example
 * const figures = await runReviverRace({ rounds: 500, workers: 4, seed: 1 });
 */
export async function runReviverRace(options: {
  rounds: number;
  workers: number;
  seed: number;
}): Promise<RaceFigures> {
  const random = seededRandom(options.seed);
  const transcript = await interruptedTranscript();
  const folder = await mkdtemp(join(tmpdir(), 'crashtest-race-'));
  const children = Array.from({ length: options.workers }, () =>
    fork(worker, [], {
      execPath: process.execPath,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  const figures: RaceFigures = {
    rounds: 0,
    workers: options.workers,
    clean: 0,
    failed: 0,
    losers: new Map(),
    failures: [],
  };
  try {
    await Promise.all(children.map((child) => reply(child)));
    for (let round = 0; round < options.rounds; round += 1) {
      const path = join(folder, `r${round}`, 'main.jsonl');
      await mkdir(join(folder, `r${round}`), { recursive: true });
      await writeFile(path, transcript, { mode: 0o600 });
      const answers = await Promise.all(
        children.map((child) => {
          const answer = reply<{ ok: boolean; reason?: string; detail?: string }>(child);
          child.send({ type: 'revive', path, spin: random() * 2 });
          return answer;
        }),
      );
      figures.rounds += 1;
      const winners = answers.flatMap((answer, index) => (answer.ok ? [index] : []));
      for (const answer of answers) {
        if (!answer.ok)
          figures.losers.set(
            answer.reason ?? '?',
            (figures.losers.get(answer.reason ?? '?') ?? 0) + 1,
          );
      }
      await Promise.all(
        winners.map((index) => {
          const child = children[index] as ChildProcess;
          const released = reply(child);
          child.send({ type: 'release' });
          return released;
        }),
      );
      const read = await peek(path);
      const revivals = read.ok
        ? read.records.filter((record) => record.type === 'run-revived').length
        : -1;
      const losersOk = answers.every((answer) => answer.ok || answer.reason === 'running');
      if (winners.length === 1 && revivals === 1 && losersOk) figures.clean += 1;
      else {
        figures.failed += 1;
        if (figures.failures.length < 10) {
          figures.failures.push(
            `round ${round}: ${winners.length} winners, ${revivals} run-revived, answers ${JSON.stringify(answers)}`,
          );
        }
      }
      await rm(join(folder, `r${round}`), { recursive: true, force: true });
    }
  } finally {
    for (const child of children) child.kill('SIGKILL');
    await rm(folder, { recursive: true, force: true });
  }
  return figures;
}
