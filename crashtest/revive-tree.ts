import type { RunResult } from '../src/loop/types.ts';
import { Revival } from '../src/revival/index.ts';
import { Composer } from '../src/subagents/composer.ts';
import type { FileSystem } from '../src/transcript/file-system.ts';
import type { Durability } from '../src/transcript/session.ts';
import { crashRegistry, type MainPlan, taskFor, type World } from './agents.ts';

/*
 * What an application does after a crash, and what every crash test does to each crash image:
 * inspect every transcript (children before parents), revive the revivable ones, run them to
 * the end as themselves under one composer, and wait for the whole tree.
 */

/** How a tree is run or revived. */
export interface TreeOptions {
  fileSystem: FileSystem;
  world: World;
  durability: Durability;
  maxRevivals: number;
  compactAt?: number;
  checkpointBytes?: number;
  clock?: () => Date;
}

/** What reviving a tree did. */
export interface TreeRevival {
  /** Transcripts revived and run. */
  revived: number;
  /** Why the others were left alone, by reason. */
  left: Map<string, number>;
  /** Root runs' results. */
  results: RunResult[];
  /** Things that went wrong that are bugs: a revive refused after inspect said revivable, … */
  problems: string[];
}

function composerFor(options: TreeOptions): Composer {
  return new Composer({
    registry: crashRegistry(
      options.world,
      options.compactAt === undefined ? {} : { compactAt: options.compactAt },
    ),
    fileSystem: options.fileSystem,
    durability: options.durability,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    loopDefaults: { sleep: async () => undefined, backoff: () => 0 },
    sleep: async () => undefined,
  });
}

/**
 * Start `main` on a plan and run the whole tree to its end.
 *
 * @example
 * await runTree('/runs/main.jsonl', 'tree', { fileSystem, world, durability: 'fsync', maxRevivals: 3 });
 */
export async function runTree(
  path: string,
  plan: MainPlan,
  options: TreeOptions,
): Promise<RunResult> {
  const composer = composerFor(options);
  const { run } = await composer.start({ path, agentType: 'main', task: taskFor(plan) });
  const result = await run;
  await composer.idle();
  return result;
}

/** Nesting depth of a transcript path: how many `.agents/` folders it sits in. */
export function depthOf(path: string): number {
  return path.split('.agents/').length - 1;
}

/**
 * Revive every transcript in `paths`, deepest first, and run the revived ones to the end.
 * Never throws for the transcripts' state; a refusal that contradicts inspect is a problem.
 *
 * @example
 * const revival = await reviveTree(paths, { fileSystem, world, durability: 'fsync', maxRevivals: 3 });
 */
export async function reviveTree(paths: string[], options: TreeOptions): Promise<TreeRevival> {
  const composer = composerFor(options);
  const outcome: TreeRevival = { revived: 0, left: new Map(), results: [], problems: [] };
  const ordered = [...paths].sort(
    (left, right) => depthOf(right) - depthOf(left) || (left < right ? -1 : 1),
  );
  const roots: Promise<RunResult>[] = [];
  // One claim for the whole tree, held until every revived run has ended (as the CLI does).
  const root = ordered.find((path) => depthOf(path) === 0);
  const claimed =
    root === undefined
      ? null
      : await Revival.claimTree({ path: root, fileSystem: options.fileSystem });
  if (claimed !== null && !claimed.ok) {
    outcome.problems.push(`${root}: the tree could not be claimed: ${claimed.detail}`);
    return outcome;
  }
  const treeClaim = claimed?.claim;
  for (const path of ordered) {
    const found = await Revival.inspect({
      path,
      maxRevivals: options.maxRevivals,
      fileSystem: options.fileSystem,
      ...(treeClaim === undefined ? {} : { treeClaim }),
    });
    if (!found.revivable) {
      const reason = found.reason ?? 'unknown';
      outcome.left.set(reason, (outcome.left.get(reason) ?? 0) + 1);
      if (reason !== 'finished') {
        composer.reportUnrevivable({ sessionPath: path, reason, detail: found.detail ?? reason });
      }
      continue;
    }
    const sessionOptions: { durability: Durability; checkpointBytes?: number } = {
      durability: options.durability,
    };
    if (options.checkpointBytes !== undefined)
      sessionOptions.checkpointBytes = options.checkpointBytes;
    const revived = await Revival.revive({
      path,
      agentId: found.agentId ?? '',
      maxRevivals: options.maxRevivals,
      fileSystem: options.fileSystem,
      ...(options.clock === undefined ? {} : { clock: options.clock }),
      ...(treeClaim === undefined ? {} : { treeClaim }),
      sessionOptions,
    });
    if (!revived.ok) {
      outcome.problems.push(
        `${path}: inspect said revivable, revive said ${revived.reason}: ${revived.detail}`,
      );
      composer.reportUnrevivable({
        sessionPath: path,
        reason: revived.reason,
        detail: revived.detail,
      });
      continue;
    }
    outcome.revived += 1;
    const started = await composer.resume({ session: revived.session, messages: revived.messages });
    if (depthOf(path) === 0) roots.push(started.run.result);
  }
  outcome.results = await Promise.all(roots);
  await composer.idle();
  await treeClaim?.release();
  return outcome;
}
