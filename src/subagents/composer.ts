import { dirname, resolve } from 'node:path';
import { setTimeout as sleepFor } from 'node:timers/promises';
import type { LanguageModel } from 'ai';
import { Loop } from '../loop/loop.ts';
import type {
  JoinResolver,
  LoopMessage,
  LoopOptions,
  RunHandle,
  ToolContext,
  ToolDefinition,
  ToolFailure,
} from '../loop/types.ts';
import type { FileSystem } from '../transcript/file-system.ts';
import { isAgentId, type JsonValue, type Message } from '../transcript/records.ts';
import { type Durability, Session, type SessionOptions } from '../transcript/session.ts';
import { SessionError } from '../transcript/session-error.ts';
import { adoptChildren } from './adopt-children.ts';
import {
  type AgentDefinition,
  type AgentRegistry,
  backendsOf,
  type ModelResolver,
  modelSpecOf,
} from './agent-definition.ts';
import { type AgentIdFactory, agentIdForSpawn } from './agent-id.ts';
import { childTranscriptPath, parentLinkPath, parentTranscriptPath } from './child-layout.ts';
import { type ChildOutcome, outcomeOfRun } from './child-outcome.ts';
import { outcomeFromTranscript, readSessionMeta } from './child-transcript.ts';
import { type ChildRecord, Family } from './family.ts';
import { joinOutput } from './join-output.ts';
import { resolveModelSpec } from './model-spec.ts';
import { type SpawnInput, spawnAgentTool } from './spawn-agent-tool.ts';
import { type TaskWaitInput, taskWaitTool } from './task-wait-tool.ts';

/** Builds a loop from its options; the default is the `Loop` of `llm-agent/loop`. */
export type LoopFactory = (options: LoopOptions) => { run(messages: LoopMessage[]): RunHandle };

/** Progress of the tree, for displays. */
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

/** Options of a {@link Composer}. */
export interface ComposerOptions {
  registry: AgentRegistry;
  limits?: {
    /** Children running at once in this composer, the whole tree counted (default 4). */
    maxConcurrent?: number;
    /** How many levels of children below a root run (default 2: children and grandchildren). */
    maxDepth?: number;
  };
  /** Makes child ids; must be a pure function of the spawn call (default {@link agentIdForSpawn}). */
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

/** A run the composer started or resumed: await `run` for its result. */
export interface StartedRun {
  agentId: string;
  path: string;
  session: Session;
  run: RunHandle;
}

/** What `reviveChild` takes: a revived run and who it was. */
export interface RevivedChild {
  agentId: string;
  agentType: string;
  label: string;
  /** The parent's spawn call that first started the child. */
  callId: string;
  run: RunHandle;
  sessionPath: string;
}

interface RunInfo {
  agentId: string;
  depth: number;
}

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
  readonly #sessionOptions: SessionOptions;
  readonly #fileSystem: FileSystem | undefined;
  readonly #resolveModel: ModelResolver;
  readonly #createLoop: LoopFactory;
  readonly #loopDefaults: Pick<LoopOptions, 'sleep' | 'backoff'>;
  readonly #sleep: (milliseconds: number, signal: AbortSignal) => Promise<void>;
  readonly #onEvent: ((event: ComposerEvent) => void) | undefined;
  readonly #families = new Map<string, Family>();
  readonly #runs = new Map<string, RunInfo>();
  readonly #unrevivable = new Map<string, { reason: string; detail: string }>();
  readonly #active = new Set<Promise<unknown>>();
  #reserved = 0;

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
    this.#fileSystem = options.fileSystem;
    this.#sessionOptions = {};
    if (options.durability !== undefined) this.#sessionOptions.durability = options.durability;
    if (options.clock !== undefined) this.#sessionOptions.clock = options.clock;
    if (options.fileSystem !== undefined) this.#sessionOptions.fileSystem = options.fileSystem;
    this.#resolveModel = options.resolveModel ?? ((spec) => resolveModelSpec(spec));
    this.#createLoop = options.createLoop ?? ((loopOptions) => new Loop(loopOptions));
    this.#loopDefaults = options.loopDefaults ?? {};
    this.#sleep =
      options.sleep ?? ((milliseconds, signal) => sleepFor(milliseconds, undefined, { signal }));
    this.#onEvent = options.onEvent;
  }

  /**
   * Start a root run: create its transcript (`session-meta`, then the task as its first user
   * turn, durable) and run it. Throws a `SessionError` when the transcript cannot be created,
   * a `ModelSpecError` for a definition's unusable model, a TypeError for an unknown type or
   * an unsafe id. The composer closes the session when the run ends.
   */
  async start(request: {
    path: string;
    agentType: string;
    task: string;
    agentId?: string;
    label?: string;
  }): Promise<StartedRun> {
    const definition = this.#definition(request.agentType);
    const agentId = request.agentId ?? request.agentType;
    if (!isAgentId(agentId)) throw new TypeError(`unsafe agent id ${JSON.stringify(agentId)}`);
    const backends = backendsOf(definition, this.#resolveModel);
    const label = request.label ?? request.agentType;
    const session = await Session.create(
      request.path,
      { agentId, agentType: request.agentType, label, model: modelSpecOf(definition) },
      this.#sessionOptions,
    );
    let first: LoopMessage;
    try {
      first = await this.#appendTask(session, request.task);
    } catch (error) {
      await session.close().catch(() => undefined);
      throw error;
    }
    this.#runs.set(resolve(request.path), { agentId, depth: 0 });
    const run = this.#runLoop(session, definition, backends, 0, [first]);
    this.#keep(run.result.then(() => session.close()).catch(() => undefined));
    return { agentId, path: request.path, session, run };
  }

  /**
   * Run a revived transcript again as itself — root or child. `session` and `messages` are
   * what `Revival.revive` returned. A child is taken back under its original id
   * ({@link reviveChild}); a parent is told about children whose `spawn_agent` result the
   * crash lost, and children that ended unreported are delivered. Revive children first.
   * The composer closes the session when the run ends.
   */
  async resume(revived: { session: Session; messages: LoopMessage[] }): Promise<StartedRun> {
    const { session } = revived;
    const meta = session.state.meta;
    if (meta === null) throw new TypeError(`${session.path}: the transcript has no session-meta`);
    const definition = this.#definition(meta.agentType);
    const backends = backendsOf(definition, this.#resolveModel);
    const depth =
      meta.parent === undefined
        ? 0
        : 1 + (await this.#depthOf(this.#parentOf(session.path, meta.parent.transcript)));
    this.#runs.set(resolve(session.path), { agentId: meta.agentId, depth });
    await adoptChildren({
      family: this.#familyOf(session.path),
      parentAgentId: meta.agentId,
      messages: revived.messages,
      pendingJoins: session.state.open.flatMap((open) => open.joins ?? []),
      ids: this.#ids,
      outcomeOf: (agentId) => this.#untracked(session.path, agentId),
    });
    const run = this.#runLoop(session, definition, backends, depth, revived.messages);
    const ended = run.result.then(() => session.close()).catch(() => undefined);
    if (meta.parent === undefined) {
      this.#keep(ended);
    } else {
      this.#track(
        {
          agentId: meta.agentId,
          agentType: meta.agentType,
          label: meta.label,
          callId: meta.parent.callId,
          sessionPath: session.path,
        },
        run,
        ended,
        true,
      );
    }
    return { agentId: meta.agentId, path: session.path, session, run };
  }

  /**
   * Take a revived child run back under its original id, so that its parent's pending
   * `task_wait` (or a new one) finds it and its end is delivered like any child's. The caller
   * owns the run's session. Throws a TypeError for an unsafe id or a path outside a
   * `*.agents` folder, an Error when that id is already running.
   *
   * @example
   * composer.reviveChild({ agentId: revived.agentId, agentType: revived.agentType,
   *   label: revived.label, callId: meta.parent.callId, run, sessionPath: revived.path });
   */
  reviveChild(child: RevivedChild): void {
    if (!isAgentId(child.agentId))
      throw new TypeError(`unsafe agent id ${JSON.stringify(child.agentId)}`);
    const { run, ...record } = child;
    this.#track(record, run, run.result, true);
  }

  /**
   * Say that a child cannot be revived (the revival cap, an unreadable transcript, …): a join
   * waiting for it answers with this reason instead of waiting.
   *
   * @example
   * if (!revived.ok) composer.reportUnrevivable({ sessionPath: path, reason: revived.reason, detail: revived.detail });
   */
  reportUnrevivable(report: { sessionPath: string; reason: string; detail: string }): void {
    this.#unrevivable.set(resolve(report.sessionPath), {
      reason: report.reason,
      detail: report.detail,
    });
  }

  /**
   * The options of a loop for `session` with everything the composer adds: the definition's
   * backends, system prompt and tools, `spawn_agent` and `task_wait` within the limits, and
   * the `resolveJoin` / `takeDeliveries` hooks. For callers that build loops themselves.
   */
  async loopOptionsFor(session: Session, agentType?: string): Promise<LoopOptions> {
    const meta = session.state.meta;
    const definition = this.#definition(agentType ?? meta?.agentType ?? '');
    const backends = backendsOf(definition, this.#resolveModel);
    const depth = await this.#depthOf(session.path);
    if (!this.#runs.has(resolve(session.path))) {
      this.#runs.set(resolve(session.path), { agentId: meta?.agentId ?? 'main', depth });
    }
    return this.#loopOptions(session, definition, backends, depth);
  }

  /** Resolves once every run this composer started, resumed or took back has ended. */
  async idle(): Promise<void> {
    while (this.#active.size > 0) await Promise.all([...this.#active]);
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
    session: Session,
    definition: AgentDefinition,
    backends: LanguageModel[],
    depth: number,
    messages: LoopMessage[],
  ): RunHandle {
    return this.#createLoop(this.#loopOptions(session, definition, backends, depth)).run(messages);
  }

  #loopOptions(
    session: Session,
    definition: AgentDefinition,
    backends: LanguageModel[],
    depth: number,
  ): LoopOptions {
    const family = this.#familyOf(session.path);
    const tools: ToolDefinition<never>[] = [...(definition.tools ?? [])];
    if (definition.canSpawn !== false && depth < this.#maxDepth) {
      tools.push(
        spawnAgentTool(this.#registry, (input, context) =>
          this.#spawn(session.path, input, context),
        ) as ToolDefinition<never>,
        taskWaitTool((input, context) =>
          this.#wait(family, input, context),
        ) as ToolDefinition<never>,
      );
    }
    const resolveJoin: JoinResolver = async ({ agentIds, signal }) => {
      const stop = stopWhen(signal);
      try {
        const found = await family.join(agentIds, {
          untracked: (agentId) => this.#untracked(session.path, agentId),
          stop: stop.promise,
        });
        return joinOutput(found.joined, found.stillRunning);
      } finally {
        stop.dispose();
      }
    };
    const options: LoopOptions = {
      ...this.#loopDefaults,
      backends,
      session,
      tools,
      system: definition.system,
      resolveJoin,
      takeDeliveries: () => family.takeDeliveries(),
    };
    if (definition.maxTurns !== undefined) options.maxTurns = definition.maxTurns;
    if (definition.compaction !== undefined) options.compaction = definition.compaction;
    return options;
  }

  async #spawn(
    parentPath: string,
    input: SpawnInput,
    context: ToolContext,
  ): Promise<JsonValue | ToolFailure> {
    const definition = Object.hasOwn(this.#registry, input.agentType)
      ? this.#registry[input.agentType]
      : undefined;
    if (definition === undefined) {
      return failure(
        `Unknown agent type ${JSON.stringify(input.agentType)}. The types are: ${Object.keys(this.#registry).join(', ')}.`,
      );
    }
    const parent = this.#runs.get(resolve(parentPath));
    const depth = parent?.depth ?? 0;
    if (depth + 1 > this.#maxDepth) {
      return failure(
        `Cannot spawn: this run is at depth ${depth} and the maximum depth is ${this.#maxDepth}.`,
      );
    }
    let agentId: string;
    try {
      agentId = this.#ids({
        agentType: input.agentType,
        callId: context.callId,
        parentAgentId: parent?.agentId ?? 'main',
      });
    } catch (error) {
      return failure(`Cannot make an agent id for this call: ${describe(error)}`);
    }
    if (typeof agentId !== 'string' || !isAgentId(agentId)) {
      return failure(
        `The agent id ${JSON.stringify(agentId)} made for this call is not safe as a file name; nothing was started.`,
      );
    }
    const family = this.#familyOf(parentPath);
    const label = input.label ?? input.agentType;
    const known = family.child(agentId);
    if (known !== undefined) {
      return {
        agentId,
        agentType: input.agentType,
        label,
        status: known.outcome === null ? 'running' : 'ended',
      };
    }
    if (this.#running() + this.#reserved >= this.#maxConcurrent) {
      return failure(
        `Cannot spawn: ${this.#maxConcurrent} children are already running, the most allowed at once. Wait for one with task_wait, then try again.`,
      );
    }
    this.#reserved += 1;
    try {
      return await this.#create(
        parentPath,
        depth + 1,
        definition,
        {
          agentId,
          agentType: input.agentType,
          label,
          callId: context.callId,
          sessionPath: childTranscriptPath(parentPath, agentId),
        },
        input.task,
      );
    } finally {
      this.#reserved -= 1;
    }
  }

  async #create(
    parentPath: string,
    depth: number,
    definition: AgentDefinition,
    child: ChildRecord,
    task: string,
  ): Promise<JsonValue | ToolFailure> {
    let backends: LanguageModel[];
    try {
      backends = backendsOf(definition, this.#resolveModel);
    } catch (error) {
      return failure(`Cannot start a ${child.agentType}: ${describe(error)}`);
    }
    const started = { agentId: child.agentId, agentType: child.agentType, label: child.label };
    let session: Session;
    try {
      session = await Session.create(
        child.sessionPath,
        {
          ...started,
          model: modelSpecOf(definition),
          parent: {
            transcript: parentLinkPath(child.sessionPath, parentPath),
            callId: child.callId,
          },
        },
        this.#sessionOptions,
      );
    } catch (error) {
      if (SessionError.isInstance(error) && (error.code === 'exists' || error.code === 'locked')) {
        // The id is derived from this very call, so the transcript is this call's child, made
        // before a crash lost the call's result: the same child, never a second one.
        return {
          ...started,
          status: 'already-started',
          note: `This call had already started ${child.agentId}; join it with task_wait.`,
        };
      }
      return failure(`Cannot create the child's transcript: ${describe(error)}`);
    }
    let first: LoopMessage;
    try {
      first = await this.#appendTask(session, task);
    } catch (error) {
      await session.close().catch(() => undefined);
      return failure(`Cannot write the child's task: ${describe(error)}`);
    }
    this.#runs.set(resolve(child.sessionPath), { agentId: child.agentId, depth });
    let run: RunHandle;
    try {
      run = this.#runLoop(session, definition, backends, depth, [first]);
    } catch (error) {
      await session.close().catch(() => undefined);
      return failure(`Cannot start ${child.agentId}: ${describe(error)}`);
    }
    this.#track(
      child,
      run,
      run.result.then(() => session.close()),
      false,
    );
    return { ...started, status: 'running' };
  }

  async #wait(
    family: Family,
    input: TaskWaitInput,
    context: ToolContext,
  ): Promise<JsonValue | ToolFailure> {
    const stop = stopWhen(
      context.signal,
      input.timeoutSeconds === undefined
        ? undefined
        : (signal) => this.#sleep((input.timeoutSeconds as number) * 1000, signal),
    );
    try {
      const found = await family.join(input.agentIds, {
        untracked: (agentId) => this.#untracked(family.parentPath, agentId),
        stop: stop.promise,
      });
      const { output, isError } = joinOutput(found.joined, found.stillRunning);
      return isError ? { isError: true, output } : output;
    } finally {
      stop.dispose();
    }
  }

  /** Track a child's run; `closed` settles when its session is released. */
  #track(child: ChildRecord, run: RunHandle, closed: Promise<unknown>, revived: boolean): void {
    const parentPath = parentTranscriptPath(child.sessionPath);
    if (parentPath === null)
      throw new TypeError(`${child.sessionPath} is not inside a *.agents folder`);
    const family = this.#familyOf(parentPath);
    const ended = (async (): Promise<ChildOutcome> => {
      let outcome: ChildOutcome;
      try {
        outcome = outcomeOfRun(await run.result);
      } catch (error) {
        outcome = { status: 'failed', reason: 'failed', detail: describe(error) };
      }
      await closed.catch(() => undefined);
      this.#emit({ type: 'child-end', parentPath, child, outcome });
      return outcome;
    })();
    family.track(child, ended);
    this.#keep(ended);
    this.#emit({ type: 'child-start', parentPath, child, run, revived });
  }

  async #appendTask(session: Session, task: string): Promise<LoopMessage> {
    const message: Message = { role: 'user', content: [{ type: 'text', text: task }] };
    const record = await session.appendDurable({ type: 'message', ...message });
    return { ...message, seq: record.seq };
  }

  #untracked(parentPath: string, agentId: string): Promise<ChildOutcome> {
    if (!isAgentId(agentId)) {
      return Promise.resolve({
        status: 'failed',
        reason: 'unknown-agent',
        detail: `${JSON.stringify(agentId)} is not an agent id`,
      });
    }
    const path = childTranscriptPath(parentPath, agentId);
    const reported = this.#unrevivable.get(resolve(path));
    if (reported !== undefined) {
      return Promise.resolve({
        status: 'failed',
        reason: reported.reason,
        detail: `child ${agentId} could not be revived: ${reported.detail}`,
      });
    }
    return outcomeFromTranscript(agentId, path, this.#fileSystem);
  }

  #familyOf(parentPath: string): Family {
    const key = resolve(parentPath);
    let family = this.#families.get(key);
    if (family === undefined) {
      family = new Family(parentPath);
      this.#families.set(key, family);
    }
    return family;
  }

  #running(): number {
    let count = 0;
    for (const family of this.#families.values()) count += family.running;
    return count;
  }

  #parentOf(childPath: string, link: string): string {
    return resolve(dirname(resolve(childPath)), link);
  }

  /** A run's depth: known for runs built here, else counted along the `session-meta` parent links. */
  async #depthOf(path: string): Promise<number> {
    let current = resolve(path);
    for (let hops = 0; hops < 64; hops += 1) {
      const known = this.#runs.get(current);
      if (known !== undefined) return known.depth + hops;
      const meta = await readSessionMeta(current, this.#fileSystem);
      if (meta?.parent === undefined) return hops;
      current = this.#parentOf(current, meta.parent.transcript);
    }
    return 64;
  }

  #keep(promise: Promise<unknown>): void {
    const kept = promise.catch(() => undefined).finally(() => this.#active.delete(kept));
    this.#active.add(kept);
  }

  #emit(event: ComposerEvent): void {
    try {
      this.#onEvent?.(event);
    } catch {
      // A display's failure must not change what the tree does.
    }
  }
}

function failure(text: string): ToolFailure {
  return { isError: true, output: text };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A promise that resolves when `signal` aborts or the optional timer ends; dispose it after. */
function stopWhen(
  signal: AbortSignal,
  timer?: (signal: AbortSignal) => Promise<void>,
): { promise: Promise<void>; dispose: () => void } {
  const local = new AbortController();
  const promises: Promise<void>[] = [
    new Promise<void>((done) => {
      if (signal.aborted) done();
      signal.addEventListener('abort', () => done(), { once: true, signal: local.signal });
    }),
  ];
  if (timer !== undefined) promises.push(timer(local.signal).catch(() => undefined));
  return { promise: Promise.race(promises), dispose: () => local.abort() };
}
