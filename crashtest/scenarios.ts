import type { FileSystem } from '../src/transcript/file-system.ts';
import { Session } from '../src/transcript/session.ts';
import type { Durability } from '../src/transcript/session.ts';
import { type MainPlan, newWorld, type World } from './agents.ts';
import {
  crashFiles,
  type Fate,
  type NameFate,
  type PendingChange,
  RecordingFileSystem,
  type Snapshot,
} from './recording-file-system.ts';
import { reviveTree, runTree, type TreeOptions } from './revive-tree.ts';

/*
 * The scenarios of the crash-image test. Each runs some work on a RecordingFileSystem — a
 * fresh run, or a revival of a state an earlier crash left (`prepare`) — and the harness
 * crashes it at every boundary. `crash: 'power'` images choose a fate for every unsynced
 * write; `crash: 'process'` images (durability `flush` and `none`, which promise nothing
 * against a power cut) keep everything written, as the page cache does when a process dies.
 */

/** The root transcript of every scenario. Its folder does not exist until the run makes it. */
export const ROOT = '/runs/main.jsonl';

/** Where a scenario starts from. */
export interface Start {
  fileSystem: RecordingFileSystem;
  world: World;
}

/** One scenario. */
export interface Scenario {
  name: string;
  /** One line: what it exercises. */
  what: string;
  durability: Durability;
  crash: 'power' | 'process';
  maxRevivals: number;
  compactAt?: number;
  checkpointBytes?: number;
  /** States a transcript may end in besides finished/empty (the cap scenario: revival-cap). */
  allowedStates?: string[];
  prepare?: () => Promise<Start>;
  act: (start: Start, options: TreeOptions) => Promise<void>;
}

/** A deterministic clock: one second per call from 2026-01-01. */
export function steppingClock(): () => Date {
  let now = Date.UTC(2026, 0, 1);
  return () => {
    const date = new Date(now);
    now += 1000;
    return date;
  };
}

/** The tree options of a scenario over a file system and world. */
export function treeOptions(
  scenario: Scenario,
  start: { fileSystem: FileSystem; world: World },
): TreeOptions {
  const options: TreeOptions = {
    fileSystem: start.fileSystem,
    world: start.world,
    durability: scenario.durability,
    maxRevivals: scenario.maxRevivals,
    clock: steppingClock(),
  };
  if (scenario.compactAt !== undefined) options.compactAt = scenario.compactAt;
  if (scenario.checkpointBytes !== undefined) options.checkpointBytes = scenario.checkpointBytes;
  return options;
}

/** Every transcript on a file system. */
export function transcriptsOf(fileSystem: RecordingFileSystem): string[] {
  return fileSystem.listFiles().filter((path) => path.endsWith('.jsonl'));
}

/** A recorded run: the boundaries it passed and how many executions had happened at each. */
export interface Recording {
  snapshots: { snapshot: Snapshot; executions: number }[];
  world: World;
}

/** Run `work` on `start`, recording a snapshot at every boundary. */
export async function record(start: Start, work: () => Promise<unknown>): Promise<Recording> {
  const snapshots: Recording['snapshots'] = [
    { snapshot: start.fileSystem.snapshot('start'), executions: start.world.executions.length },
  ];
  start.fileSystem.onBoundary = (snapshot) => {
    snapshots.push({ snapshot, executions: start.world.executions.length });
  };
  try {
    await work();
  } finally {
    start.fileSystem.onBoundary = null;
  }
  return { snapshots, world: start.world };
}

/** The state a crash at `snapshot` leaves, as a new start (its files all durable). */
export function crashedStart(
  recording: Recording,
  index: number,
  fateOf: (path: string, change: PendingChange, index: number, count: number) => Fate,
  names: NameFate = 'durable-only',
): Start {
  const entry = recording.snapshots[Math.max(0, Math.min(index, recording.snapshots.length - 1))];
  if (entry === undefined) throw new Error('no snapshot to crash at');
  const { snapshot } = entry;
  const counts = new Map<string, number>();
  for (const [path, state] of snapshot.files) counts.set(path, state.pending.length);
  const files = crashFiles(
    snapshot,
    (path, change, position) => fateOf(path, change, position, counts.get(path) ?? 0),
    names,
  );
  const world = newWorld();
  world.executions = recording.world.executions.slice(0, entry.executions);
  return { fileSystem: RecordingFileSystem.fromFiles(files), world };
}

const dropped: Fate = { kind: 'dropped' };

/** A fresh run of `plan`, recorded. */
export async function freshRecording(
  plan: MainPlan,
  durability: Durability,
  extra: Partial<TreeOptions> = {},
): Promise<Recording> {
  const start: Start = { fileSystem: new RecordingFileSystem(), world: newWorld() };
  const options: TreeOptions = {
    fileSystem: start.fileSystem,
    world: start.world,
    durability,
    maxRevivals: 3,
    clock: steppingClock(),
    ...extra,
  };
  return record(start, () => runTree(ROOT, plan, options));
}

/** The index of the first snapshot at or after `fraction` of the run whose label matches. */
function boundaryAt(recording: Recording, fraction: number, label: RegExp): number {
  const from = Math.floor(recording.snapshots.length * fraction);
  for (let index = from; index < recording.snapshots.length; index += 1) {
    if (label.test(recording.snapshots[index]?.snapshot.label ?? '')) return index;
  }
  return from;
}

async function reviveStart(start: Start, options: TreeOptions): Promise<void> {
  await reviveTree(transcriptsOf(start.fileSystem), options);
}

/** A tree crashed mid-run by a power cut (unsynced writes lost). */
async function crashedTree(plan: MainPlan, fraction: number): Promise<Start> {
  const recording = await freshRecording(plan, 'fsync');
  return crashedStart(
    recording,
    boundaryAt(recording, fraction, /^sync \/runs\/main/),
    () => dropped,
  );
}

/** A tree whose main transcript ends in a torn line (its last unsynced write cut in half). */
async function tornTree(): Promise<Start> {
  const recording = await freshRecording('tree', 'fsync');
  // Torn while its workers are at work: the first write to main after the workers' transcripts
  // were created, so that the revival repairs main and revives the workers before it. Chosen
  // by what has happened rather than by a fraction of the run, because how far the workers get
  // between two writes of main's depends on how fast a model call is.
  const labels = recording.snapshots.map((entry) => entry.snapshot.label);
  const workersCreated = labels.findLastIndex((label) =>
    label.startsWith('open create /runs/main.agents/'),
  );
  const index = labels.findIndex(
    (label, at) => at > workersCreated && label.startsWith('write /runs/main.jsonl '),
  );
  if (workersCreated === -1 || index === -1)
    throw new Error('the tree run never spawned its workers');
  return crashedStart(recording, index, (path, change, position, count) => {
    if (path !== ROOT || change.kind !== 'write') return { kind: 'kept' };
    return position === count - 1
      ? { kind: 'torn', at: Math.floor(change.bytes.length / 2) }
      : { kind: 'kept' };
  });
}

/** The torn tree, crashed again in the middle of its repair (after the boundary `label`). */
async function crashedInRepair(label: RegExp, fate: Fate): Promise<Start> {
  const start = await tornTree();
  const options: TreeOptions = {
    fileSystem: start.fileSystem,
    world: start.world,
    durability: 'fsync',
    maxRevivals: 3,
    clock: steppingClock(),
  };
  const recording = await record(start, () => reviveStart(start, options));
  const index = recording.snapshots.findIndex((entry) => label.test(entry.snapshot.label));
  if (index < 0) throw new Error(`the repair passed no boundary ${label}`);
  return crashedStart(recording, index, () => fate, 'durable-only');
}

const fresh =
  (plan: MainPlan) =>
  async (_start: Start, options: TreeOptions): Promise<void> => {
    await runTree(ROOT, plan, options);
  };

const revive = async (start: Start, options: TreeOptions): Promise<void> =>
  reviveStart(start, options);

/**
 * The scenarios, in the order the harness runs them.
 *
 * @example
 * for (const scenario of SCENARIOS) await runScenarioImages(scenario, { seed });
 */
export const SCENARIOS: Scenario[] = [
  {
    name: 'parallel',
    what: 'a single run (folder made, transcript created) with three parallel calls in one turn',
    durability: 'fsync',
    crash: 'power',
    maxRevivals: 3,
    act: fresh('parallel'),
  },
  {
    name: 'tree',
    what: 'a parent spawning two children in one turn and joining them',
    durability: 'fsync',
    crash: 'power',
    maxRevivals: 3,
    act: fresh('tree'),
  },
  {
    name: 'deep',
    what: 'a parent, a lead child and its grandchild, joins at two levels',
    durability: 'fsync',
    crash: 'power',
    maxRevivals: 3,
    act: fresh('deep'),
  },
  {
    name: 'background',
    what: 'a child that ends while its parent works: delivered in the background',
    durability: 'fsync',
    crash: 'power',
    maxRevivals: 3,
    act: fresh('background'),
  },
  {
    name: 'compaction',
    what: 'six sequential side effects with a token budget that compacts mid-run',
    durability: 'fsync',
    crash: 'power',
    maxRevivals: 3,
    compactAt: 260,
    act: fresh('serial'),
  },
  {
    name: 'revive-itself',
    what: 'reviving a tree a power cut interrupted (children first), then running it to the end',
    durability: 'fsync',
    crash: 'power',
    maxRevivals: 3,
    prepare: () => crashedTree('tree', 0.45),
    act: revive,
  },
  {
    name: 'checkpoints',
    what: 'reviving an interrupted sequential run whose session checkpoints every 300 bytes',
    durability: 'fsync',
    crash: 'power',
    maxRevivals: 3,
    checkpointBytes: 300,
    prepare: () => crashedTree('serial', 0.3),
    act: revive,
  },
  {
    name: 'cap',
    what: 'repeated crashes up to the revival cap (2): the second revival crashed at every boundary',
    durability: 'fsync',
    crash: 'power',
    maxRevivals: 2,
    allowedStates: ['revival-cap'],
    prepare: async () => {
      const first = await crashedTree('serial', 0.3);
      const options: TreeOptions = {
        fileSystem: first.fileSystem,
        world: first.world,
        durability: 'fsync',
        maxRevivals: 2,
        clock: steppingClock(),
      };
      const recording = await record(first, () => reviveStart(first, options));
      return crashedStart(
        recording,
        boundaryAt(recording, 0.4, /^sync \/runs\/main/),
        () => dropped,
      );
    },
    act: revive,
  },
  {
    name: 'torn-tail-repair',
    what: 'reviving a tree whose transcript ends in half a line: sidecar, truncate, revive, run',
    durability: 'fsync',
    crash: 'power',
    maxRevivals: 3,
    prepare: tornTree,
    act: revive,
  },
  {
    name: 'crash-in-repair-renamed',
    what: 'a second crash during the repair, after the sidecar was renamed (power cut)',
    durability: 'fsync',
    crash: 'power',
    maxRevivals: 3,
    prepare: () => crashedInRepair(/^rename /, dropped),
    act: revive,
  },
  {
    name: 'crash-in-repair-truncated',
    what: 'a second crash during the repair, after the unsynced truncation (process death)',
    durability: 'fsync',
    crash: 'power',
    maxRevivals: 3,
    prepare: () => crashedInRepair(/^truncate \/runs\/main\.jsonl/, { kind: 'kept' }),
    act: revive,
  },
  {
    name: 'first-append-after-repair',
    what: 'open-for-append of a torn transcript: the repair and its first record, then revival',
    durability: 'fsync',
    crash: 'power',
    maxRevivals: 3,
    prepare: tornTree,
    act: async (start) => {
      const session = await Session.open(ROOT, {
        fileSystem: start.fileSystem,
        clock: steppingClock(),
      });
      await session.close();
    },
  },
  {
    name: 'durability-flush',
    what: 'the tree under durability flush, killed at every boundary (process death)',
    durability: 'flush',
    crash: 'process',
    maxRevivals: 3,
    act: fresh('tree'),
  },
  {
    name: 'durability-none',
    what: 'the tree under durability none, killed at every boundary (process death)',
    durability: 'none',
    crash: 'process',
    maxRevivals: 3,
    act: fresh('tree'),
  },
];
