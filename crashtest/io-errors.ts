import { Revival } from '../src/revival/index.ts';
import { peek } from '../src/transcript/peek.ts';
import { Session } from '../src/transcript/session.ts';
import { TranscriptError } from '../src/transcript/transcript-error.ts';
import { fileSystemError } from '../src/testing/index.ts';
import { newWorld } from './agents.ts';
import { checkImage } from './crash-images.ts';
import {
  acknowledgedPrefix,
  type BreachFigures,
  noPartBreaches,
  type PartBreaches,
  tallyBreaches,
} from './invariants.ts';
import { RecordingFileSystem } from './recording-file-system.ts';
import { reviveTree, runTree } from './revive-tree.ts';
import {
  ROOT,
  SCENARIOS,
  type Scenario,
  type Start,
  transcriptsOf,
  treeOptions,
} from './scenarios.ts';

/*
 * SQLite's I/O-error loop: fail the Nth I/O call, for N = 1, 2, … until the work completes
 * without reaching call N, once (the next call works again) and forever (every call from the
 * Nth on fails). After each: whatever threw must be a clear error (a TranscriptError, or a run
 * result naming the cause); nothing acknowledged before the fault is gone; and, with the fault
 * lifted, every transcript reads (a torn tail at most, never damage mid-file), reopens, and
 * revives to completion with the invariants intact.
 */

/** What fails. */
export type IoFault = 'eio' | 'enospc' | 'short-write' | 'sync-fails';

const FAULTS: IoFault[] = ['eio', 'enospc', 'short-write', 'sync-fails'];

/** Which calls a fault can hit. */
function targets(fault: IoFault, operation: string): boolean {
  if (fault === 'eio')
    return operation !== 'close' && operation !== 'isLocked' && operation !== 'tryLock';
  if (fault === 'sync-fails') return operation === 'sync' || operation === 'syncFolder';
  return operation === 'write';
}

/** The figures of the I/O-error loop. */
export interface IoFigures extends BreachFigures {
  runs: number;
  /** Runs in which the fault fired (the rest completed before call N: the loop's end). */
  fired: number;
  /** Runs that ended with a clear refusal (a failed run or a thrown TranscriptError). */
  refused: number;
  failures: string[];
}

interface Work {
  name: string;
  scenario: Scenario;
  prepare: () => Promise<Start>;
  act: (start: Start) => Promise<string[]>;
}

const byName = (name: string): Scenario => {
  const found = SCENARIOS.find((scenario) => scenario.name === name);
  if (found === undefined) throw new Error(`no scenario ${name}`);
  return found;
};

/** The work the loop fails: a fresh run, and a revival that repairs a torn tail first. */
export function ioWork(long: boolean): Work[] {
  const plans = long ? (['parallel', 'tree'] as const) : (['parallel'] as const);
  const works: Work[] = plans.map((plan) => {
    const scenario = byName(plan === 'parallel' ? 'parallel' : 'tree');
    return {
      name: `${plan} run`,
      scenario,
      prepare: async () => ({ fileSystem: new RecordingFileSystem(), world: newWorld() }),
      act: async (start) => {
        const result = await runTree(ROOT, plan, treeOptions(scenario, start));
        return result.status === 'failed' ? [result.error ?? ''] : [];
      },
    };
  });
  const torn = byName('torn-tail-repair');
  works.push({
    name: 'torn-tail revival',
    scenario: torn,
    prepare: torn.prepare as () => Promise<Start>,
    act: async (start) => {
      const outcome = await reviveTree(transcriptsOf(start.fileSystem), treeOptions(torn, start));
      return [
        ...outcome.results
          .filter((result) => result.status === 'failed')
          .map((result) => result.error ?? ''),
        ...outcome.problems,
      ];
    },
  });
  return works;
}

const CLEAR = /EIO|ENOSPC|short write|poisoned|cannot|failed/;

/**
 * Run the loop over every work, fault kind and mode.
 *
 * @example
 * const figures = await runIoErrors({ long: false });
 */
export async function runIoErrors(options: {
  long: boolean;
  /** Only these works (by name), only these faults: the reduced run. */
  works?: string[];
  faults?: IoFault[];
}): Promise<IoFigures> {
  const figures: IoFigures = {
    runs: 0,
    fired: 0,
    refused: 0,
    lost: 0,
    doubled: 0,
    pairing: 0,
    throws: 0,
    failed: 0,
    failures: [],
  };
  const breaches = noPartBreaches();
  const works = ioWork(options.long).filter((work) => options.works?.includes(work.name) ?? true);
  for (const work of works) {
    for (const fault of options.faults ?? FAULTS) {
      for (const mode of ['once', 'forever'] as const) {
        for (let nth = 1; ; nth += 1) {
          const start = await work.prepare();
          const fileSystem = start.fileSystem;
          let seen = 0;
          let fired = false;
          let acknowledged = new Map<string, Buffer>();
          fileSystem.beforeCall = (operation, path, bytes) => {
            if (!targets(fault, operation)) return undefined;
            seen += 1;
            if (seen < nth || (mode === 'once' && seen > nth)) return undefined;
            if (!fired) {
              fired = true;
              acknowledged = acknowledgedNow(fileSystem);
            }
            if (fault === 'short-write') return Math.floor((bytes ?? 0) / 2);
            throw fileSystemError(fault === 'enospc' ? 'ENOSPC' : 'EIO', operation, path);
          };
          const where = `${work.name} ${fault} ${mode} #${nth}`;
          figures.runs += 1;
          let errors: string[] = [];
          try {
            errors = await work.act(start);
          } catch (error) {
            if (TranscriptError.isInstance(error)) errors = [error.message];
            else
              breaches.throws.push(
                `${where}: threw ${error instanceof Error ? error.stack : String(error)}`,
              );
          }
          fileSystem.beforeCall = null;
          if (!fired) break;
          figures.fired += 1;
          if (errors.length > 0) figures.refused += 1;
          for (const error of errors) {
            if (!CLEAR.test(error)) breaches.failed.push(`${where}: an unclear error: ${error}`);
          }
          await checkAfterFault(start, work.scenario, acknowledged, where, breaches);
        }
      }
    }
  }
  figures.failures = tallyBreaches(figures, breaches);
  return figures;
}

/** The acknowledged (synced, valid) prefix of every transcript now. */
function acknowledgedNow(fileSystem: RecordingFileSystem): Map<string, Buffer> {
  const acknowledged = new Map<string, Buffer>();
  const snapshot = fileSystem.snapshot();
  for (const [path, state] of snapshot.files) {
    if (path.endsWith('.jsonl') && snapshot.durableNames.has(path))
      acknowledged.set(path, acknowledgedPrefix(state.durable));
  }
  return acknowledged;
}

async function checkAfterFault(
  start: Start,
  scenario: Scenario,
  acknowledged: Map<string, Buffer>,
  where: string,
  breaches: PartBreaches,
): Promise<void> {
  const fileSystem = start.fileSystem;
  for (const path of transcriptsOf(fileSystem)) {
    const read = await peek(path, { fileSystem });
    if (!read.ok) {
      // Only a transcript that never got its first record may be unreadable (empty, cut short).
      if (read.reason !== 'not-a-transcript' || (acknowledged.get(path)?.length ?? 0) > 0) {
        breaches.failed.push(`${where}: ${path} is left ${read.reason}: ${read.detail}`);
      }
      continue;
    }
    const found = await Revival.inspect({ path, maxRevivals: scenario.maxRevivals, fileSystem });
    if (found.reason === 'running')
      breaches.failed.push(`${where}: ${path} is still locked after the run`);
    try {
      const session = await Session.open(path, { fileSystem });
      await session.close();
    } catch (error) {
      breaches.failed.push(`${where}: ${path} does not reopen: ${String(error)}`);
    }
  }
  const files = new Map<string, Buffer>();
  for (const path of fileSystem.listFiles()) files.set(path, fileSystem.fileBytes(path) as Buffer);
  const world = newWorld();
  world.executions = [...start.world.executions];
  await checkImage(
    {
      start: { fileSystem: RecordingFileSystem.fromFiles(files), world },
      scenario,
      acknowledged,
      where,
      // Checked above: only a transcript that never held a record may be unreadable.
      allowUnreadable: true,
    },
    breaches,
  );
}
