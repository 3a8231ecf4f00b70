import { setTimeout as sleepFor } from 'node:timers/promises';
import type { LanguageModel } from 'ai';
import { Loop } from '../loop/loop.ts';
import { toolDefinitionsOf } from '../loop/tool-set.ts';
import type {
  JoinResolver,
  LoopMessage,
  LoopOptions,
  RunHandle,
  ToolContext,
  ToolDefinition,
  ToolFailure,
} from '../loop/types.ts';
import { isAgentId, type JsonValue } from '../transcript/records.ts';
import type { Session, SessionOptions } from '../transcript/session.ts';
import type { TranscriptWriter } from '../transcript/transcript-writer.ts';
import { adoptChildren } from './adopt-children.ts';
import {
  type AgentDefinition,
  type AgentRegistry,
  backendsOf,
  type ModelResolver,
  modelSpecOf,
} from './agent-definition.ts';
import { type AgentIdFactory, agentIdForSpawn } from './agent-id.ts';
import { appendTask } from './child-session.ts';
import type {
  ComposerEvent,
  ComposerOptions,
  LoopFactory,
  RevivedChild,
  StartedRun,
} from './composer-types.ts';
import { resolveModelSpec } from './model-spec.ts';
import { filePlaces, type RunPlaces, storePlaces } from './run-places.ts';
import { RunTree } from './run-tree.ts';
import { type SpawnInput, spawnAgentTool } from './spawn-agent-tool.ts';
import { type RunInfo, type SpawnContext, spawnChild } from './spawn-child.ts';
import { type TaskWaitInput, taskWaitTool } from './task-wait-tool.ts';

export type { ComposerEvent, ComposerOptions, LoopFactory, RevivedChild, StartedRun };

/**
 * Gives runs children. A parent run built by the composer has `spawn_agent` (start a child
 * in the background, its transcript `<parent>.agents/<id>.jsonl`, its `session-meta` and task
 * durable before it starts) and `task_wait` (a join), and the loop hooks that deliver a child's
 * end while nobody waits (`takeDeliveries`) and answer joins left open by a crash
 * (`resolveJoin`). One composer serves a whole tree; a child's failure is a result its parent
 * reads, never an exception.
 *
 * @example
 * const composer = new Composer({ registry, limits: { maxConcurrent: 4, maxDepth: 2 } });
 * const { run } = await composer.start({ path: 'runs/main.jsonl', agentType: 'main', task });
 * const result = await run;
 * await composer.idle();
 */
export class Composer {
  readonly #registry: AgentRegistry;
  readonly #maxConcurrent: number;
  readonly #maxDepth: number;
  readonly #ids: AgentIdFactory;
  readonly #places: RunPlaces;
  readonly #inStore: boolean;
  readonly #resolveModel: ModelResolver;
  readonly #createLoop: LoopFactory;
  readonly #loopDefaults: Pick<LoopOptions, 'sleep' | 'backoff'>;
  readonly #sleep: (milliseconds: number, signal: AbortSignal) => Promise<void>;
  readonly #runs = new Map<string, RunInfo>();
  readonly #tree: RunTree;
  readonly #spawnContext: SpawnContext;

  constructor(options: ComposerOptions) {
    this.#registry = options.registry;
    this.#maxConcurrent = options.limits?.maxConcurrent ?? 4;
    this.#maxDepth = options.limits?.maxDepth ?? 2;
    if (!Number.isInteger(this.#maxConcurrent) || this.#maxConcurrent < 0) {
      throw new RangeError('limits.maxConcurrent must be a non-negative integer');
    }
    if (!Number.isInteger(this.#maxDepth) || this.#maxDepth < 0) {
      throw new RangeError('limits.maxDepth must be a non-negative integer');
    }
    this.#ids = options.ids ?? agentIdForSpawn;
    const sessionOptions: SessionOptions = {};
    if (options.durability !== undefined) sessionOptions.durability = options.durability;
    if (options.clock !== undefined) sessionOptions.clock = options.clock;
    if (options.fileSystem !== undefined) sessionOptions.fileSystem = options.fileSystem;
    this.#inStore = options.store !== undefined;
    this.#places =
      options.store === undefined ? filePlaces(sessionOptions) : storePlaces(options.store);
    this.#resolveModel = options.resolveModel ?? ((spec) => resolveModelSpec(spec));
    this.#createLoop = options.createLoop ?? ((loopOptions) => new Loop(loopOptions));
    this.#loopDefaults = options.loopDefaults ?? {};
    this.#sleep =
      options.sleep ?? ((milliseconds, signal) => sleepFor(milliseconds, undefined, { signal }));
    const treeOptions: ConstructorParameters<typeof RunTree>[0] = { places: this.#places };
    if (options.onEvent !== undefined) treeOptions.onEvent = options.onEvent;
    this.#tree = new RunTree(treeOptions);
    this.#spawnContext = {
      registry: this.#registry,
      ids: this.#ids,
      maxDepth: this.#maxDepth,
      maxConcurrent: this.#maxConcurrent,
      tree: this.#tree,
      runs: this.#runs,
      slots: { reserved: 0 },
      resolveModel: this.#resolveModel,
      places: this.#places,
      runLoop: (writer, definition, backends, depth, messages, location) =>
        this.#runLoop(writer, definition, backends, depth, messages, location),
    };
  }

  /**
   * Start a root run: create its transcript (`session-meta`, then the task as its first user
   * turn, durable) and run it — at `path` (a file), or as run `run` of the composer's `store`.
   * Throws a `TranscriptError` when the transcript cannot be created, a `ModelSpecError` for a
   * definition's unusable model, a TypeError for an unknown type, an unsafe id, or a `path`
   * given to a composer over a store (`run` to one over files). The composer closes the writer
   * when the run ends.
   *
   * @example
   * const { run } = await composer.start({ path: 'runs/main.jsonl', agentType: 'main', task });
   * console.log((await run).text);
   */
  async start(request: {
    /** The transcript's path (a composer over files). */
    path?: string;
    /** The run's name (a composer over a store). */
    run?: string;
    agentType: string;
    task: string;
    agentId?: string;
    label?: string;
  }): Promise<StartedRun> {
    const location = this.#locationOf(request);
    const definition = this.#definition(request.agentType);
    const agentId = request.agentId ?? request.agentType;
    if (!isAgentId(agentId)) throw new TypeError(`unsafe agent id ${JSON.stringify(agentId)}`);
    const backends = backendsOf(definition, this.#resolveModel);
    const label = request.label ?? request.agentType;
    const writer = await this.#places.create(location, {
      agentId,
      agentType: request.agentType,
      label,
      model: modelSpecOf(definition),
    });
    let first: LoopMessage;
    try {
      first = await appendTask(writer, request.task);
    } catch (error) {
      await writer.close().catch(() => undefined);
      throw error;
    }
    this.#runs.set(this.#places.keyOf(location), { agentId, depth: 0 });
    const run = this.#runLoop(writer, definition, backends, 0, [first], location);
    this.#tree.watch(run);
    this.#tree.keep(run.result.then(() => writer.close()).catch(() => undefined));
    return { agentId, path: location, writer, run };
  }

  /**
   * Run a revived transcript again as itself — root or child: what `Revival.revive` returned
   * (`session` and `messages`) for a composer over files; for one over a store, what
   * `reviveStoreRun` returned (`writer`, `messages`) and the run's name. A child is taken back
   * under its original id ({@link reviveChild}); a parent is told about children whose
   * `spawn_agent` result the crash lost, and children that ended unreported are delivered.
   * Revive children first. The composer closes the writer when the run ends.
   *
   * @example
   * const revived = await Revival.revive({ path, agentId: 'main', maxRevivals: 2 });
   * if (revived.ok) await (await composer.resume(revived)).run;
   */
  async resume(
    revived:
      | { session: Session; messages: LoopMessage[] }
      | { writer: TranscriptWriter; run: string; messages: LoopMessage[] },
  ): Promise<StartedRun> {
    const writer = 'session' in revived ? revived.session : revived.writer;
    const location = this.#locationOf(
      'session' in revived ? { path: revived.session.path } : { run: revived.run },
    );
    const meta = writer.state.meta;
    if (meta === null) throw new TypeError(`${location}: the transcript has no session-meta`);
    const definition = this.#definition(meta.agentType);
    const backends = backendsOf(definition, this.#resolveModel);
    const depth =
      meta.parent === undefined
        ? 0
        : 1 + (await this.#depthOf(this.#places.followLink(location, meta.parent.transcript)));
    this.#runs.set(this.#places.keyOf(location), { agentId: meta.agentId, depth });
    await adoptChildren({
      family: this.#tree.familyOf(location),
      parentAgentId: meta.agentId,
      messages: revived.messages,
      pendingJoins: writer.state.open.flatMap((open) => open.joins ?? []),
      ids: this.#ids,
      childOf: (agentId) => this.#places.childOf(location, agentId),
      outcomeOf: (agentId) => this.#tree.untracked(location, agentId),
    });
    const run = this.#runLoop(writer, definition, backends, depth, revived.messages, location);
    const ended = run.result.then(() => writer.close()).catch(() => undefined);
    if (meta.parent === undefined) {
      this.#tree.watch(run);
      this.#tree.keep(ended);
    } else {
      this.#tree.track(
        {
          agentId: meta.agentId,
          agentType: meta.agentType,
          label: meta.label,
          callId: meta.parent.callId,
          sessionPath: location,
        },
        run,
        ended,
        true,
      );
    }
    return { agentId: meta.agentId, path: location, writer, run };
  }

  /**
   * Take a revived child run back under its original id, so that its parent's pending
   * `task_wait` (or a new one) finds it and its end is delivered like any child's. The caller
   * owns the run's session. Throws a TypeError for an unsafe id or a path outside a
   * `*.agents` folder, an Error when that id is already running.
   *
   * @example
   * const child = await Revival.revive({ path, agentId: 'researcher-1', maxRevivals: 2 });
   * const callId = (await readSessionMeta(path))?.parent?.callId;
   * if (child.ok && callId !== undefined) {
   *   const run = new Loop(await composer.loopOptionsFor(child.session, child.agentType)).run(child.messages);
   *   const { agentId, agentType, label } = child;
   *   composer.reviveChild({ agentId, agentType, label, callId, run, sessionPath: child.path });
   * }
   */
  reviveChild(child: RevivedChild): void {
    if (!isAgentId(child.agentId))
      throw new TypeError(`unsafe agent id ${JSON.stringify(child.agentId)}`);
    const { run, ...record } = child;
    this.#tree.track(record, run, run.result, true);
  }

  /**
   * Say that a child cannot be revived (the revival cap, an unreadable transcript, …): a join
   * waiting for it answers with this reason instead of waiting.
   *
   * @example
   * if (!revived.ok) composer.reportUnrevivable({ sessionPath: path, reason: revived.reason, detail: revived.detail });
   */
  reportUnrevivable(report: { sessionPath: string; reason: string; detail: string }): void {
    this.#tree.reportUnrevivable(report.sessionPath, report.reason, report.detail);
  }

  /**
   * The options of a loop for `writer` with everything the composer adds: the definition's
   * backends, system prompt and tools, `spawn_agent` and `task_wait` within the limits, and
   * the `resolveJoin` / `takeDeliveries` hooks. For callers that build loops themselves. A
   * composer over a store needs the run's name (`run`); over files, the writer's path says.
   *
   * @example
   * const loop = new Loop(await composer.loopOptionsFor(session, 'researcher'));
   */
  async loopOptionsFor(
    writer: TranscriptWriter,
    agentType?: string,
    run?: string,
  ): Promise<LoopOptions> {
    const location = this.#locationOf(this.#inStore ? { run } : { path: writer.path });
    const meta = writer.state.meta;
    const definition = this.#definition(agentType ?? meta?.agentType ?? '');
    const backends = backendsOf(definition, this.#resolveModel);
    const depth = await this.#depthOf(location);
    const key = this.#places.keyOf(location);
    if (!this.#runs.has(key)) this.#runs.set(key, { agentId: meta?.agentId ?? 'main', depth });
    return this.#loopOptions(writer, definition, backends, depth, location);
  }

  /**
   * Abort every run this composer started, resumed or took back (a person pressed Ctrl-C).
   * Each stops at its next step and stays revivable; nothing more is spawned by them.
   *
   * @example
   * process.once('SIGINT', () => composer.abort('interrupted by the user'));
   */
  abort(reason?: string): void {
    this.#tree.abort(reason);
  }

  /**
   * Resolves once every run this composer started, resumed or took back has ended.
   *
   * @example
   * await composer.idle(); // every child has ended and its session is closed
   */
  async idle(): Promise<void> {
    await this.#tree.idle();
  }

  #definition(agentType: string): AgentDefinition {
    const definition = Object.hasOwn(this.#registry, agentType)
      ? this.#registry[agentType]
      : undefined;
    if (definition === undefined) {
      throw new TypeError(
        `no agent type ${JSON.stringify(agentType)} in the registry (known: ${Object.keys(this.#registry).join(', ')})`,
      );
    }
    return definition;
  }

  #runLoop(
    writer: TranscriptWriter,
    definition: AgentDefinition,
    backends: LanguageModel[],
    depth: number,
    messages: LoopMessage[],
    location: string,
  ): RunHandle {
    const createLoop = definition.createLoop ?? this.#createLoop;
    return createLoop(this.#loopOptions(writer, definition, backends, depth, location)).run(
      messages,
    );
  }

  #loopOptions(
    writer: TranscriptWriter,
    definition: AgentDefinition,
    backends: LanguageModel[],
    depth: number,
    location: string,
  ): LoopOptions {
    const family = this.#tree.familyOf(location);
    // The loop types its tool list by the narrowest input; each tool validates its own input.
    const tools = toolDefinitionsOf(
      definition.tools ?? [],
      definition.idempotency,
    ) as ToolDefinition<never>[];
    if (definition.canSpawn !== false && depth < this.#maxDepth) {
      tools.push(
        spawnAgentTool(this.#registry, (input, context) =>
          this.#spawn(location, input, context),
        ) as ToolDefinition<never>,
        taskWaitTool((input, context) =>
          this.#wait(location, input, context),
        ) as ToolDefinition<never>,
      );
    }
    const resolveJoin: JoinResolver = ({ agentIds, signal }) =>
      this.#tree.join(location, agentIds, signal);
    const options: LoopOptions = {
      ...this.#loopDefaults,
      backends,
      writer,
      tools,
      system: definition.system,
      resolveJoin,
      takeDeliveries: () => family.takeDeliveries(),
    };
    if (definition.maxTurns !== undefined) options.maxTurns = definition.maxTurns;
    if (definition.compaction !== undefined) options.compaction = definition.compaction;
    return options;
  }

  #spawn(
    parentPath: string,
    input: SpawnInput,
    context: ToolContext,
  ): Promise<JsonValue | ToolFailure> {
    return spawnChild(this.#spawnContext, parentPath, input, context);
  }

  async #wait(
    parentPath: string,
    input: TaskWaitInput,
    context: ToolContext,
  ): Promise<JsonValue | ToolFailure> {
    const seconds = input.timeoutSeconds;
    const { output, isError } = await this.#tree.join(
      parentPath,
      input.agentIds,
      context.signal,
      seconds === undefined ? undefined : (signal) => this.#sleep(seconds * 1000, signal),
    );
    return isError ? { isError: true, output } : output;
  }

  /** Where a run is: its path over files, its name over a store; a TypeError for the other. */
  #locationOf(request: { path?: string | undefined; run?: string | undefined }): string {
    const location = this.#inStore ? request.run : request.path;
    if (typeof location !== 'string' || location === '') {
      throw new TypeError(
        this.#inStore
          ? 'this composer keeps its runs in a store: name the run (run), not a path'
          : 'this composer keeps its runs in files: give the transcript path (path)',
      );
    }
    return location;
  }

  #depthOf(location: string): Promise<number> {
    return this.#places.depthOf(location, (key) => this.#runs.get(this.#places.keyOf(key))?.depth);
  }
}
