import type { LoopOptions, RunHandle } from '../loop/types.ts';
import type { TranscriptStore } from '../store/transcript-store.ts';
import type { FileSystem } from '../transcript/file-system.ts';
import type { Durability } from '../transcript/session.ts';
import type { TranscriptWriter } from '../transcript/transcript-writer.ts';
import type { AgentRegistry, LoopFactory, ModelResolver } from './agent-definition.ts';
import type { AgentIdFactory } from './agent-id.ts';
import type { ChildOutcome } from './child-outcome.ts';
import type { ChildRecord } from './family.ts';

export type { LoopFactory } from './agent-definition.ts';

/**
 * Progress of the tree, for displays.
 *
 * @example
 * new Composer({ registry, onEvent: (event) => console.error(event.type, event.child.agentId) });
 */
export type ComposerEvent =
  | {
      type: 'child-start';
      parentPath: string;
      child: ChildRecord;
      run: RunHandle;
      /** True for a run taken back by `reviveChild`. */
      revived: boolean;
    }
  | { type: 'child-end'; parentPath: string; child: ChildRecord; outcome: ChildOutcome };

/**
 * Options of a {@link Composer}.
 *
 * @example
 * const options: ComposerOptions = { registry, limits: { maxConcurrent: 2, maxDepth: 1 }, durability: 'fsync' };
 */
export interface ComposerOptions {
  registry: AgentRegistry;
  limits?: {
    /** Children running at once in this composer, the whole tree counted (default 4). */
    maxConcurrent?: number;
    /** How many levels of children below a root run (default 2: children and grandchildren). */
    maxDepth?: number;
  };
  /**
   * Where the runs live: without it, transcript files — `start` takes a `path` and a child of
   * `X.jsonl` is `X.agents/<id>.jsonl`; with it, runs of this store — `start` takes a `run`
   * name and a child of run `X` is run `X.agents/<id>` (on PostgreSQL, the names the fleet's
   * children have). `durability`, `clock` and `fileSystem` are then the store's.
   */
  store?: TranscriptStore;
  /** Makes child ids; must be a pure function of the spawn call (default `agentIdForSpawn`). */
  ids?: AgentIdFactory;
  clock?: () => Date;
  durability?: Durability;
  fileSystem?: FileSystem;
  /** Turns the model specs of definitions into models (default `resolveModelSpec`). */
  resolveModel?: ModelResolver;
  /** Builds loops (default: `new Loop(options)`); tests wrap it. */
  createLoop?: LoopFactory;
  /** Passed to every loop (tests make backoff instant). */
  loopDefaults?: Pick<LoopOptions, 'sleep' | 'backoff'>;
  /** The timer of `task_wait`'s timeout; rejects or resolves when `signal` aborts. */
  sleep?: (milliseconds: number, signal: AbortSignal) => Promise<void>;
  onEvent?: (event: ComposerEvent) => void;
}

/**
 * A run the composer started or resumed: await `run` for its result.
 *
 * @example
 * const { agentId, path, run }: StartedRun = await composer.start({ path: 'runs/a.jsonl', agentType: 'main', task });
 */
export interface StartedRun {
  agentId: string;
  /** Where the run is: its transcript's path, or its run name in the composer's store. */
  path: string;
  /** The run's writer; the composer closes it when the run ends. */
  writer: TranscriptWriter;
  run: RunHandle;
}

/**
 * What `reviveChild` takes: a revived run and who it was.
 *
 * @example
 * const run = new Loop({ backends, writer: session }).run(messages); // the revived child's run
 * const child: RevivedChild = { agentId: 'researcher-1', agentType: 'researcher', label: 'Researcher',
 *   callId: 'call_1', run, sessionPath: session.path };
 * composer.reviveChild(child);
 */
export interface RevivedChild {
  agentId: string;
  agentType: string;
  label: string;
  /** The parent's spawn call that first started the child. */
  callId: string;
  run: RunHandle;
  /** Where its transcript is: its path, or its run name in the composer's store. */
  sessionPath: string;
}
