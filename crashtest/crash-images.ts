import { createHash } from 'node:crypto';
import { Revival } from '../src/revival/index.ts';
import type { FileSystem } from '../src/transcript/file-system.ts';
import { peek } from '../src/transcript/peek.ts';
import { seededRandom } from '../test/support/seeded-random.ts';
import { newWorld, type World } from './agents.ts';
import {
  acknowledgedPrefix,
  type BreachFigures,
  checkInvariants,
  FIGURES,
  type FinalTranscript,
  noPartBreaches,
  type PartBreaches,
  tallyBreaches,
} from './invariants.ts';
import {
  crashFiles,
  type Fate,
  type NameFate,
  RecordingFileSystem,
  type Snapshot,
} from './recording-file-system.ts';
import { reviveTree } from './revive-tree.ts';
import { record, type Scenario, type Start, transcriptsOf, treeOptions } from './scenarios.ts';

/*
 * The crash-image test (SQLite's TH3 snapshot loop with test6.c's damage): run a scenario on
 * the recording file system, and at every boundary build the images a power cut could leave —
 * every unsynced write kept, dropped, torn at a byte or zero-filled — then inspect, revive to
 * completion and check the invariants on each distinct image.
 */

/** The figures of one scenario. */
export interface ImageFigures extends BreachFigures {
  scenario: string;
  boundaries: number;
  /** Distinct images checked. */
  images: number;
  /** Images whose damage is a reordering of unsynced appends (a later one kept, an earlier not). */
  reordered: number;
  /** Images in which at least one transcript was revived. */
  revived: number;
  /** Reordered images that left a transcript damaged mid-file: refused, nothing lost. */
  refusedDamaged: number;
  milliseconds: number;
}

/** Options of {@link runScenarioImages}. */
export interface ImageOptions {
  seed: number;
  /** Random (reordering) images per boundary, besides the systematic ones (default 4). */
  reorderedPerBoundary?: number;
  /** Check only every nth boundary (default 1: all). */
  stride?: number;
  /** Random byte positions a systematic image tears each unsynced write at (default 2). */
  tornPerWrite?: number;
  /** Only count the distinct images, check none (to size a run). */
  countOnly?: boolean;
  /** Images checked at once (default 6). */
  concurrency?: number;
  /** Called with each breach, for the log. */
  onBreach?: (figure: string, line: string) => void;
}

interface Image {
  files: Map<string, Buffer>;
  reordered: boolean;
}

const KEPT: Fate = { kind: 'kept' };
const DROPPED: Fate = { kind: 'dropped' };

/** The images of one boundary: systematic prefixes plus seeded random ones. */
export function imagesOf(
  snapshot: Snapshot,
  crash: Scenario['crash'],
  random: () => number,
  extra: number,
  tornPerWrite: number,
): Image[] {
  if (crash === 'process')
    return [{ files: crashFiles(snapshot, () => KEPT, 'all-current'), reordered: false }];
  const images: Image[] = [
    { files: crashFiles(snapshot, () => KEPT, 'all-current'), reordered: false },
    { files: crashFiles(snapshot, () => DROPPED, 'durable-only'), reordered: false },
  ];
  const names = (): NameFate => (random() < 0.5 ? 'durable-only' : 'all-current');
  for (const [path, state] of snapshot.files) {
    state.pending.forEach((change, cut) => {
      const fates: Fate[] = [DROPPED, { kind: 'zeroed' }];
      if (change.kind === 'write' && change.bytes.length > 1) {
        for (let count = 0; count < tornPerWrite; count += 1) {
          fates.push({ kind: 'torn', at: 1 + Math.floor(random() * (change.bytes.length - 1)) });
        }
        // Everything but the newline: a line that looks whole and is not terminated.
        fates.push({ kind: 'torn', at: change.bytes.length - 1 });
      }
      if (change.kind === 'truncate') fates.splice(1);
      // The other files' unsynced writes all landed, or none did: cross-file order is free.
      for (const others of [KEPT, DROPPED]) {
        for (const fate of fates) {
          const files = crashFiles(
            snapshot,
            (file, _change, index) =>
              file !== path ? others : index < cut ? KEPT : index === cut ? fate : DROPPED,
            names(),
          );
          images.push({ files, reordered: false });
        }
      }
    });
  }
  const pendingWrites = [...snapshot.files.values()].reduce(
    (sum, state) => sum + state.pending.length,
    0,
  );
  if (pendingWrites > 1) {
    for (let count = 0; count < extra; count += 1) {
      let reordered = false;
      const seen = new Map<string, boolean>();
      const files = crashFiles(
        snapshot,
        (file, change) => {
          const pick = random();
          const fate: Fate =
            pick < 0.3
              ? KEPT
              : pick < 0.6
                ? DROPPED
                : pick < 0.8 || change.kind === 'truncate'
                  ? { kind: 'zeroed' }
                  : {
                      kind: 'torn',
                      at: Math.floor(
                        random() * (change.kind === 'write' ? change.bytes.length : 1),
                      ),
                    };
          // Data of a later write on disk while an earlier one did not wholly land is a
          // reordering; zeros (size without data) after a torn write are not.
          const someData = fate.kind === 'kept' || (fate.kind === 'torn' && fate.at > 0);
          if (someData && seen.get(file) === true) reordered = true;
          if (fate.kind !== 'kept') seen.set(file, true);
          return change.kind === 'truncate' && fate.kind === 'zeroed' ? KEPT : fate;
        },
        names(),
      );
      images.push({ files, reordered });
    }
  }
  return images;
}

const NAMETAG = /\.owner(\.[0-9a-f]+\.tmp)?$/;
const RANDOM_TEMPORARY = /\.[0-9a-f]{16}\.tmp$/;

export function digestOf(files: Map<string, Buffer>): string {
  const hash = createHash('sha1');
  for (const [path, bytes] of files) {
    // A nametag only names its holder, and a crash image has no holder.
    if (NAMETAG.test(path)) continue;
    // A temporary file's name is random: images that differ only there are the same image.
    hash.update(path.replace(RANDOM_TEMPORARY, '.<random>.tmp'));
    hash.update('\0');
    hash.update(createHash('sha1').update(bytes).digest());
  }
  return hash.digest('hex');
}

export function acknowledgedAt(snapshot: Snapshot, crash: Scenario['crash']): Map<string, Buffer> {
  const files =
    crash === 'power'
      ? crashFiles(snapshot, () => DROPPED, 'durable-only')
      : crashFiles(snapshot, () => KEPT, 'all-current');
  const acknowledged = new Map<string, Buffer>();
  for (const [path, bytes] of files)
    if (path.endsWith('.jsonl')) acknowledged.set(path, acknowledgedPrefix(bytes));
  return acknowledged;
}

function timeout<T>(promise: Promise<T>, milliseconds: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} did not end within ${milliseconds} ms`)),
      milliseconds,
    );
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

/** How the checker lists and reads the files of an image. */
export interface ImageFiles {
  transcripts(): Promise<string[]>;
  contents(): Promise<Map<string, Buffer>>;
}

function memoryFiles(fileSystem: RecordingFileSystem): ImageFiles {
  return {
    transcripts: async () => transcriptsOf(fileSystem),
    contents: async () => {
      const contents = new Map<string, Buffer>();
      for (const path of fileSystem.listFiles())
        contents.set(path, fileSystem.fileBytes(path) ?? Buffer.alloc(0));
      return contents;
    },
  };
}

/**
 * Inspect, revive to completion and check one crash image. Exported for the I/O-error loop
 * and the SIGKILL loop, which check the state their faults leave the same way.
 *
 * @example
 * await checkImage({ start, scenario, acknowledged, where: 'tree#12', allowUnreadable: false }, breaches);
 */
export async function checkImage(
  input: {
    start: { fileSystem: FileSystem; world: World };
    scenario: Scenario;
    acknowledged: Map<string, Buffer>;
    where: string;
    allowUnreadable: boolean;
    /** Where the files are, when not in a RecordingFileSystem (the SIGKILL loop's folder). */
    files?: ImageFiles;
  },
  breaches: PartBreaches,
): Promise<{ revived: number; unreadable: number }> {
  const { start, scenario, where } = input;
  const files = input.files ?? memoryFiles(start.fileSystem as RecordingFileSystem);
  const paths = await files.transcripts();
  for (const path of paths) {
    try {
      await Revival.inspect({
        path,
        maxRevivals: scenario.maxRevivals,
        fileSystem: start.fileSystem,
      });
    } catch (error) {
      breaches.throws.push(`${where}: inspect ${path} threw ${String(error)}`);
    }
  }
  let revived = 0;
  try {
    const outcome = await timeout(
      reviveTree(paths, treeOptions(scenario, start)),
      20_000,
      'the revival',
    );
    revived = outcome.revived;
    for (const problem of outcome.problems) breaches.failed.push(`${where}: ${problem}`);
  } catch (error) {
    breaches.throws.push(
      `${where}: revival threw ${error instanceof Error ? error.stack : String(error)}`,
    );
    return { revived, unreadable: 0 };
  }
  const transcripts: FinalTranscript[] = [];
  let unreadable = 0;
  for (const path of await files.transcripts()) {
    const read = await peek(path, { fileSystem: start.fileSystem });
    const found = await Revival.inspect({
      path,
      maxRevivals: scenario.maxRevivals,
      fileSystem: start.fileSystem,
    });
    const state = found.revivable ? 'revivable' : (found.reason ?? 'unknown');
    if (read.ok) transcripts.push({ path, records: read.records, state });
    else {
      unreadable += 1;
      transcripts.push({ path, records: null, unreadable: read.detail, state });
    }
  }
  const finalBytes = await files.contents();
  checkInvariants(
    {
      where,
      acknowledged: input.acknowledged,
      finalBytes,
      transcripts,
      executions: start.world.executions,
      maxRevivals: scenario.maxRevivals,
      allowUnreadable: input.allowUnreadable,
      ...(scenario.allowedStates === undefined ? {} : { allowedStates: scenario.allowedStates }),
    },
    breaches,
  );
  for (const { violation } of start.world.violations) {
    breaches.pairing.push(
      `${where}: a prompt broke pairing: ${violation.code} ${violation.message}`,
    );
  }
  return { revived, unreadable };
}

/**
 * Run one scenario and check every distinct crash image of every boundary.
 *
 * @example
 * const figures = await runScenarioImages(SCENARIOS[0], { seed: 1 });
 */
export async function runScenarioImages(
  scenario: Scenario,
  options: ImageOptions,
): Promise<ImageFigures> {
  const began = performance.now();
  const random = seededRandom(options.seed);
  const figures: ImageFigures = {
    scenario: scenario.name,
    boundaries: 0,
    images: 0,
    reordered: 0,
    revived: 0,
    refusedDamaged: 0,
    lost: 0,
    doubled: 0,
    pairing: 0,
    throws: 0,
    failed: 0,
    milliseconds: 0,
  };
  const breaches = noPartBreaches();
  const start: Start =
    scenario.prepare === undefined
      ? { fileSystem: new RecordingFileSystem(), world: newWorld() }
      : await scenario.prepare();
  const recording = await record(start, () => scenario.act(start, treeOptions(scenario, start)));
  figures.boundaries = recording.snapshots.length;
  // The undisturbed run must itself end well, or its images prove nothing.
  const clean = await checkImage(
    {
      start: {
        fileSystem: RecordingFileSystem.fromFiles(
          crashFiles(recording.snapshots.at(-1)?.snapshot as Snapshot, () => KEPT, 'all-current'),
        ),
        world: { ...newWorld(), executions: [...recording.world.executions] },
      },
      scenario,
      acknowledged: new Map(),
      where: `${scenario.name}/clean`,
      allowUnreadable: false,
    },
    breaches,
  );
  if (clean.revived !== 0 && scenario.prepare === undefined) {
    breaches.failed.push(`${scenario.name}/clean: the undisturbed run left something to revive`);
  }
  const seen = new Set<string>();
  const stride = options.stride ?? 1;
  const work: (() => Promise<void>)[] = [];
  for (const [index, entry] of recording.snapshots.entries()) {
    if (index % stride !== 0 && index !== recording.snapshots.length - 1) continue;
    const acknowledged = acknowledgedAt(entry.snapshot, scenario.crash);
    for (const image of imagesOf(
      entry.snapshot,
      scenario.crash,
      random,
      options.reorderedPerBoundary ?? 4,
      options.tornPerWrite ?? 2,
    )) {
      const digest = digestOf(image.files);
      if (seen.has(digest)) continue;
      seen.add(digest);
      figures.images += 1;
      if (image.reordered) figures.reordered += 1;
      if (options.countOnly === true) continue;
      work.push(async () => {
        const world = newWorld();
        world.executions = recording.world.executions.slice(0, entry.executions);
        const result = await checkImage(
          {
            start: { fileSystem: RecordingFileSystem.fromFiles(image.files), world },
            scenario,
            acknowledged,
            where: `${scenario.name}#${index} ${entry.snapshot.label}${image.reordered ? ' (reordered)' : ''}`,
            allowUnreadable: image.reordered,
          },
          breaches,
        );
        if (result.revived > 0) figures.revived += 1;
        if (result.unreadable > 0) figures.refusedDamaged += 1;
      });
    }
  }
  // The model turns of the AI SDK wait on the event loop more than they compute: checking
  // several images at once keeps the processor busy.
  const lanes = Array.from({ length: options.concurrency ?? 6 }, async () => {
    for (let next = work.shift(); next !== undefined; next = work.shift()) await next();
  });
  await Promise.all(lanes);
  tallyBreaches(figures, breaches);
  if (options.onBreach !== undefined) {
    for (const figure of FIGURES) {
      for (const line of breaches[figure]) options.onBreach(figure, line);
    }
  }
  figures.milliseconds = Math.round(performance.now() - began);
  return figures;
}
